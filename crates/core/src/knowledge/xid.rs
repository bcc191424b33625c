//! NVIDIA's Xid catalogue ("Analyzing Xid Errors with the Xid Catalog",
//! <https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html>): for each Xid number,
//! the immediate action NVIDIA documents (its resolution bucket), what it implicates (the
//! application, the driver or its firmware, the GPU's memory, the PCIe link, NVLink, the board's
//! power), and what it means for a newcomer. The actions were cross-checked with NVIDIA's own
//! mapping in NVSentinel (`gpu-health-monitor/xiderrorsmapping.csv`). Codes the catalogue marks
//! unused on current GPUs, and codes it does not list, are left out: they are reported as not in
//! the catalogue.

/// NVIDIA's immediate action for an Xid (the catalogue's resolution bucket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `RESTART_APP`: restart the application; the GPU needs nothing.
    RestartApp,
    /// `RESET_GPU`: reset the GPU (or reboot).
    ResetGpu,
    /// `RESTART_VM`: restart the virtual machine that owns the GPU.
    RestartVm,
    /// `RESTART_BM`: restart the machine itself.
    RestartHost,
    /// `CHECK_MECHANICALS`: check how the board sits and its power connectors.
    CheckMechanicals,
    /// `UPDATE_SWFW`: update the software and firmware.
    UpdateSoftware,
    /// `IGNORE`: nothing to do now.
    Ignore,
    /// `WORKFLOW_XID_45`: alone, restart the fabric manager; after other Xids, follow theirs.
    FollowEarlier,
    /// `WORKFLOW_XID_48`: reset the GPU; with Xid 63 or 64, drain it first and run diagnostics.
    EccWorkflow,
    /// `WORKFLOW_NVLINK_ERR`, `WORKFLOW_NVLINK5_ERR`: decode the NVLink error; reset or service.
    NvlinkWorkflow,
    /// `XID_154`: follow the recovery action the accompanying Xid 154 names.
    Follow154,
}

impl Action {
    /// NVIDIA's token for the action.
    pub fn token(self) -> &'static str {
        match self {
            Action::RestartApp => "RESTART_APP",
            Action::ResetGpu => "RESET_GPU",
            Action::RestartVm => "RESTART_VM",
            Action::RestartHost => "RESTART_BM",
            Action::CheckMechanicals => "CHECK_MECHANICALS",
            Action::UpdateSoftware => "UPDATE_SWFW",
            Action::Ignore => "IGNORE",
            Action::FollowEarlier => "WORKFLOW_XID_45",
            Action::EccWorkflow => "WORKFLOW_XID_48",
            Action::NvlinkWorkflow => "WORKFLOW_NVLINK_ERR",
            Action::Follow154 => "XID_154",
        }
    }

    /// The action in words (a catalogue key).
    pub fn says(self) -> &'static str {
        match self {
            Action::RestartApp => crate::tr_key!("restart the application; the GPU needs no reset"),
            Action::ResetGpu => crate::tr_key!("reset the GPU (or reboot) before using it again"),
            Action::RestartVm => crate::tr_key!("restart the virtual machine that owns the GPU"),
            Action::RestartHost => crate::tr_key!("restart the machine (a GPU reset is not enough)"),
            Action::CheckMechanicals => {
                crate::tr_key!("check how the board sits in its slot and its power connectors")
            }
            Action::UpdateSoftware => crate::tr_key!("update the driver and firmware"),
            Action::Ignore => crate::tr_key!("nothing needs doing now"),
            Action::FollowEarlier => crate::tr_key!("follow the Xid logged before it"),
            Action::EccWorkflow => {
                crate::tr_key!(
                    "reset the GPU; if memory repairs (Xid 63, 64) come with it, take it out of service first and run diagnostics"
                )
            }
            Action::NvlinkWorkflow => crate::tr_key!("reset the GPUs; errors that persist need the vendor"),
            Action::Follow154 => crate::tr_key!("follow the recovery action that Xid 154 names"),
        }
    }

    /// Whether the GPU is unusable until the action is taken.
    pub fn stops_the_gpu(self) -> bool {
        matches!(
            self,
            Action::ResetGpu | Action::RestartVm | Action::RestartHost | Action::EccWorkflow | Action::NvlinkWorkflow
        )
    }
}

