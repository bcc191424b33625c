//! Documented exit codes of both binaries (also listed in the README and in `--help`).

/// Everything worked.
pub const OK: u8 = 0;
/// A runtime error (for example an output could not be written).
pub const ERROR: u8 = 1;
/// The command line was wrong (clap uses this code too).
pub const BAD_ARGS: u8 = 2;
/// No NVIDIA GPU or driver could be used; host data may still have been printed.
pub const NO_GPU: u8 = 3;
/// The window could not be opened (no display, or no renderer works); use `gpu-doctor-cli`.
pub const NO_DISPLAY: u8 = 4;

/// The GPU driver stopped answering (an NVML call did not return in time).
pub const NOT_RESPONDING: u8 = 5;

/// `check`: the worst verdict was a warning.
pub const CHECK_WARN: u8 = 6;
/// `check`: at least one check failed.
pub const CHECK_FAIL: u8 = 7;

/// The exit-code table as shown in `--help`.
pub const HELP: &str = "Exit codes: 0 ok; 1 runtime error; 2 bad arguments; 3 no NVIDIA GPU/driver usable; 4 window could not be opened (use gpu-doctor-cli); 5 the GPU driver stopped answering (smoke: the test hung); 6 check/smoke found warnings; 7 check/smoke found failures. run and scale return the command's own exit code (127 not found, 126 not executable, 128+N killed by signal N); tune returns 0 with an answer, 1 when no setting worked, 130 when interrupted.";
