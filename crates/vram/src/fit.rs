//! The fit verdict: what of an estimate must fit on a GPU ([`need`]), and whether it does on a
//! given GPU, keeping [`HEADROOM`] ([`Target`], [`fit()`] → [`Fit`]). When the card is big
//! enough but other processes hold the memory, the verdict says so and names them, largest first
//! ([`FITS_ONCE_FREED`], [`Fit::to_stop`]). Shared by the `vram` command and the app's VRAM tab.

use serde::{Deserialize, Serialize};

use super::breakdown::{Breakdown, GIB};
use super::workload::{Framework, Mode, Workload};
use crate::i18n::Message;
use crate::telemetry::sample::{GpuInfo, GpuSample};

/// Per-GPU bytes that must fit for `s`: the high end of the total's range, except vLLM, which takes its
/// reservation anyway and only needs room for weights, activations and the requested KV cache.
pub fn need(b: &Breakdown, s: &Workload) -> f64 {
    if s.mode == Mode::Inference && s.framework == Framework::Vllm {
        b.weights + b.activations + b.framework + b.kv_cache
    } else {
        // Judged on the high end of the range.
        b.total.max(b.high)
    }
}

/// A process holding memory on a GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Holder {
    /// Process name ("python serve.py").
    pub name: String,
    /// Process id.
    pub pid: u32,
    /// Memory it holds, bytes (unknown under Windows WDDM and in WSL).
    pub bytes: Option<f64>,
}

impl Holder {
    /// "`python serve.py` (pid 4242)".
    pub fn phrase(&self) -> Message {
        crate::msg!("`{name}` (pid {pid})", name = &self.name, pid = self.pid)
    }
}

/// A GPU to judge the estimate against.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    /// "GPU 0 NVIDIA GeForce RTX 4090" or "hypothetical 24 GiB GPU" (a demo GPU's name is a
    /// catalogue text, shown in the reader's language).
    pub name: Message,
    /// Memory processes can have, bytes: the card's total less what the driver keeps for itself
    /// where NVML says it ([`Target::of_gpu`]), or the size the user gave.
    pub total: f64,
    /// The card's total as NVML reports it, bytes, where it is larger than `total` (drivers from
    /// R510 on count their own reservation in it): the size the verdict names the card by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_total: Option<f64>,
    /// Free right now, bytes (this machine only).
    pub free: Option<f64>,
    /// The processes holding memory on it now (this machine only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<Holder>,
}

impl Target {
    /// A GPU of this machine as a target: its total and free memory and the processes holding
    /// memory on it, from its inventory entry and latest sample. None when its total is unknown.
    /// `suffix` is added to the name (the app marks demo GPUs).
    ///
    /// The total is what processes can have: drivers from R510 on count the memory the driver
    /// reserves for itself in the card's total (an A100 80GB: 81920 MiB, where earlier drivers
    /// said 81251 MiB) and leave it out of used and free, so used + free is the smaller figure
    /// when a sample has both.
    pub fn of_gpu(info: &GpuInfo, sample: Option<&GpuSample>, suffix: Message) -> Option<Target> {
        let card = info.vram_total_bytes.get().filter(|t| *t > 0)?;
        let usable = sample.and_then(|s| Some(s.vram_used_bytes.get()? + s.vram_free_bytes.get()?));
        let total = usable.filter(|u| *u > 0).map_or(card, |u| u.min(card));
        let card_total = (total < card).then_some(card as f64);
        let holders = sample
            .and_then(|s| s.processes.value())
            .map(|ps| {
                ps.iter()
                    .map(|p| Holder { name: p.name.clone(), pid: p.pid, bytes: p.vram_bytes.get().map(|b| b as f64) })
                    .collect()
            })
            .unwrap_or_default();
        Some(Target {
            name: Message::join(
                [Message::data(format!("GPU {} ", info.index)), Message::new(&info.name), suffix],
                &Message::default(),
            ),
            total: total as f64,
            card_total,
            free: sample.and_then(|s| s.vram_free_bytes.get()).map(|b| b as f64),
            holders,
        })
    }
}

