//! The integration tests, in one binary: each file here is one area's tests (`cli`, `gui`,
//! `fake_nvml`, ...), run as `cargo test --test suite AREA::`. One binary links the crate once and
//! lets the areas' tests share the two cores, where twenty binaries linked it twenty times and ran
//! one after another. `gui_zh` switches the window's language inside a language scope of its own
//! test thread (`i18n::scoped`), so the other areas keep reading English. One area keeps its own
//! binary: `screenshot` drives the real window under Xvfb with a software renderer that takes
//! every core.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

#[path = "../common/mod.rs"]
mod common;

mod bottleneck_fixtures;
mod bug_reports;
mod check_fixtures;
mod cli;
mod cli_zh;
mod differential;
mod fake_nvml;
mod fleet;
mod gui;
mod gui_chooser;
mod gui_import;
mod gui_keys;
mod gui_layout;
mod gui_processes;
mod gui_remote;
#[cfg(feature = "gui")]
mod gui_zh;
mod hostile;
mod i18n;
mod recording;
mod remote_ssh;
mod report;
mod run;
mod smoke;
mod tune;
mod tune_signals;
mod units;
mod vram_accuracy;
