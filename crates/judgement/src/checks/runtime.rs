//! Runtime-health checks (RT-*): GPUs that stopped answering, Xid errors in the kernel log,
//! throttle reasons, the PCIe link, uncorrectable ECC errors, memory repair, other programs holding
//! the GPU, MIG and compute modes.
//!
//! Sources: NVIDIA's "Analyzing Xid Errors with the Xid Catalog"
//! (<https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html>); the NVML API reference
//! (<https://docs.nvidia.com/deploy/nvml-api/>) for clock-event reasons, PCIe, ECC, row remapping
//! and compute modes; NVIDIA's MIG User Guide.

use super::Ctx;
use crate::diagnose::parse;
use crate::diagnose::system::KernelLog;
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;
use crate::telemetry::sample::GpuHealth;
use crate::telemetry::throttle;

pub(super) fn rt_lost(c: Check, cx: &Ctx) -> Check {
    if let Some(secs) = cx.nvml.and_then(|n| n.did_not_return) {
        // Not "all GPUs answer": one did not, within the time the checks waited.
        let call = cx.nvml.and_then(|n| n.hung_call.clone()).unwrap_or_else(|| crate::msg!("an NVML call"));
        return c
            .verdict(Verdict::Fail, crate::msg!("{call} did not return within {secs} s", call = call, secs = secs))
            .found(crate::msg!("A GPU stopped answering the driver's queries"));
    }
    if !cx.nvml_open() {
        return c.verdict(Verdict::Skipped, crate::msg!("NVML not open"));
    }
    if let Some((index, key)) = device_error(cx) {
        return device_error_finding(c, index, key);
    }
    let lost: Vec<String> = cx
        .nvml_samples()
        .iter()
        .filter_map(|s| match &s.health {
            GpuHealth::Lost(_) => Some(format!("GPU {}", s.index)),
            GpuHealth::Ok => None,
        })
        .collect();
    // A GPU that fell off the bus in this boot (Xid 79) and that NVML no longer lists: NVML
    // answers for the others only, so "every GPU answers" would hide it. The Xid check names the
    // fault and is the root cause; this one says it too, as a warning.
    let gone = gone_from_nvml(cx);
    if lost.is_empty() && !gone.is_empty() {
        let gpus = gone.iter().map(|b| format!("GPU {b}")).collect::<Vec<_>>().join(", ");
        return c
            .verdict(
                Verdict::Warn,
                crate::msg!("{gpus} fell off the bus (Xid 79); NVML lists only the GPUs still there", gpus = gpus),
            )
            .found(crate::msg!("{gpus} fell off the bus", gpus = gpus));
    }
    if lost.is_empty() {
        // With Xid errors in the kernel log, they say why (the Xid check names the fault and is
        // the root cause); alone, the silence is the failure.
        let xids = matches!(&cx.v.meta().kernel_log, KernelLog::Lines(l) if !parse::xids(l).is_empty());
        match super::cuinit::silent_gpus(cx) {
            Some(gpus) => c
                .verdict(
                    if xids { Verdict::Warn } else { Verdict::Fail },
                    crate::msg!("{gpus} answer every query with Unknown Error", gpus = gpus),
                )
                .found(crate::msg!("{gpus}: stopped answering the driver (a hung GPU or its GSP firmware)", gpus = gpus))
                .explain(crate::msg!("NVML listed the GPU when it started, but every reading since fails with NVML's Unknown Error: the GPU (or the firmware the driver runs on it, GSP) stopped answering, while it stays on the PCIe bus."))
                .steps(super::cuinit::fix("gpu-not-answering")),
            None => c.verdict(Verdict::Pass, crate::msg!("all GPUs answer")).found(crate::msg!("Every GPU answers")),
        }
    } else {
        let gone = crate::msg!("{gpus} fell off the bus", gpus = lost.join(", "));
        c.verdict(Verdict::Fail, gone.clone())
            .found(gone)
            .explain(crate::msg!("The GPU stopped responding on the PCIe bus (Xid 79)."))
            .text(crate::msg!("Reboot (a GPU reset is usually not possible). If it repeats: reseat the card, check the PSU and PCIe power cables, try another slot, check temperatures; if it persists, RMA."))
    }
}