/// How an estimate fits a GPU, from best to worst. Serialised as the words the JSON has always
/// carried (`"fits"`, `"fits once freed"` ...); shown with [`FitVerdict::word`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum FitVerdict {
    /// Fits with the 20 % headroom kept.
    #[serde(rename = "fits")]
    Fits,
    /// Fits, but without the headroom.
    #[serde(rename = "tight")]
    Tight,
    /// The card's total would do (with the headroom) but other processes hold too much of it now.
    #[serde(rename = "fits once freed")]
    FitsOnceFreed,
    /// The total would do only without the headroom, and others hold memory now.
    #[serde(rename = "does not fit now")]
    DoesNotFitNow,
    /// More than the card has.
    #[serde(rename = "does not fit")]
    DoesNotFit,
}

impl FitVerdict {
    /// The verdict in a word, rendered where it is shown (the CLI and the app show it in capitals).
    pub fn word(self) -> Message {
        match self {
            FitVerdict::Fits => crate::msg!("fits"),
            FitVerdict::Tight => crate::msg!("tight"),
            FitVerdict::FitsOnceFreed => crate::msg!("fits once freed"),
            FitVerdict::DoesNotFitNow => crate::msg!("does not fit now"),
            FitVerdict::DoesNotFit => crate::msg!("does not fit"),
        }
    }

    /// The verdict on the scale every part of gpu-doctor shows (colours, exit codes).
    pub fn verdict(self) -> crate::verdict::Verdict {
        use crate::verdict::Verdict;
        match self {
            FitVerdict::Fits => Verdict::Pass,
            FitVerdict::Tight | FitVerdict::FitsOnceFreed => Verdict::Warn,
            FitVerdict::DoesNotFitNow | FitVerdict::DoesNotFit => Verdict::Fail,
        }
    }
}

/// How an estimate fits a GPU.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The GPU.
    pub target: Target,
    /// How it fits.
    pub verdict: FitVerdict,
    /// What the verdict rests on, as a message (JSON: `detail`, its English text, and
    /// `detail_message`, the key and arguments).
    pub detail: Message,
    /// The processes to stop for it to fit, largest first (empty when it fits now or never).
    pub to_stop: Vec<Holder>,
}

impl Serialize for Fit {
    /// `detail` is the English text (as every text field of `--json`), `detail_message` the same
    /// as data, for a reader in another language; `to_stop` only when there is something to stop.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("Fit", 5)?;
        st.serialize_field("target", &self.target)?;
        st.serialize_field("verdict", &self.verdict)?;
        st.serialize_field("detail", &self.detail.en())?;
        st.serialize_field("detail_message", &self.detail)?;
        if self.to_stop.is_empty() {
            st.skip_field("to_stop")?;
        } else {
            st.serialize_field("to_stop", &self.to_stop)?;
        }
        st.end()
    }
}

impl Fit {
    /// Whether the memory others hold is what stands in the way (the solver then works against
    /// the card's total: "with the card free"): it fits once freed, or it does not fit and others
    /// hold more than 5 % of the card.
    pub fn blocked_by_others(&self) -> bool {
        matches!(self.verdict, FitVerdict::FitsOnceFreed | FitVerdict::DoesNotFitNow)
            || (self.verdict == FitVerdict::DoesNotFit
                && self.target.free.is_some_and(|f| f < self.target.total * 0.95))
    }

    /// Bytes per GPU the solver may plan for, within the headroom: the free memory, or the total
    /// when others' memory is what stands in the way ([`Fit::blocked_by_others`]).
    pub fn capacity(&self) -> f64 {
        let t = &self.target;
        let room = if self.blocked_by_others() { t.total } else { t.free.unwrap_or(t.total) };
        room * (1.0 - HEADROOM)
    }
}

/// Headroom the calculator keeps: the 20-30 % rule of thumb for allocator fragmentation and
/// peaks the estimate does not model.
pub const HEADROOM: f64 = 0.2;

/// "a", "a and b", "a, b and c".
pub(super) fn and_list(items: &[Message]) -> Message {
    match items {
        [] => Message::new(""),
        [one] => one.clone(),
        [rest @ .., last] => {
            // "a, b and c" / "a、b 和 c": each language joins the list its own way.
            let mut joined = rest[0].clone();
            for next in &rest[1..] {
                joined = crate::msg!("{first}, {next}", first = joined, next = next.clone());
            }
            crate::msg!("{rest} and {last}", rest = joined, last = last.clone())
        }
    }
}

