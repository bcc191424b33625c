//! What is measured and how: sample types, GPU sources (NVML, demo), host metrics, the sampler
//! threads and the bounded history.
//!
//! Data flows one way: a [`source::GpuSource`] and a [`host::HostSource`] are read by the
//! [`sampler::Sampler`] threads, which publish an immutable [`snapshot::Snapshot`] and append to
//! the [`history::History`]; the GUI, the CLI and tests only read those. What each per-GPU metric
//! is (unit, wording, chart, CSV column, Prometheus name, how it is read) is one table,
//! [`metric::GPU_METRICS`].

// The crates below this one under the names the code has always used for them (`crate::units`,
// `crate::telemetry::…`, `crate::tr!`; the ground's through `ground!`), and this crate under its
// own module name where it has one: a module keeps its paths whichever crate it lives in. (Not
// every crate uses every name.)
#[allow(unused_imports)]
use crate as telemetry;
gpu_doctor_core::ground!();

pub mod demo;
pub mod endproc;
pub mod history;
pub mod host;
pub mod host_metric;
pub mod interval;
pub mod libprobe;
pub mod live;
pub mod metric;
pub mod nvml;
pub mod open;
pub mod pci;
pub mod procfs;
pub mod proctree;
pub mod reading;
pub mod recording;
pub mod remote;
pub mod sample;
pub mod sampler;
pub mod select;
pub mod snapshot;
pub mod source;
pub mod throttle;
pub mod wincpu;
#[cfg(windows)]
pub mod winpci;

pub use open::SourceOptions;
pub use reading::Reading;
pub use source::GpuSource;