/// The bus ids of this boot's Xid 79 lines (a GPU fell off the bus) that no GPU NVML lists has.
fn gone_from_nvml(cx: &Ctx) -> Vec<String> {
    let KernelLog::Lines(lines) = &cx.v.meta().kernel_log else { return Vec::new() };
    let listed: Vec<String> = cx
        .nvml
        .map(|n| n.inventory.gpus.iter().filter_map(|g| g.pci_bus_id.value().map(|b| parse::norm_bus(b))).collect())
        .unwrap_or_default();
    let mut gone: Vec<String> = parse::xids(lines)
        .into_iter()
        .filter(|x| x.code == 79 && !x.pci.is_empty())
        .map(|x| parse::norm_bus(&x.pci))
        .filter(|bus| !listed.iter().any(|l| l.starts_with(bus.as_str())))
        .collect();
    gone.sort();
    gone.dedup();
    gone
}

/// The device-level NVML return codes that say why a GPU does not answer, worst first.
const DEVICE_ERRORS: [&str; 5] = [
    crate::telemetry::source::NVML_INSUFFICIENT_POWER,
    crate::telemetry::source::NVML_RESET_REQUIRED,
    crate::telemetry::source::NVML_TIMEOUT,
    crate::telemetry::source::NVML_IRQ_ISSUE,
    crate::telemetry::source::NVML_CORRUPTED_INFOROM,
];

/// The first GPU (by index) whose handle or readings NVML refused with one of
/// [`DEVICE_ERRORS`], the worst code found.
fn device_error(cx: &Ctx) -> Option<(u32, &'static str)> {
    let inventory = cx.nvml.map(|n| n.inventory.gpus.iter().map(|g| (g.index, g.uuid.na_reason())).collect::<Vec<_>>());
    let samples = cx.nvml_samples().iter().map(|s| (s.index, s.util_gpu_pct.na_reason()));
    let found: Vec<(u32, &str)> = inventory
        .unwrap_or_default()
        .into_iter()
        .chain(samples)
        .filter_map(|(i, why)| {
            let key = why?.key();
            DEVICE_ERRORS.iter().find(|k| **k == key).map(|k| (i, *k))
        })
        .collect();
    DEVICE_ERRORS.iter().find_map(|k| found.iter().filter(|(_, f)| f == k).map(|(i, _)| *i).min().map(|i| (i, *k)))
}

/// RT-LOST's finding for a GPU NVML refused with a device-level code: the code is the cause.
fn device_error_finding(c: Check, index: u32, key: &'static str) -> Check {
    use crate::telemetry::source as s;
    let c = c.evidence(crate::msg!("GPU {index}: {why}", index = index, why = Message::new(key)));
    match key {
        s::NVML_INSUFFICIENT_POWER => c
            .verdict(Verdict::Fail, crate::msg!("GPU {index}: NVML refuses it for lack of power", index = index))
            .found(crate::msg!("GPU {index} does not get enough power: its external power cables are not attached properly", index = index))
            .text(crate::msg!("Power the machine off, connect every power connector the card has (a separate cable from the power supply for each), then start it again.")),
        s::NVML_RESET_REQUIRED => c
            .verdict(Verdict::Fail, crate::msg!("GPU {index} needs a reset", index = index))
            .found(crate::msg!("GPU {index} needs a reset before it works again", index = index))
            .text(crate::msg!("Stop the programs that use it, then reset it (or reboot):"))
            .cmd(format!("sudo nvidia-smi --gpu-reset -i {index}")),
        s::NVML_TIMEOUT => c
            .verdict(Verdict::Fail, crate::msg!("GPU {index} did not answer the driver in time", index = index))
            .found(crate::msg!("GPU {index} did not answer the driver in time", index = index))
            .text(crate::msg!("Save the kernel log for the bug report before anything else:"))
            .cmd("sudo dmesg --ctime > nvidia-hang-dmesg.txt")
            .text(crate::msg!("Stop the programs using the GPU, then try a GPU reset (not possible while a display runs on it):"))
            .cmd(format!("sudo nvidia-smi --gpu-reset -i {index}")),
        s::NVML_IRQ_ISSUE => c
            .verdict(Verdict::Fail, crate::msg!("GPU {index}: the driver saw an interrupt problem", index = index))
            .found(crate::msg!("GPU {index} cannot be used: the driver saw an interrupt problem with it", index = index))
            .text(crate::msg!("Update the machine's firmware (BIOS) and try the card in another slot; what the driver said when it started the GPU tells more:"))
            .cmd("sudo dmesg | grep -i -e NVRM -e irq -e msi"),
        _ => c
            .verdict(Verdict::Warn, crate::msg!("GPU {index}: its InfoROM is corrupted", index = index))
            .found(crate::msg!("GPU {index}'s InfoROM is corrupted", index = index))
            .explain(crate::msg!("The InfoROM is the board's small store of configuration and error records (ECC, retired pages). The GPU may still compute, but those records are unreliable."))
            .text(crate::msg!("Ask the board's vendor for an InfoROM update or a replacement.")),
    }
}

