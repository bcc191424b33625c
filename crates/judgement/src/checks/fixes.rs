//! Fix steps that depend on the Linux distribution (read from `/etc/os-release`): installing the
//! driver, rebuilding the initramfs, keeping nouveau away, signing keys for Secure Boot. Every
//! [`FixStep::Command`] here is one command that runs as it stands on that distribution; where the
//! distribution is unknown (no os-release, e.g. an old capture) the steps are words only.
//!
//! Sources: Ubuntu Server docs, "NVIDIA drivers installation" (`ubuntu-drivers install`); the Debian
//! wiki, NvidiaGraphicsDrivers (contrib/non-free components, `nvidia-driver`,
//! `firmware-misc-nonfree`); RPM Fusion's NVIDIA howto (<https://rpmfusion.org/Howto/NVIDIA>:
//! `akmod-nvidia`, `xorg-x11-drv-nvidia-cuda`, the akmods signing key); the Arch wiki, NVIDIA
//! (`nvidia-open` since the 590 driver, legacy branch for pre-Turing GPUs); NVIDIA's driver
//! download page (<https://www.nvidia.com/Download/index.aspx>).

use crate::diagnose::FixStep;
use crate::diagnose::parse::Distro;
use crate::msg;

fn text(t: crate::i18n::Message) -> FixStep {
    FixStep::Text(t)
}

fn cmd(c: &str) -> FixStep {
    FixStep::Command(c.to_string())
}

/// Installing the NVIDIA driver from the distribution's packages.
pub(super) fn install_driver(d: Distro) -> Vec<FixStep> {
    let reboot = text(msg!("Reboot once the installation has finished."));
    match d {
        Distro::Ubuntu => {
            vec![text(msg!("Install the recommended NVIDIA driver:")), cmd("sudo ubuntu-drivers install"), reboot]
        }
        Distro::Debian => vec![
            text(msg!(
                "Enable the contrib, non-free and non-free-firmware components for your release in /etc/apt/sources.list (or /etc/apt/sources.list.d/debian.sources), and install the kernel headers (linux-headers-amd64 on 64-bit PCs)."
            )),
            cmd("sudo apt update"),
            cmd("sudo apt install nvidia-driver firmware-misc-nonfree"),
            reboot,
        ],
        Distro::Fedora => vec![
            text(msg!("Enable the RPM Fusion free and nonfree repositories (https://rpmfusion.org/Configuration).")),
            cmd("sudo dnf install akmod-nvidia"),
            text(msg!("For CUDA and nvidia-smi, also:")),
            cmd("sudo dnf install xorg-x11-drv-nvidia-cuda"),
            text(msg!("Wait a few minutes for the kernel module to be built, then reboot.")),
        ],
        Distro::Arch => vec![
            cmd("sudo pacman -S nvidia-open"),
            text(msg!(
                "GPUs older than Turing (GeForce GTX 10 series and before) need the legacy nvidia-580xx-dkms package from the AUR instead."
            )),
            reboot,
        ],
        Distro::RedHat | Distro::Suse | Distro::Unknown => vec![
            text(msg!(
                "Install your distribution's NVIDIA driver package (it is rebuilt on kernel updates), or NVIDIA's driver for your GPU from https://www.nvidia.com/Download/index.aspx."
            )),
            reboot,
        ],
    }
}

/// Rebuilding the initramfs so a module change applies at boot.
pub(super) fn rebuild_initramfs(d: Distro) -> FixStep {
    match d {
        Distro::Ubuntu | Distro::Debian => cmd("sudo update-initramfs -u"),
        Distro::Fedora | Distro::RedHat | Distro::Suse => cmd("sudo dracut --force"),
        Distro::Arch => cmd("sudo mkinitcpio -P"),
        Distro::Unknown => text(msg!(
            "Rebuild the initramfs with your distribution's tool (update-initramfs -u, dracut --force or mkinitcpio -P)."
        )),
    }
}

/// Keeping nouveau off the GPU: blacklist it, rebuild the initramfs, reboot.
pub(super) fn blacklist_nouveau(d: Distro) -> Vec<FixStep> {
    vec![
        text(msg!("Stop the nouveau driver from loading at boot:")),
        cmd(
            "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
        ),
        rebuild_initramfs(d),
        cmd("sudo reboot"),
    ]
}