/// What an Xid implicates, per the catalogue's description and trigger conditions: the cause's id
/// in the differential of "the kernel log shows GPU errors".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The application's own work on the GPU.
    Application,
    /// The driver or the firmware it runs on the GPU (GSP, PMU).
    DriverFirmware,
    /// The GPU's memory (ECC errors, row remapping).
    Memory,
    /// The PCIe link: the GPU left the bus, or data on it was corrupted.
    PcieLink,
    /// NVLink or the chip-to-chip link.
    Nvlink,
    /// The board's power supply.
    BoardPower,
    /// The GPU stopped working on something; the catalogue does not say which part.
    Gpu,
    /// Mismatched virtual-GPU software.
    VgpuSoftware,
}

impl Part {
    /// The cause's id in [`crate::diagnose::differential::GPU_ERRORS_LOGGED`].
    pub fn cause_id(self) -> &'static str {
        match self {
            Part::Application => "xid-application-fault",
            Part::DriverFirmware => "xid-driver-firmware-fault",
            Part::Memory => "xid-memory-error",
            Part::PcieLink => "xid-pcie-link-lost",
            Part::Nvlink => "xid-nvlink-error",
            Part::BoardPower => "xid-board-power",
            Part::Gpu => "xid-gpu-stopped",
            Part::VgpuSoftware => "xid-vgpu-mismatch",
        }
    }

    /// What the part's Xids mean, for a code without a text of its own (a catalogue key).
    fn meaning(self) -> &'static str {
        match self {
            Part::Application => crate::tr_key!(
                "A program's work on the GPU failed; NVIDIA's catalogue points at the program, not the GPU."
            ),
            Part::DriverFirmware => {
                crate::tr_key!(
                    "The driver or the firmware it runs on the GPU hit an error; update the driver if it repeats."
                )
            }
            Part::Memory => {
                crate::tr_key!("The GPU's memory reported an error; repeated errors mean the card needs service.")
            }
            Part::PcieLink => crate::tr_key!(
                "The GPU's PCIe link failed or carried corrupted data; reseat the card and check its slot and riser."
            ),
            Part::Nvlink => crate::tr_key!(
                "An NVLink connection between GPUs reported an error (`nvidia-smi nvlink -e` counts them)."
            ),
            Part::BoardPower => crate::tr_key!(
                "The board runs at reduced clocks because its auxiliary power is not connected; check its power cables."
            ),
            Part::Gpu => crate::tr_key!("The GPU stopped processing; reset it, and contact the vendor if it repeats."),
            Part::VgpuSoftware => {
                crate::tr_key!("The virtual GPU did not start: the guest and host drivers do not match; update them.")
            }
        }
    }
}

/// One Xid of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xid {
    /// The number.
    pub code: u32,
    /// NVIDIA's immediate action.
    pub action: Action,
    /// What it implicates.
    pub part: Part,
}

/// The catalogue's codes that are in use on current GPUs, with their immediate action and what
/// they implicate.
const CATALOGUE: &[(u32, Action, Part)] = &[
    (8, Action::RestartApp, Part::Gpu),
    (13, Action::RestartApp, Part::Application),
    (31, Action::RestartApp, Part::Application),
    (32, Action::RestartApp, Part::PcieLink),
    (38, Action::Ignore, Part::DriverFirmware),
    (43, Action::Ignore, Part::Application),
    (44, Action::Ignore, Part::Gpu),
    (45, Action::FollowEarlier, Part::Application),
    (46, Action::ResetGpu, Part::Gpu),
    (48, Action::EccWorkflow, Part::Memory),
    (54, Action::CheckMechanicals, Part::BoardPower),
    (62, Action::ResetGpu, Part::DriverFirmware),
    (63, Action::Ignore, Part::Memory),
    (64, Action::ResetGpu, Part::Memory),
    (68, Action::RestartApp, Part::Gpu),
    (69, Action::RestartApp, Part::Application),
    (74, Action::NvlinkWorkflow, Part::Nvlink),
    (78, Action::UpdateSoftware, Part::VgpuSoftware),
    (79, Action::RestartHost, Part::PcieLink),
    (80, Action::RestartApp, Part::Application),
    (92, Action::Ignore, Part::Memory),
    (93, Action::Ignore, Part::DriverFirmware),
    (94, Action::RestartApp, Part::Memory),
    (95, Action::ResetGpu, Part::Memory),
    (109, Action::ResetGpu, Part::Gpu),
    (110, Action::ResetGpu, Part::Gpu),
    (119, Action::ResetGpu, Part::DriverFirmware),
    (120, Action::ResetGpu, Part::DriverFirmware),
    (121, Action::Ignore, Part::Nvlink),
    (136, Action::ResetGpu, Part::Nvlink),
    (140, Action::ResetGpu, Part::Memory),
    (143, Action::ResetGpu, Part::Gpu),
    (144, Action::NvlinkWorkflow, Part::Nvlink),
    (145, Action::NvlinkWorkflow, Part::Nvlink),
    (146, Action::NvlinkWorkflow, Part::Nvlink),
    (147, Action::NvlinkWorkflow, Part::Nvlink),
    (148, Action::NvlinkWorkflow, Part::Nvlink),
    (149, Action::NvlinkWorkflow, Part::Nvlink),
    (150, Action::NvlinkWorkflow, Part::Nvlink),
    (151, Action::RestartVm, Part::Gpu),
    (154, Action::Follow154, Part::Gpu),
    (155, Action::ResetGpu, Part::Nvlink),
];