/// The summary of a hardware-counter check when there is no GPU to read it from: nothing said
/// about the counter, which a machine without a GPU (or NVML) cannot have or lack.
/// A kernel log line as evidence: data, with the mark a bug report's earlier boots carry put into
/// the reader's language.
fn log_line(line: &str) -> Message {
    let earlier = crate::msg!("(earlier boot) {line}", line = "").en();
    match line.strip_prefix(&earlier) {
        Some(rest) => crate::msg!("(earlier boot) {line}", line = rest),
        None => Message::data(line),
    }
}

fn no_gpu(cx: &Ctx) -> Message {
    if cx.nvml_open() { crate::msg!("no GPU to read") } else { crate::msg!("no GPU data (NVML not open)") }
}

pub(super) fn memory_repair(c: Check, cx: &Ctx) -> Check {
    if cx.facts().is_empty() {
        return c.verdict(Verdict::Skipped, no_gpu(cx));
    }
    let mut c = c;
    let mut worst = Verdict::Skipped;
    for f in cx.facts() {
        if let Some(r) = f.remapped_rows.value() {
            c = c.evidence(crate::msg!(
                "GPU {index}: remapped rows {correctable} correctable, {uncorrectable} uncorrectable, pending {pending}, failure {failed}",
                index = f.index,
                correctable = r.correctable,
                uncorrectable = r.uncorrectable,
                pending = r.pending,
                failed = r.failed
            ));
            let v = if r.failed {
                Verdict::Fail
            } else if r.pending {
                Verdict::Warn
            } else {
                Verdict::Pass
            };
            worst = if worst == Verdict::Skipped { v } else { worst.max(v) };
        }
        if let Some(p) = f.pages_pending_retirement.value() {
            c = c.evidence(crate::msg!("GPU {index}: retired pages pending: {p}", index = f.index, p = p));
            let v = if *p { Verdict::Warn } else { Verdict::Pass };
            worst = if worst == Verdict::Skipped { v } else { worst.max(v) };
        }
    }
    match worst {
        Verdict::Skipped => c.verdict(Verdict::Skipped, crate::msg!("not reported (GeForce boards do not have it)")),
        Verdict::Pass => c
            .verdict(Verdict::Pass, crate::msg!("nothing pending, no failure"))
            .found(crate::msg!("GPU memory repair is healthy")),
        Verdict::Warn => c
            .verdict(Verdict::Warn, crate::msg!("a memory repair waits for a GPU reset"))
            .found(crate::msg!("A GPU memory repair waits for a reset"))
            .text(crate::msg!("Reset the GPU (nvidia-smi -r -i with its index, as root, with no process on it) or reboot when convenient.")),
        _ => c
            .verdict(Verdict::Fail, crate::msg!("row remapping failed: the GPU has no spare memory rows left"))
            .found(crate::msg!("The GPU has run out of spare memory rows"))
            .text(crate::msg!("Contact the vendor (RMA); until then expect uncorrectable memory errors on this GPU.")),
    }
}

