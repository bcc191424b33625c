//! `gpu-doctor-cli`: the headless twin of the app. Never opens a window; works over SSH and in
//! containers.

use clap::{CommandFactory, FromArgMatches};
use gpu_doctor::cli::{self, Cli};
use gpu_doctor::i18n;

fn main() -> std::process::ExitCode {
    gpu_doctor::relaunch::enter_child_if_asked();
    // The language first, so that --help and the usage errors' hints are in it already.
    i18n::set(i18n::choose(i18n::lang_in_args(std::env::args_os()), None));
    let matches = i18n::localize_command(Cli::command()).try_get_matches().unwrap_or_else(|e| cli::usage_exit(&e));
    let args = Cli::from_arg_matches(&matches).unwrap_or_else(|e| cli::usage_exit(&e));
    let code = cli::run(&cli::Launch::resolve(args.lang.lang, &args.command), &args.command);
    // A library load that never returned (a blocking file named as the NVIDIA library, a dead
    // mount) holds the dynamic loader's lock: the normal exit would wait for it forever in the
    // exit handlers. Everything is printed; end now.
    if gpu_doctor::telemetry::libprobe::loading_library() {
        gpu_doctor::cli::exit_now(&code);
    }
    code
}
