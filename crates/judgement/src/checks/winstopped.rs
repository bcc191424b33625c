//! WIN-ADAPTER's differential (`windows-stopped-gpu`): a Device Manager problem code other than
//! 22 (disabled) and 28 (no driver), the cause the facts decide or the candidates they leave. The
//! table, its sources and the commands are in [`crate::diagnose::differential::WINDOWS_STOPPED_GPU`]
//! and `docs/diagnosis.md`.

use crate::diagnose::Check;
use crate::diagnose::winfacts::{self, WindowsFacts};
use crate::i18n::Message;
use crate::msg;

/// The causes of a Device Manager problem code (other than 22 and 28) that the facts leave, most
/// likely first; one when they decide it. Codes 52, 45 and 12 each have one documented cause;
/// for the others the facts order the candidates: a virtual machine (its firmware's maker), a
/// hybrid laptop, another NVIDIA GPU working on the same driver (the install is sound, this
/// card is not), driver resets logged before it.
fn stopped_gpu_causes(
    f: &WindowsFacts,
    a: &winfacts::DisplayAdapter,
    nvidia: &[&winfacts::DisplayAdapter],
    code: u32,
) -> Vec<&'static str> {
    match code {
        52 => return vec!["driver-signature-refused"],
        45 => return vec!["gpu-not-connected"],
        12 => return vec!["firmware-pci-settings"],
        _ => {}
    }
    let install_sound = a.driver_version.is_some()
        && nvidia
            .iter()
            .any(|o| o.instance_id != a.instance_id && o.problem == Some(0) && o.driver_version == a.driver_version);
    let resets = f.tdr_events.as_ref().is_some_and(|e| !e.is_empty()) || !f.watchdog_dumps.is_empty();
    let mut ids = Vec::new();
    if f.virtual_machine() {
        // NVIDIA's drivers before R465 stop a GeForce they find inside a virtual machine.
        let branch = a
            .driver_version
            .as_deref()
            .and_then(crate::knowledge::windows::windows_driver_version)
            .and_then(|v| v.split('.').next().and_then(|m| m.parse::<u32>().ok()));
        if a.name.contains("GeForce") && branch.is_some_and(|b| b < 465) {
            ids.push("geforce-vm-driver-too-old");
        }
        ids.push("gpu-passthrough-guest");
    } else if f.hybrid_laptop() {
        ids.push("hybrid-gpu-switched-off");
    }
    if install_sound || resets {
        ids.push("gpu-hardware-fault");
    }
    if !install_sound {
        ids.push("driver-install-damaged");
    }
    // Code 10 (the device cannot start) is where firmware settings show; Code 43 is more often
    // the card.
    if code == 10 && !f.virtual_machine() {
        ids.push("firmware-pci-settings");
    }
    if !ids.contains(&"gpu-hardware-fault") {
        ids.push("gpu-hardware-fault");
    }
    if code != 10 && !f.virtual_machine() {
        ids.push("firmware-pci-settings");
    }
    ids
}

/// What to do for one cause of [`WINDOWS_STOPPED_GPU`].
fn stopped_gpu_fix(c: Check, id: &str, a: &winfacts::DisplayAdapter) -> Check {
    match id {
        "hybrid-gpu-switched-off" => c
            .text(msg!("Switch the maker's tool (G-Helper, Armoury Crate, Lenovo Vantage …) or the firmware's graphics setting back to the standard (hybrid / Optimus) mode and restart Windows; if the GPU still reports the problem, restart the device in an administrator terminal:"))
            .cmd(format!("pnputil /restart-device \"{}\"", a.instance_id)),
        "gpu-passthrough-guest" => c.text(msg!("On the host: keep its framebuffer and driver off the card (video=efifb:off on the host's kernel command line, or bind the card to vfio-pci at boot) and give the VM the card's ROM file if the host cannot read it; then start the VM again.")),
        "geforce-vm-driver-too-old" => c.text(msg!("Install a driver of R465 or later in the virtual machine (nvidia.com/drivers): from R465 on, NVIDIA's drivers support a GeForce passed through to a Windows VM.")),
        "firmware-pci-settings" => c.text(msg!("In the firmware (BIOS/UEFI) setup turn on 'Above 4G decoding' (and Resizable BAR where offered) and turn off CSM; if the GPU still does not start, try once with VT-d / IOMMU turned off. Then look at Device Manager again.")),
        "driver-signature-refused" => c.text(msg!("Install NVIDIA's signed driver for this GPU from nvidia.com/drivers: a modified driver needs test signing, which Secure Boot does not allow.")),
        "gpu-not-connected" => c.text(msg!("Reconnect the external GPU (or switch the laptop's GPU mode back to standard) and restart Windows; Device Manager shows a disconnected device only with 'Show hidden devices' on.")),
        "gpu-hardware-fault" => c.text(msg!("Power off, reseat the card and its power cables, try another slot, and check the card in another PC; on laptops update the firmware (BIOS).")),
        _ => c.text(msg!("Download the current driver from nvidia.com/drivers, uninstall the old one completely (Display Driver Uninstaller in Safe Mode is the usual way), install the new one with 'Perform a clean installation', then reboot.")),
    }
}

/// WIN-ADAPTER failing with a problem code other than 22 and 28: the symptom, and the cause the
/// facts decide or the candidates they leave, each with its confirming command.
pub(super) fn stopped_gpu(
    c: Check,
    f: &WindowsFacts,
    a: &winfacts::DisplayAdapter,
    nvidia: &[&winfacts::DisplayAdapter],
    code: u32,
) -> Check {
    use crate::diagnose::differential::{CauseFinding, WINDOWS_STOPPED_GPU, candidate_steps};
    let (said, why) = winfacts::problem_text(code);
    let ids = stopped_gpu_causes(f, a, nvidia, code);
    let c = c.explain(msg!("Device Manager: {problem}; usually {why}.", problem = said, why = why));
    if let [id] = ids.as_slice() {
        let c = c
            .found(msg!(
                "The NVIDIA GPU does not work (Code {code}): {cause}",
                code = code,
                cause = Message::new(WINDOWS_STOPPED_GPU.name_of(id))
            ))
            .cause(CauseFinding::decided(&WINDOWS_STOPPED_GPU, id));
        return stopped_gpu_fix(c, id, a);
    }
    let c = if code == 43 {
        c.found(msg!("Windows stopped the NVIDIA GPU (Code 43)"))
    } else {
        c.found(msg!("The NVIDIA GPU does not work (Code {code})", code = code))
    };
    let c = stopped_gpu_fix(c.cause(CauseFinding::candidates(&WINDOWS_STOPPED_GPU, &ids)), ids[0], a);
    c.text(msg!("Which cause it is (the first is the most likely here):"))
        .steps(candidate_steps(&WINDOWS_STOPPED_GPU, &ids))
}