pub(super) fn rt_xid(c: Check, cx: &Ctx) -> Check {
    if cx.wsl.is_some() {
        return c.not_here(crate::msg!("native Linux"), crate::msg!("WSL has no NVRM kernel log"));
    }
    let lines = match &cx.v.meta().kernel_log {
        KernelLog::Lines(l) => l,
        KernelLog::Unreadable(why) => {
            use crate::diagnose::system::{NO_LINUX_KERNEL_LOG, NOT_IN_REPORT};
            let c = c.verdict(
                Verdict::Skipped,
                crate::msg!("unknown: {why}", why = crate::diagnose::system::kernel_log_unreadable(why)),
            );
            if why == NOT_IN_REPORT || why == NO_LINUX_KERNEL_LOG {
                return c;
            }
            // (Another user's log on this machine: root can read it.)
            return c
                .verdict(
                    Verdict::Skipped,
                    crate::msg!("unknown: {why}", why = crate::diagnose::system::kernel_log_unreadable(why)),
                )
                .text(crate::msg!("Read it as root:"))
                .cmd("sudo dmesg | grep -i -e nvrm -e xid");
        }
    };
    let from =
        cx.v.meta()
            .kernel_log_source
            .as_ref()
            .and_then(|s| s.read.clone())
            .map_or_else(Message::default, |s| crate::msg!(" (read from {source})", source = s));
    let xs = parse::xids(lines);
    if xs.is_empty() {
        // No Xid number, but the driver may still have said it failed: quote what was read.
        let gpus: Vec<&str> = cx.pci.iter().flatten().map(|g| g.address.as_str()).collect();
        // PCIe errors count when one names a GPU; then the whole burst (the root port's lines
        // above the GPU) is quoted.
        let gpu_aer = lines.iter().any(|l| gpus.iter().any(|a| parse::is_aer_line_for(l, a)));
        let errors: Vec<&String> = lines
            .iter()
            .filter(|l| {
                parse::is_driver_error_line(l) || (gpu_aer && (l.contains("AER:") || l.contains("PCIe Bus Error")))
            })
            .collect();
        if !errors.is_empty() {
            let mut c = c
                .verdict(
                    Verdict::Warn,
                    crate::msg!(
                        "no Xid number, but {n} driver or PCIe error line(s){from}",
                        n = errors.len(),
                        from = from
                    ),
                )
                .found(crate::msg!("The kernel log shows NVIDIA driver errors"));
            for l in errors.iter().rev().take(6).rev() {
                c = c.evidence((*l).clone());
            }
            return c
                .text(crate::msg!("Save the full kernel log for a report:"))
                .cmd("sudo dmesg > dmesg.txt")
                .text(crate::msg!("Errors when the driver starts (RmInitAdapter, GSP) usually need a driver update or a reboot; PCIe errors (AER) point at the slot, riser or cable: reseat the card."));
        }
        return c
            .verdict(
                Verdict::Pass,
                crate::msg!("no Xid errors in the {n} NVIDIA kernel-log line(s){from}", n = lines.len(), from = from),
            )
            .found(crate::msg!("No GPU errors in the kernel log"));
    }
    let mut c = c;
    let mut worst = Verdict::Info;
    let mut codes: Vec<u32> = Vec::new();
    // Repeats are summarised (a flapping GPU can log hundreds of thousands of the same Xid):
    // each code on each GPU once, with its count and its first and last line.
    let mut groups: Vec<(u32, &str, usize, &str, &str)> = Vec::new();
    for x in &xs {
        let (fatal, text) = crate::knowledge::xid::xid_meaning(x.code);
        let text = Message::new(text);
        worst = worst.max(if fatal { Verdict::Fail } else { Verdict::Warn });
        if !codes.contains(&x.code) {
            codes.push(x.code);
            c = c.text(crate::msg!("Xid {code} ({pci}): {text}", code = x.code, pci = x.pci, text = text));
        }
        match groups.iter_mut().find(|g| g.0 == x.code && g.1 == x.pci) {
            Some(g) => {
                g.2 += 1;
                g.4 = &x.line;
            }
            None => groups.push((x.code, &x.pci, 1, &x.line, &x.line)),
        }
    }
    for (code, pci, n, first, last) in &groups {
        c = c.evidence(if *n == 1 {
            log_line(first)
        } else {
            crate::msg!(
                "Xid {code} on {pci} logged {n} times; first: {first}; last: {last}",
                code = code,
                pci = pci,
                n = n,
                first = log_line(first),
                last = log_line(last)
            )
        });
    }
    let list = codes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    // A fatal error is named by what it means (it may be the root cause); others by their codes.
    let finding = match xs.iter().find(|x| crate::knowledge::xid::xid_meaning(x.code).0) {
        Some(x) => {
            let meaning = Message::new(crate::knowledge::xid::xid_meaning(x.code).1);
            // Its first sentence, cut in the reader's language.
            let first = Message::first_sentence(meaning);
            crate::msg!("{first} (Xid {code} on {pci})", first = first, code = x.code, pci = x.pci)
        }
        None => crate::msg!("The kernel log shows GPU errors (Xid {list})", list = list),
    };
    // The cause: what NVIDIA's catalogue implicates for the most serious catalogued Xid (one that
    // stops the GPU, else the first); its immediate action is said with it.
    let catalogued = |stops: bool| {
        xs.iter().find_map(|x| crate::knowledge::xid::xid(x.code).filter(|e| !stops || e.action.stops_the_gpu()))
    };
    let c = match catalogued(true).or_else(|| catalogued(false)) {
        Some(e) => {
            let d = &crate::diagnose::differential::GPU_ERRORS_LOGGED;
            let part = d.name_of(e.part.cause_id());
            c.cause(crate::diagnose::differential::CauseFinding::decided(d, e.part.cause_id())).evidence(crate::msg!(
                "NVIDIA's Xid catalogue for Xid {code}: {action} ({token}); it implicates {part}",
                code = e.code,
                action = Message::new(e.action.says()),
                token = e.action.token(),
                part = Message::new(part)
            ))
        }
        None => c
            .cause(crate::diagnose::differential::CauseFinding::not_explained(
                &crate::diagnose::differential::GPU_ERRORS_LOGGED,
            ))
            .evidence(crate::msg!(
                "Xid {list}: not in NVIDIA's catalogue of current Xids (not explained here); the driver's release notes or NVIDIA's support may know it",
                list = list
            )),
    };
    c.verdict(worst, crate::msg!("Xid {list} logged", list = list)).found(finding)
}

