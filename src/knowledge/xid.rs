//! NVIDIA's Xid catalogue (<https://docs.nvidia.com/deploy/xid-errors/>): what an Xid number in
//! the kernel log means for a user, and whether it stops the GPU.

/// How serious an Xid is and what it means for a newcomer: (fail?, the text's catalogue key).
pub fn xid_meaning(code: u32) -> (bool, &'static str) {
    match code {
        79 => (
            true,
            crate::tr_key!(
                "The GPU fell off the PCIe bus. Reboot; if it repeats, reseat the card, check the PSU and PCIe power cables, try another slot, check temperatures, update BIOS and driver; persisting across slots and drivers means RMA."
            ),
        ),
        48 => (
            true,
            crate::tr_key!(
                "Uncorrectable GPU memory (ECC) error. Reset the GPU or reboot; repeated errors mean the card should be replaced."
            ),
        ),
        62 => (
            true,
            crate::tr_key!("The GPU's firmware halted. Reset the GPU or reboot, update the driver, check cooling."),
        ),
        64 => (true, crate::tr_key!("Recording a memory repair failed. Reboot now; if it repeats, RMA.")),
        74 => (
            true,
            crate::tr_key!(
                "NVLink error. Check `nvidia-smi nvlink -e`, reset the GPUs or reboot; persistent errors need the vendor."
            ),
        ),
        95 => (
            true,
            crate::tr_key!(
                "Uncontained memory error: every application on the GPU is affected. Reset the GPU before using it again."
            ),
        ),
        119 | 120 => (
            true,
            crate::tr_key!(
                "The GPU's firmware (GSP) stopped answering. Reset the GPU or reboot, and update the driver."
            ),
        ),
        140 | 143 => (
            true,
            crate::tr_key!(
                "The GPU hit an unrecoverable error. Reset the GPU or reboot; contact the vendor if it repeats."
            ),
        ),
        13 => (
            false,
            crate::tr_key!(
                "A program crashed on the GPU (often an out-of-bounds access in the program). Re-run; if it happens with many programs, suspect the driver or hardware."
            ),
        ),
        31 => (
            false,
            crate::tr_key!(
                "A program accessed invalid GPU memory (usually a bug in the program). Debug the program unless this started after a driver change."
            ),
        ),
        63 => (
            false,
            crate::tr_key!(
                "A bad memory row was recorded for remapping; reset the GPU or reboot when convenient to activate it."
            ),
        ),
        92 => (
            false,
            crate::tr_key!("Many corrected memory errors; watch for uncorrectable errors or remapping failures."),
        ),
        94 => (
            false,
            crate::tr_key!(
                "One application hit a contained memory error and must restart; others are unaffected. Reset the GPU when convenient."
            ),
        ),
        45 => (false, crate::tr_key!("The driver cleaned up after an earlier error (follow the Xid before it).")),
        _ => (false, crate::tr_key!("A GPU error was logged; see NVIDIA's Xid catalog for this number.")),
    }
}