/// The holders of `t` largest first, only as many as it takes to make `room` bytes free (all of
/// them when their sizes are unknown or do not add up).
fn holders_to_stop(t: &Target, free: f64, room: f64) -> Vec<Holder> {
    let mut all = t.holders.clone();
    all.sort_by(|a, b| b.bytes.unwrap_or(0.0).total_cmp(&a.bytes.unwrap_or(0.0)));
    let mut freed = free;
    let mut out = Vec::new();
    for h in &all {
        if freed >= room {
            break;
        }
        freed += h.bytes.unwrap_or(0.0);
        out.push(h.clone());
    }
    if freed < room { all } else { out }
}

/// "once `python serve.py` (pid 4242) is stopped", or "once other processes free their memory".
fn once_stopped(to_stop: &[Holder]) -> Message {
    match to_stop {
        [] => crate::msg!("once other processes free their memory"),
        [one] => crate::msg!("once {process} is stopped", process = one.phrase()),
        many => crate::msg!(
            "once {processes} are stopped",
            processes = and_list(&many.iter().map(Holder::phrase).collect::<Vec<_>>())
        ),
    }
}

/// Judges `need` bytes per GPU against `t`.
pub fn fit(need: f64, t: &Target) -> Fit {
    let room = t.free.unwrap_or(t.total);
    let free = t.free.is_some();
    let (need_gib, room_gib) = (format!("{:.1}", need / GIB), format!("{:.1}", room / GIB));
    let mut to_stop = Vec::new();
    let (verdict, detail) = if need <= room * (1.0 - HEADROOM) {
        let detail = if free {
            crate::msg!("{need} GiB of {room} GiB free with the 20 % headroom kept", need = need_gib, room = room_gib)
        } else {
            crate::msg!("{need} GiB of {room} GiB with the 20 % headroom kept", need = need_gib, room = room_gib)
        };
        (FitVerdict::Fits, detail)
    } else if need <= room {
        let detail = if free {
            crate::msg!(
                "{need} GiB of {room} GiB free: fits, but without the 20 % headroom a longer input or a second process can run out of memory",
                need = need_gib,
                room = room_gib
            )
        } else {
            crate::msg!(
                "{need} GiB of {room} GiB: fits, but without the 20 % headroom a longer input or a second process can run out of memory",
                need = need_gib,
                room = room_gib
            )
        };
        (FitVerdict::Tight, detail)
    } else if need <= t.total * (1.0 - HEADROOM) {
        to_stop = holders_to_stop(t, room, need / (1.0 - HEADROOM));
        (
            FitVerdict::FitsOnceFreed,
            crate::msg!(
                "fits this {total} GiB card {once} (needs {need} GiB; only {free} GiB is free now, other processes hold the rest)",
                total = format!("{:.0}", t.card_total.unwrap_or(t.total) / GIB),
                once = once_stopped(&to_stop),
                need = need_gib,
                free = room_gib
            ),
        )
    } else if need <= t.total {
        to_stop = holders_to_stop(t, room, need);
        (
            FitVerdict::DoesNotFitNow,
            crate::msg!(
                "needs {need} GiB but only {free} GiB is free of {total} GiB; it would fit, without the 20 % headroom, {once}",
                need = need_gib,
                free = room_gib,
                total = format!("{:.1}", t.total / GIB),
                once = once_stopped(&to_stop)
            ),
        )
    } else {
        let detail = match t.card_total {
            Some(card) => crate::msg!(
                "needs {need} GiB; processes can have {total} GiB of this {card} GiB GPU (the driver keeps the rest)",
                need = need_gib,
                total = format!("{:.1}", t.total / GIB),
                card = format!("{:.1}", card / GIB)
            ),
            None => crate::msg!(
                "needs {need} GiB, the GPU has {total} GiB",
                need = need_gib,
                total = format!("{:.1}", t.total / GIB)
            ),
        };
        (FitVerdict::DoesNotFit, detail)
    };
    Fit { target: t.clone(), verdict, detail, to_stop }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 24 GiB card with 1 GiB free: `python serve.py` holds 20 GiB, `Xorg` 3 GiB.
    pub(crate) fn busy_card() -> Target {
        Target {
            name: Message::data("GPU 0 RTX 4090"),
            total: 24.0 * GIB,
            card_total: None,
            free: Some(GIB),
            holders: vec![
                Holder { name: "Xorg".into(), pid: 900, bytes: Some(3.0 * GIB) },
                Holder { name: "python serve.py".into(), pid: 4242, bytes: Some(20.0 * GIB) },
            ],
        }
    }

    #[test]
    fn a_gpu_of_this_machine_offers_what_processes_can_have_not_the_drivers_reservation() {
        use crate::telemetry::Reading;
        // An idle A100 80GB under an R510+ driver: the total counts the 669 MiB the driver keeps,
        // used and free leave it out.
        const MIB: u64 = 1_048_576;
        let mut info = crate::telemetry::sample::GpuInfo::unavailable(0, "x");
        info.name = "NVIDIA A100-SXM4-80GB".into();
        info.vram_total_bytes = Reading::Value(81920 * MIB);
        let mut s = crate::telemetry::sample::GpuSample::unavailable(0, crate::telemetry::sample::GpuHealth::Ok, "x");
        s.vram_used_bytes = Reading::Value(4 * MIB);
        s.vram_free_bytes = Reading::Value(81247 * MIB);
        let t = Target::of_gpu(&info, Some(&s), Message::default()).unwrap();
        assert_eq!(t.total, (81251 * MIB) as f64);
        assert_eq!(t.card_total, Some((81920 * MIB) as f64));
        // 80.5 GiB needed: more than processes can have on this card, though less than its total.
        let f = fit(80.5 * GIB, &t);
        assert_eq!(f.verdict, FitVerdict::DoesNotFit, "{}", f.detail.en());
        assert_eq!(
            f.detail.en(),
            "needs 80.5 GiB; processes can have 79.3 GiB of this 80.0 GiB GPU (the driver keeps the rest)"
        );
        // Once freed: the card is named by its size as nvidia-smi gives it.
        let mut busy = t.clone();
        busy.free = Some(10.0 * GIB);
        busy.holders = vec![Holder { name: "python serve.py".into(), pid: 4242, bytes: Some(60.0 * GIB) }];
        let f = fit(40.0 * GIB, &busy);
        assert!(f.detail.en().starts_with("fits this 80 GiB card once"), "{}", f.detail.en());
        // Without a sample (or without used), the card's total is all there is to go on.
        assert_eq!(Target::of_gpu(&info, None, Message::default()).unwrap().total, (81920 * MIB) as f64);
        s.vram_used_bytes = Reading::na("not supported");
        assert_eq!(Target::of_gpu(&info, Some(&s), Message::default()).unwrap().total, (81920 * MIB) as f64);
    }

    #[test]
    fn a_model_that_fits_the_card_but_not_what_is_free_fits_once_the_holders_stop() {
        let f = fit(15.0 * GIB, &busy_card());
        assert_eq!(f.verdict, FitVerdict::FitsOnceFreed);
        assert!(
            f.detail.en().starts_with("fits this 24 GiB card once `python serve.py` (pid 4242) is stopped"),
            "{}",
            f.detail.en()
        );
        // Stopping the largest is enough: Xorg is not named.
        assert_eq!(f.to_stop.iter().map(|h| h.pid).collect::<Vec<_>>(), [4242]);
        assert!(f.blocked_by_others());
        assert!((f.capacity() - 24.0 * GIB * (1.0 - HEADROOM)).abs() < 1.0);
        // Unknown sizes: every holder is named, largest known first.
        let mut t = busy_card();
        t.holders.iter_mut().for_each(|h| h.bytes = None);
        let f = fit(15.0 * GIB, &t);
        assert_eq!(f.to_stop.len(), 2);
        assert!(f.detail.en().contains(" are stopped"), "{}", f.detail.en());
        // Too big for the card in any case: no one to stop.
        let f = fit(30.0 * GIB, &busy_card());
        assert_eq!(f.verdict, FitVerdict::DoesNotFit);
        assert!(f.to_stop.is_empty());
        // Fits now: the free memory is what the solver plans for.
        let f = fit(0.5 * GIB, &busy_card());
        assert_eq!(f.verdict, FitVerdict::Fits);
        assert!((f.capacity() - GIB * (1.0 - HEADROOM)).abs() < 1.0);
    }
}
