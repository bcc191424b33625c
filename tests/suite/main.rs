//! The integration tests, in one binary: each file here is one area's tests (`cli`, `gui`,
//! `fake_nvml`, ...), run as `cargo test --test suite AREA::`. One binary links the crate once and
//! lets the areas' tests share the two cores, where twenty binaries linked it twenty times and ran
//! one after another. Two areas keep their own binary: `gui_zh` switches the process's language
//! (every other test here reads English in-process), and `screenshot` drives the real window under
//! Xvfb with a software renderer that takes every core.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test reports a failure

#[path = "../common/mod.rs"]
mod common;

mod bottleneck_fixtures;
mod bug_reports;
mod check_fixtures;
mod cli;
mod cli_zh;
mod fake_nvml;
mod fleet;
mod gui;
mod gui_import;
mod gui_remote;
mod hostile;
mod i18n;
mod recording;
mod remote_ssh;
mod report;
mod run;
mod smoke;
mod units;
mod vram_accuracy;