pub(super) fn clocks_held_back(c: Check, cx: &Ctx) -> Check {
    let samples = cx.nvml_samples();
    let masks: Vec<(u32, u64)> =
        samples.iter().filter_map(|s| s.throttle_mask.value().map(|m| (s.index, *m))).collect();
    if masks.is_empty() {
        return c.verdict(Verdict::Skipped, crate::msg!("not reported"));
    }
    let mut c = c;
    let mut worst = Verdict::Pass;
    let mut lowered = Vec::new();
    for (i, m) in &masks {
        for r in throttle::decode(*m).iter().filter(|r| r.severity >= throttle::Severity::Warn) {
            if r.bit == throttle::SW_POWER_CAP {
                // Reaching the power limit under load is how a busy GPU runs; it is a problem
                // only when the limit was lowered below the card's default.
                let limit = samples.iter().find(|s| s.index == *i).and_then(|s| s.power_limit_w.value().copied());
                let default = cx
                    .nvml
                    .and_then(|n| n.inventory.gpus.iter().find(|g| g.index == *i))
                    .and_then(|g| g.power_limit_default_w.value().copied());
                match (limit, default) {
                    (Some(l), Some(d)) if l < 0.9 * d => {
                        worst = Verdict::Warn;
                        lowered.push((*i, d));
                        c = c.evidence(crate::msg!(
                            "GPU {i}: power cap at a lowered limit of {limit} W (default {default} W)",
                            i = i,
                            limit = format!("{l:.0}"),
                            default = format!("{d:.0}")
                        ));
                    }
                    _ => {
                        worst = worst.max(Verdict::Info);
                        c = c.evidence(crate::msg!("GPU {i}: at its power limit — normal under full load", i = i));
                    }
                }
                continue;
            }
            worst = Verdict::Warn;
            c = c.evidence(crate::msg!(
                "GPU {gpu}: {reason} — {meaning}",
                gpu = *i,
                reason = crate::i18n::Message::new(r.name),
                meaning = crate::i18n::Message::new(r.sentence)
            ));
        }
    }
    if worst == Verdict::Info {
        return c
            .verdict(Verdict::Info, crate::msg!("a GPU runs at its power limit (normal under full load)"))
            .found(crate::msg!("A GPU runs at its power limit, as a busy GPU does"));
    }
    if worst == Verdict::Warn && !lowered.is_empty() {
        c = c.text(crate::msg!(
            "A power limit was set below the default; restore it (it resets at reboot unless a service sets it):"
        ));
        for (i, d) in &lowered {
            c = c.cmd(format!("sudo nvidia-smi -i {i} -pl {d:.0}"));
        }
    }
    if worst == Verdict::Pass {
        c.verdict(Verdict::Pass, crate::msg!("no GPU is held back")).found(crate::msg!("No GPU's clocks are held back"))
    } else {
        c.verdict(worst, crate::msg!("clocks are being lowered (see evidence); power cap under full load is normal"))
            .found(crate::msg!("GPU clocks are being held back"))
    }
}

