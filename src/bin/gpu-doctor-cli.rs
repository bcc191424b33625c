//! `gpu-doctor-cli`: the headless twin of the app. Never opens a window; works over SSH and in
//! containers.

use clap::Parser;
use gpu_doctor::cli::{self, Cli};

fn main() -> std::process::ExitCode {
    gpu_doctor::telemetry::libprobe::run_library_probe();
    let args = Cli::parse();
    gpu_doctor::i18n::set(gpu_doctor::i18n::choose(args.lang, None));
    let code = cli::run(&args.command);
    // A library load that never returned (a blocking file named as the NVIDIA library, a dead
    // mount) holds the dynamic loader's lock: the normal exit would wait for it forever in the
    // exit handlers. Everything is printed; end now.
    if gpu_doctor::telemetry::libprobe::loading_library() {
        gpu_doctor::cli::exit_now(&code);
    }
    code
}