/// The catalogue's entry for `code`, when it lists the code as in use.
pub fn xid(code: u32) -> Option<Xid> {
    CATALOGUE.iter().find(|e| e.0 == code).map(|&(code, action, part)| Xid { code, action, part })
}

/// How serious an Xid is and what it means for a newcomer: (does it stop the GPU?, the text's
/// catalogue key).
pub fn xid_meaning(code: u32) -> (bool, &'static str) {
    match xid(code) {
        Some(x) => (x.action.stops_the_gpu(), own_meaning(code).unwrap_or_else(|| x.part.meaning())),
        None => (false, crate::tr_key!("A GPU error was logged; see NVIDIA's Xid catalog for this number.")),
    }
}

/// The codes with a text of their own: what the Xid means for a newcomer.
fn own_meaning(code: u32) -> Option<&'static str> {
    Some(match code {
        79 => crate::tr_key!(
            "The GPU fell off the PCIe bus. Reboot; if it repeats, reseat the card, check the PSU and PCIe power cables, try another slot, check temperatures, update BIOS and driver; persisting across slots and drivers means RMA."
        ),
        48 => crate::tr_key!(
            "Uncorrectable GPU memory (ECC) error. Reset the GPU or reboot; repeated errors mean the card should be replaced."
        ),
        62 => crate::tr_key!("The GPU's firmware halted. Reset the GPU or reboot, update the driver, check cooling."),
        64 => crate::tr_key!("Recording a memory repair failed. Reboot now; if it repeats, RMA."),
        74 => crate::tr_key!(
            "NVLink error. Check `nvidia-smi nvlink -e`, reset the GPUs or reboot; persistent errors need the vendor."
        ),
        95 => crate::tr_key!(
            "Uncontained memory error: every application on the GPU is affected. Reset the GPU before using it again."
        ),
        119 | 120 => crate::tr_key!(
            "The GPU's firmware (GSP) stopped answering. Reset the GPU or reboot, and update the driver."
        ),
        140 | 143 => crate::tr_key!(
            "The GPU hit an unrecoverable error. Reset the GPU or reboot; contact the vendor if it repeats."
        ),
        13 => crate::tr_key!(
            "A program crashed on the GPU (often an out-of-bounds access in the program). Re-run; if it happens with many programs, suspect the driver or hardware."
        ),
        31 => crate::tr_key!(
            "A program accessed invalid GPU memory (usually a bug in the program). Debug the program unless this started after a driver change."
        ),
        63 => crate::tr_key!(
            "A bad memory row was recorded for remapping; reset the GPU or reboot when convenient to activate it."
        ),
        92 => crate::tr_key!("Many corrected memory errors; watch for uncorrectable errors or remapping failures."),
        94 => crate::tr_key!(
            "One application hit a contained memory error and must restart; others are unaffected. Reset the GPU when convenient."
        ),
        45 => crate::tr_key!("The driver cleaned up after an earlier error (follow the Xid before it)."),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_decides_action_part_and_severity() {
        let x = xid(79).unwrap_or_else(|| panic!("79"));
        assert_eq!((x.action.token(), x.part.cause_id()), ("RESTART_BM", "xid-pcie-link-lost"));
        assert!(xid_meaning(79).0 && xid_meaning(48).0 && xid_meaning(120).0);
        assert!(!xid_meaning(13).0 && !xid_meaning(63).0 && !xid_meaning(94).0);
        // A code with no text of its own says what its part means.
        assert_eq!(xid_meaning(54).1, Part::BoardPower.meaning());
        // Unused and unknown codes are not in the catalogue.
        assert!(xid(56).is_none() && xid(9999).is_none() && !xid_meaning(9999).0);
        let mut seen = std::collections::HashSet::new();
        assert!(CATALOGUE.iter().all(|e| seen.insert(e.0)), "a code twice");
    }
}