pub(super) fn pcie_link_at_max(c: Check, cx: &Ctx) -> Check {
    let inv = cx.nvml.map(|n| &n.inventory.gpus);
    let mut c = c;
    let mut worst = Verdict::Skipped;
    for s in cx.nvml_samples() {
        let Some(info) = inv.and_then(|g| g.iter().find(|g| g.index == s.index)) else { continue };
        let (Some(g), Some(w), Some(mg), Some(mw)) =
            (s.pcie_gen.get(), s.pcie_width.get(), info.max_pcie_gen.get(), info.max_pcie_width.get())
        else {
            continue;
        };
        let busy = s.util_gpu_pct.get().is_some_and(|u| u >= 50.0);
        c = c.evidence(crate::msg!(
            "GPU {index}: Gen{g} x{w} (max Gen{mg} x{mw}), utilization {util}",
            index = s.index,
            g = g,
            w = w,
            mg = mg,
            mw = mw,
            util = s.util_gpu_pct.get().map_or_else(|| crate::msg!("n/a"), |u| Message::data(format!("{u:.0} %")))
        ));
        let v = if g >= mg && w >= mw {
            Verdict::Pass
        } else if busy {
            Verdict::Warn
        } else {
            Verdict::Info
        };
        worst = if worst == Verdict::Skipped { v } else { worst.max(v) };
    }
    match worst {
        Verdict::Skipped => c.verdict(Verdict::Skipped, crate::msg!("link data not reported")),
        Verdict::Pass => c
            .verdict(Verdict::Pass, crate::msg!("every link at its maximum"))
            .found(crate::msg!("Every PCIe link runs at its maximum")),
        Verdict::Info => c
            .verdict(
                Verdict::Info,
                crate::msg!(
                    "a link is below its maximum while the GPU is idle: normal power saving; judge it under load"
                ),
            )
            .found(crate::msg!("An idle GPU's PCIe link saves power")),
        v => c
            .verdict(v, crate::msg!("a link is below its maximum under load"))
            .found(crate::msg!("A busy GPU's PCIe link runs below its maximum"))
            .text(crate::msg!(
                "Reseat the card in a CPU-attached x16 slot, avoid risers and extenders, check the BIOS PCIe settings."
            )),
    }
}