/// Rebuilding the kernel module for the running kernel (after a kernel update).
pub(super) fn rebuild_module(d: Distro) -> Vec<FixStep> {
    match d {
        Distro::Ubuntu | Distro::Debian => vec![
            text(msg!(
                "After a kernel update: install the headers for the running kernel, rebuild the module, then reboot."
            )),
            cmd("sudo apt install linux-headers-$(uname -r)"),
            cmd("sudo dkms autoinstall"),
        ],
        Distro::Fedora => vec![
            text(msg!("After a kernel update: rebuild the module for the running kernel, then reboot.")),
            cmd("sudo akmods --force"),
        ],
        // Every family gets the commands that install the headers and rebuild, not only words:
        // the kernel-devel package of the running kernel (RHEL and clones), the headers of the
        // kernel package (Arch: linux, linux-lts... each has its -headers), SUSE's devel package.
        Distro::RedHat => vec![
            text(msg!(
                "After a kernel update: install the headers for the running kernel, rebuild the module, then reboot."
            )),
            cmd("sudo dnf install kernel-devel-$(uname -r)"),
            cmd("sudo dkms autoinstall"),
        ],
        Distro::Arch => vec![
            text(msg!(
                "After a kernel update: install the headers of your kernel package (linux-headers for linux, linux-lts-headers for linux-lts), rebuild the module, then reboot."
            )),
            cmd("sudo pacman -S --needed linux-headers"),
            cmd("sudo dkms autoinstall"),
        ],
        Distro::Suse => vec![
            text(msg!(
                "After a kernel update: install the headers for the running kernel, rebuild the module, then reboot."
            )),
            cmd("sudo zypper install kernel-default-devel"),
            cmd("sudo dkms autoinstall"),
        ],
        Distro::Unknown => vec![
            text(msg!(
                "After a kernel update: install the headers for the running kernel with the distribution's package manager, rebuild the module (DKMS), then reboot:"
            )),
            cmd("sudo dkms autoinstall"),
        ],
    }
}

/// Making Secure Boot accept the module: signed packages, or enrolling the signing key.
pub(super) fn secure_boot(d: Distro) -> Vec<FixStep> {
    let disable = text(msg!("Or turn Secure Boot off in the firmware (UEFI) settings."));
    let enroll = text(msg!("Reboot and finish the blue 'MOK management' screen with the password you chose."));
    match d {
        Distro::Ubuntu => vec![
            text(msg!("Install the driver from Ubuntu's signed packages:")),
            cmd("sudo ubuntu-drivers install"),
            text(msg!("Or enroll the key DKMS signs the module with:")),
            cmd("sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"),
            enroll,
            disable,
        ],
        Distro::Debian => vec![
            text(msg!("Enroll the key DKMS signs the module with:")),
            cmd("sudo mokutil --import /var/lib/dkms/mok.pub"),
            enroll,
            disable,
        ],
        Distro::Fedora => vec![
            text(msg!("Enroll the key akmods signs the module with:")),
            cmd("sudo mokutil --import /etc/pki/akmods/certs/public_key.der"),
            enroll,
            disable,
        ],
        _ => vec![
            text(msg!(
                "Install the driver from your distribution's signed packages, or enroll the key the module is signed with (mokutil --import <key>) and confirm it at the next boot."
            )),
            disable,
        ],
    }
}

/// Removing every NVIDIA driver installation of a Linux host (packages of every branch and a
/// runfile's), before one is installed from one source: what mixed installations need, where a
/// reboot loads the same mix again.
pub(super) fn remove_every_driver(d: Distro) -> Vec<FixStep> {
    let run_file =
        text(msg!("If a driver came from NVIDIA's .run installer, remove it first with: sudo nvidia-uninstall"));
    let check = [text(msg!("Then no nvidia module may be left in DKMS:")), cmd("dkms status")];
    let mut steps = match d {
        Distro::Ubuntu | Distro::Debian => vec![
            run_file,
            text(msg!("Remove the driver packages of every branch:")),
            cmd(
                "sudo apt-get remove --purge 'nvidia-driver-*' 'nvidia-[0-9]*' 'nvidia-dkms-*' 'nvidia-kernel-*' 'libnvidia-*' 'nvidia-utils-*'",
            ),
        ],
        Distro::Fedora | Distro::RedHat => vec![
            run_file,
            text(msg!("Remove the driver packages of every branch:")),
            cmd("sudo dnf remove 'nvidia-driver*' 'xorg-x11-drv-nvidia*' 'akmod-nvidia*' 'kmod-nvidia*'"),
        ],
        Distro::Arch => vec![
            run_file,
            text(msg!("Remove the driver packages of every branch:")),
            cmd("sudo pacman -Rns nvidia nvidia-open nvidia-dkms nvidia-utils"),
        ],
        _ => vec![
            run_file,
            text(msg!(
                "Remove every NVIDIA driver package with the distribution's package manager (names starting with nvidia-driver, nvidia-dkms, kmod-nvidia, libnvidia, nvidia-utils)."
            )),
        ],
    };
    steps.extend(check);
    steps
}

