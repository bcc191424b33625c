//! Writes what the packages install besides the binaries, generated from the binaries' own
//! argument definitions so they never drift: man pages (section 1, one per binary and one per
//! subcommand, `gpu-doctor-cli-check.1` as git does) and bash, zsh and fish completions.
//!
//! `cargo run --example package-assets -- OUT_DIR` writes `OUT_DIR/man/*.1` and
//! `OUT_DIR/completions/{gpu-doctor.bash,_gpu-doctor,gpu-doctor.fish,...}`.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let out = PathBuf::from(std::env::args_os().nth(1).ok_or("usage: package-assets OUT_DIR")?);
    let (man, completions) = (out.join("man"), out.join("completions"));
    std::fs::create_dir_all(&man)?;
    std::fs::create_dir_all(&completions)?;
    // The app's page lists its subcommands (the same as the CLI's); the CLI has a page for each.
    for (mut cmd, pages_per_subcommand) in
        [(gpu_doctor::cli::Cli::command(), true), (gpu_doctor::gui::GuiArgs::command(), false)]
    {
        cmd.build();
        write_man(&cmd, cmd.get_name(), &man, pages_per_subcommand)?;
        let name = cmd.get_name().to_string();
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            clap_complete::generate_to(shell, &mut cmd, &name, &completions)?;
        }
    }
    Ok(())
}

/// The page of `cmd` as `name.1`, then one page per subcommand (`name-sub.1`).
fn write_man(cmd: &clap::Command, name: &str, dir: &Path, subcommands: bool) -> Result<()> {
    let page = cmd.clone().display_name(name.to_string());
    let mut buf = Vec::new();
    clap_mangen::Man::new(page).render(&mut buf)?;
    std::fs::write(dir.join(format!("{name}.1")), buf)?;
    for sub in cmd.get_subcommands().filter(|s| subcommands && !s.is_hide_set()) {
        write_man(sub, &format!("{name}-{}", sub.get_name()), dir, false)?;
    }
    Ok(())
}