pub(super) fn rt_ecc(c: Check, cx: &Ctx) -> Check {
    let counts: Vec<(u32, u64)> =
        cx.nvml_samples().iter().filter_map(|s| s.ecc_uncorrected_volatile.value().map(|n| (s.index, *n))).collect();
    if cx.nvml_samples().is_empty() {
        return c.verdict(Verdict::Skipped, no_gpu(cx));
    }
    if counts.is_empty() {
        return c.verdict(Verdict::Skipped, crate::msg!("ECC not reported (GeForce boards have none)"));
    }
    let bad: Vec<String> = counts.iter().filter(|(_, n)| *n > 0).map(|(i, n)| format!("GPU {i}: {n}")).collect();
    if bad.is_empty() {
        c.verdict(Verdict::Pass, crate::msg!("none since the driver loaded"))
            .found(crate::msg!("No uncorrectable memory errors"))
    } else {
        c.verdict(
            Verdict::Warn,
            crate::msg!("uncorrectable errors since the driver loaded ({counts})", counts = bad.join(", ")),
        )
        .found(crate::msg!("GPU memory had uncorrectable errors"))
        .text(crate::msg!("Reset the GPU or reboot when convenient; if errors keep coming, contact the vendor (RMA)."))
    }
}

pub(super) fn other_programs_on_gpu(c: Check, cx: &Ctx) -> Check {
    let samples = cx.nvml_samples();
    if samples.is_empty() {
        return c.verdict(Verdict::Skipped, crate::msg!("NVML not open"));
    }
    let mut c = c;
    let mut worst = Verdict::Pass;
    let mut notes = Vec::new();
    for s in samples {
        let procs = s.processes.value().map(Vec::len);
        let (used, total) = (s.vram_used_bytes.get(), s.vram_total_bytes.get());
        let full = matches!((used, total), (Some(u), Some(t)) if t > 0 && u as f64 / t as f64 > 0.9);
        if let Some(list) = s.processes.value() {
            for p in list {
                let vram =
                    p.vram_bytes.get().map_or_else(|| crate::msg!("n/a"), |b| Message::data(crate::units::bytes(b)));
                let who = Message::data(format!("GPU {}: pid {} {} (", s.index, p.pid, p.name));
                c = c.evidence(Message::join([who, vram, Message::data(")")], &Message::default()));
            }
        }
        if full {
            worst = Verdict::Warn;
            notes.push(match procs {
                Some(n) => crate::msg!("GPU {index} VRAM is over 90 % used by {n} process(es)", index = s.index, n = n),
                None => crate::msg!("GPU {index} VRAM is over 90 % used", index = s.index),
            });
        }
    }
    if worst == Verdict::Warn {
        c.verdict(Verdict::Warn, Message::join(notes, &crate::msg!("; ")))
            .found(crate::msg!("Other programs fill the GPU's memory"))
            .text(crate::msg!("Close the programs holding the memory (often a forgotten Jupyter kernel or a stuck Python process) before starting a new job."))
    } else {
        let n: usize = samples.iter().filter_map(|s| s.processes.value().map(Vec::len)).sum();
        c.verdict(
            if n == 0 { Verdict::Pass } else { Verdict::Info },
            if n == 0 {
                crate::msg!("no process is using the GPU")
            } else {
                crate::msg!("{n} process(es) use the GPU; memory is not full", n = n)
            },
        )
        .found(if n == 0 {
            crate::msg!("No other program holds the GPU")
        } else {
            crate::msg!("Other programs use the GPU, with memory to spare")
        })
    }
}

