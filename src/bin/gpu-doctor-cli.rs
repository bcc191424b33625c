//! `gpu-doctor-cli`: the headless twin of the app. Never opens a window; works over SSH and in
//! containers.

use clap::Parser;
use gpu_doctor::cli::{self, Command, exit};

#[derive(Parser)]
#[command(name = "gpu-doctor-cli", version, about = "Find out why an NVIDIA GPU is idle, slow or not working (headless).", after_help = exit::HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

fn main() -> std::process::ExitCode {
    let args = Cli::parse();
    cli::run(&args.command)
}