/// Removing a Linux NVIDIA driver installed inside WSL (the driver must come from Windows; the CUDA
/// toolkit's own packages can stay). Source: NVIDIA's CUDA on WSL User Guide ("do not install any
/// Linux display driver in WSL"; use the WSL-Ubuntu toolkit package, which has no driver).
pub(super) fn remove_linux_driver_in_wsl(d: Distro) -> Vec<FixStep> {
    let run_file =
        text(msg!("If the driver came from NVIDIA's .run installer instead, remove it with: sudo nvidia-uninstall"));
    match d {
        Distro::Ubuntu | Distro::Debian => vec![
            text(msg!("Remove the Linux driver packages (the CUDA toolkit can stay):")),
            cmd("sudo apt-get remove --purge 'nvidia-driver-*' 'libnvidia-*' 'nvidia-utils-*' cuda-drivers"),
            cmd("sudo ldconfig"),
            run_file,
        ],
        Distro::Fedora | Distro::RedHat => vec![
            text(msg!("Remove the Linux driver packages (the CUDA toolkit can stay):")),
            cmd("sudo dnf remove 'nvidia-driver*' 'xorg-x11-drv-nvidia*' 'akmod-nvidia*'"),
            cmd("sudo ldconfig"),
            run_file,
        ],
        Distro::Arch => vec![
            text(msg!("Remove the Linux driver packages:")),
            cmd("sudo pacman -Rns nvidia-utils"),
            cmd("sudo ldconfig"),
            run_file,
        ],
        _ => vec![
            text(msg!(
                "Remove the Linux NVIDIA driver packages with the distribution's package manager (names starting with nvidia-driver, libnvidia, nvidia-utils); the CUDA toolkit can stay. Then run: sudo ldconfig"
            )),
            run_file,
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(steps: &[FixStep]) -> Vec<&str> {
        steps
            .iter()
            .filter_map(|s| match s {
                FixStep::Command(c) => Some(c.as_str()),
                FixStep::Text(_) => None,
            })
            .collect()
    }

    /// Issue 53, item 22: a module to rebuild after a kernel update gets the commands that do it on
    /// every distribution family, never words alone (where the only command left was a reboot).
    #[test]
    fn rebuilding_the_module_has_commands_on_every_distribution() {
        for d in [
            Distro::Ubuntu,
            Distro::Debian,
            Distro::Fedora,
            Distro::RedHat,
            Distro::Suse,
            Distro::Arch,
            Distro::Unknown,
        ] {
            let steps = rebuild_module(d);
            let c = commands(&steps);
            assert!(c.iter().any(|c| c.contains("dkms autoinstall") || c.contains("akmods")), "{d:?}: {c:?}");
        }
        assert!(commands(&rebuild_module(Distro::RedHat)).contains(&"sudo dnf install kernel-devel-$(uname -r)"));
    }

    #[test]
    fn ubuntu_drivers_only_on_ubuntu() {
        assert!(commands(&install_driver(Distro::Ubuntu)).contains(&"sudo ubuntu-drivers install"));
        for d in [Distro::Debian, Distro::Fedora, Distro::Arch, Distro::RedHat, Distro::Suse, Distro::Unknown] {
            for s in install_driver(d).iter().chain(&secure_boot(d)) {
                assert!(!s.en().contains("ubuntu-drivers"), "{d:?}: {s:?}");
            }
        }
        assert!(commands(&install_driver(Distro::Unknown)).is_empty());
        assert!(commands(&blacklist_nouveau(Distro::Fedora)).contains(&"sudo dracut --force"));
    }
}