pub(super) fn mig_mode(c: Check, cx: &Ctx) -> Check {
    let modes: Vec<(u32, (bool, bool))> =
        cx.facts().iter().filter_map(|f| f.mig.value().map(|m| (f.index, *m))).collect();
    if modes.is_empty() {
        return c.verdict(Verdict::Skipped, crate::msg!("not a MIG-capable GPU"));
    }
    if let Some((i, _)) = modes.iter().find(|(_, (cur, pend))| cur != pend) {
        return c
            .verdict(Verdict::Warn, crate::msg!("GPU {i}: MIG mode changes at the next GPU reset", i = i))
            .found(crate::msg!("A MIG mode change waits for a GPU reset"))
            .text(crate::msg!("Reset the GPU or reboot to apply the pending MIG mode."));
    }
    let on: Vec<String> = modes.iter().filter(|(_, (cur, _))| *cur).map(|(i, _)| format!("GPU {i}")).collect();
    // MIG on without instances: CUDA sees no device on that GPU at all.
    let empty: Vec<u32> = cx
        .facts()
        .iter()
        .filter(|f| matches!(f.mig.value(), Some((true, _))) && f.mig_devices.value() == Some(&0))
        .map(|f| f.index)
        .collect();
    if let Some(first) = empty.first() {
        let list = empty.iter().map(|i| format!("GPU {i}")).collect::<Vec<_>>().join(", ");
        return c
            .verdict(
                Verdict::Fail,
                crate::msg!("MIG is on for {list} but no MIG instance exists: CUDA sees no device there", list = list),
            )
            .found(crate::msg!("MIG is on with no instances, so CUDA cannot use {list}", list = list))
            .explain(crate::msg!("With MIG mode on, CUDA programs run only in MIG instances (a GPU instance with a compute instance); with none created the GPU is invisible to CUDA (\"no CUDA-capable device is detected\")."))
            .text(crate::msg!("List the instance profiles this GPU offers:"))
            .cmd(format!("sudo nvidia-smi mig -i {first} -lgip"))
            .text(crate::msg!("Create instances with the profiles you need, with their compute instances (-C); for example one instance using the whole GPU (profile 0):"))
            .cmd(format!("sudo nvidia-smi mig -i {first} -cgi 0 -C"))
            .text(crate::msg!("Or turn MIG off and reset the GPU (no process may be using it):"))
            .cmd(format!("sudo nvidia-smi -i {first} -mig 0"))
            .cmd(format!("sudo nvidia-smi --gpu-reset -i {first}"));
    }
    if on.is_empty() {
        c.verdict(Verdict::Pass, crate::msg!("MIG is off")).found(crate::msg!("MIG is off"))
    } else {
        c.verdict(
            Verdict::Info,
            crate::msg!(
                "MIG is on for {gpus}: CUDA sees its instances, selected with MIG- UUIDs in CUDA_VISIBLE_DEVICES (nvidia-smi -L lists them)",
                gpus = on.join(", ")
            ),
        )
        .found(crate::msg!("MIG is on"))
    }
}

pub(super) fn compute_mode(c: Check, cx: &Ctx) -> Check {
    let modes: Vec<(u32, String)> =
        cx.facts().iter().filter_map(|f| f.compute_mode.value().map(|m| (f.index, m.clone()))).collect();
    if modes.is_empty() {
        return c.verdict(Verdict::Skipped, crate::msg!("not reported"));
    }
    if let Some((i, _)) = modes.iter().find(|(_, m)| m == "Prohibited") {
        return c
            .verdict(
                Verdict::Fail,
                crate::msg!("GPU {i} is set to Prohibited: no program can create a CUDA context on it", i = i),
            )
            .found(crate::msg!("GPU {i} refuses all CUDA programs (compute mode Prohibited)", i = i))
            .cmd(format!("sudo nvidia-smi -i {i} -c DEFAULT"));
    }
    if let Some((i, _)) = modes.iter().find(|(_, m)| m == "ExclusiveProcess") {
        return c
            .verdict(
                Verdict::Info,
                crate::msg!(
                    "GPU {i} is exclusive-process: one program at a time ('all CUDA-capable devices are busy' for the next)",
                    i = i
                ),
            )
            .found(crate::msg!("GPU {i} serves one program at a time", i = i));
    }
    c.verdict(Verdict::Pass, crate::msg!("Default (shared)")).found(crate::msg!("Every GPU can be shared"))
}
