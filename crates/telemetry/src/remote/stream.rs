//! The `monitor --json` stream from a server, read line by line: bounded in line length, rate
//! and unreadable data (given up after [`MAX_GARBAGE`] bytes in a row), each line parsed field by
//! field into a [`Tick`] with at most [`MAX_GPUS`] GPUs and [`MAX_CORES`] cores; what could not be
//! read is counted and named. Fuzzed below.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;

use crate::msg;
use crate::telemetry::sample::{GpuSample, HostSample, MAX_CORES, MAX_GPUS};

/// The `schema` of `monitor --json` lines this build writes and reads best. Schema 2: a text of
/// gpu-doctor's own (a reason, a stalled call) may be a message object (docs/messages.md).
pub const STREAM_SCHEMA: u32 = 2;
/// The longest line read from the stream; a longer one is skipped and counted.
pub const MAX_LINE: usize = 1 << 20;
/// Lines read per second at most; more are dropped and counted.
pub const MAX_LINES_PER_SEC: u32 = 20;

/// The latest line's contents.
#[derive(Clone, Debug)]
pub(super) struct Tick {
    pub(super) at: Instant,
    pub(super) host: Option<HostSample>,
    pub(super) gpus: Vec<GpuSample>,
}

/// Where the stream reader leaves what it read.
#[derive(Clone, Default)]
pub(super) struct Sink {
    pub(super) latest: Arc<ArcSwapOption<Tick>>,
    pub(super) invalid: Arc<AtomicU64>,
    pub(super) dropped: Arc<AtomicU64>,
    pub(super) unread: Arc<Mutex<Vec<crate::i18n::Message>>>,
}

/// How much that is not a line of the stream (too long, not JSON) a server may send in a row
/// before the connection is given up as not gpu-doctor's stream.
pub const MAX_GARBAGE: usize = 16 * MAX_LINE;

/// How a stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StreamEnd {
    /// The server closed it (or reading failed).
    Closed,
    /// More than [`MAX_GARBAGE`] bytes in a row were not stream lines.
    Garbage,
}

/// Reads `monitor --json` lines: bounded in length and rate, each parsed field by field. Gives
/// up after [`MAX_GARBAGE`] bytes in a row that are not stream lines (endless data without a
/// line end, or no JSON at all): the connection is then closed and the failure shown, never a
/// "connecting…" that lasts forever.
pub(super) fn read_stream(out: impl Read, sink: &Sink, got: &AtomicBool) -> StreamEnd {
    let mut r = BufReader::new(out);
    let mut line = Vec::new();
    let mut second = Instant::now();
    let mut in_second = 0u32;
    let mut garbage = 0usize;
    loop {
        if garbage > MAX_GARBAGE {
            return StreamEnd::Garbage;
        }
        line.clear();
        let n = match (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return StreamEnd::Closed,
            Ok(n) => n,
        };
        if n > MAX_LINE && !line.ends_with(b"\n") {
            // Too long: count it and skip to the end of the line.
            sink.invalid.fetch_add(1, Ordering::Relaxed);
            garbage += n;
            let mut rest = Vec::new();
            loop {
                if garbage > MAX_GARBAGE {
                    return StreamEnd::Garbage;
                }
                rest.clear();
                match (&mut r).take(MAX_LINE as u64).read_until(b'\n', &mut rest) {
                    Ok(0) | Err(_) => return StreamEnd::Closed,
                    Ok(_) if rest.ends_with(b"\n") => break,
                    Ok(k) => garbage += k,
                }
            }
            continue;
        }
        if second.elapsed() >= Duration::from_secs(1) {
            second = Instant::now();
            in_second = 0;
        }
        in_second += 1;
        if in_second > MAX_LINES_PER_SEC {
            sink.dropped.fetch_add(1, Ordering::Relaxed);
            // (A real stream's lines between these reset the count: only a flood of nothing
            // readable adds up.)
            garbage += n;
            continue;
        }
        match parse_line(&line) {
            Some((tick, unread)) => {
                garbage = 0;
                got.store(true, Ordering::Relaxed);
                sink.latest.store(Some(Arc::new(tick)));
                if let Ok(mut u) = sink.unread.lock() {
                    *u = unread;
                }
            }
            None => {
                sink.invalid.fetch_add(1, Ordering::Relaxed);
                garbage += n;
            }
        }
    }
}

/// One stream line, field by field: `None` when it is not a JSON object; the fields that could
/// not be read are named.
fn parse_line(line: &[u8]) -> Option<(Tick, Vec<crate::i18n::Message>)> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let obj = v.as_object()?;
    let mut unread = Vec::new();
    match obj.get("schema").and_then(serde_json::Value::as_u64) {
        None => unread.push(msg!("an older gpu-doctor-cli (its lines carry no schema)")),
        Some(s) if s > u64::from(STREAM_SCHEMA) => unread.push(msg!(
            "a newer gpu-doctor-cli (stream schema {found}, this app reads {ours})",
            found = s,
            ours = STREAM_SCHEMA
        )),
        Some(_) => {}
    }
    let host = match obj.get("host") {
        None | Some(serde_json::Value::Null) => None,
        Some(h) => match serde_json::from_value::<HostSample>(h.clone()) {
            Ok(mut h) => {
                h.per_core_pct.truncate(MAX_CORES);
                Some(h)
            }
            Err(_) => {
                unread.push("host".into());
                None
            }
        },
    };
    let mut gpus = Vec::new();
    let listed = obj.get("gpus").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if listed.len() > MAX_GPUS {
        unread.push(msg!("{n} GPUs past the first {max}", n = listed.len() - MAX_GPUS, max = MAX_GPUS));
    }
    for (i, g) in listed.iter().take(MAX_GPUS).enumerate() {
        match serde_json::from_value::<GpuSample>(g.clone()) {
            Ok(g) => gpus.push(g),
            Err(_) => unread.push(crate::i18n::Message::data(format!("gpus[{i}]"))),
        }
    }
    Some((Tick { at: Instant::now(), host, gpus }, unread))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::remote::{RemoteInfo, RemoteState};

    #[test]
    fn stream_lines_are_read_field_by_field_and_bad_ones_are_counted() {
        let sink = Sink::default();
        let long = "x".repeat(MAX_LINE + 10);
        let text = format!(
            "not json\n{long}\n[1,2]\n{{\"schema\":99,\"host\":{{\"cpu_pct\":\"wrong\"}},\"gpus\":[{{\"index\":\"zero\"}}]}}\n"
        );
        let got = AtomicBool::new(false);
        read_stream(text.as_bytes(), &sink, &got);
        assert_eq!(sink.invalid.load(Ordering::Relaxed), 3, "not JSON, too long, not an object");
        assert!(got.load(Ordering::Relaxed));
        let unread = sink.unread.lock().map(|u| u.clone()).unwrap_or_default();
        let unread: Vec<String> = unread.iter().map(crate::i18n::Message::en).collect();
        assert!(unread.iter().any(|u| u.contains("schema 99")) && unread.contains(&"host".to_string()), "{unread:?}");
        assert!(unread.contains(&"gpus[0]".to_string()), "{unread:?}");
        // A flood is capped per second.
        let flood: String = (0..200).map(|_| "{\"schema\":1}\n").collect();
        read_stream(flood.as_bytes(), &sink, &got);
        assert!(sink.dropped.load(Ordering::Relaxed) >= 150, "{}", sink.dropped.load(Ordering::Relaxed));
    }

    /// Issue 33, item 6: endless data without a line end (1 MiB chunks forever) ends the
    /// connection as "not gpu-doctor's stream" after MAX_GARBAGE bytes, with the count shown,
    /// rather than "connecting…" forever; a line naming 1 300 GPUs keeps MAX_GPUS of them.
    #[test]
    fn a_hostile_stream_is_given_up_and_bounded() {
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                assert!(self.0 < 64 * MAX_GARBAGE, "the reader never gave up");
                buf.fill(b'x');
                Ok(buf.len())
            }
        }
        let sink = Sink::default();
        let got = AtomicBool::new(false);
        assert_eq!(read_stream(Endless(0), &sink, &got), StreamEnd::Garbage);
        assert!(!got.load(Ordering::Relaxed));
        let info = RemoteInfo {
            host: "gpu1".into(),
            state: RemoteState::Connecting { attempt: 1 },
            version: None,
            invalid_lines: sink.invalid.load(Ordering::Relaxed),
            dropped_lines: 0,
            unread: Vec::new(),
        };
        assert!(
            info.invalid_lines >= 1 && info.line().en().contains("unreadable lines skipped"),
            "{}",
            info.line().en()
        );
        // Lines of JSON that is not the stream, forever, are given up too.
        let junk: String = (0..60_000).map(|_| format!("[{}]\n", "1,".repeat(200) + "1")).collect();
        assert_eq!(read_stream(junk.as_bytes(), &Sink::default(), &got), StreamEnd::Garbage);
        let gpus: Vec<String> = (0..1300).map(|i| format!("{{\"index\":{i}}}")).collect();
        let line = format!("{{\"schema\":1,\"gpus\":[{}]}}", gpus.join(","));
        let (tick, unread) = parse_line(line.as_bytes()).unwrap_or_else(|| panic!("parsed"));
        assert!(tick.gpus.len() <= MAX_GPUS);
        assert!(unread.iter().any(|u| u.en().contains("past the first 64")), "{unread:?}");
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        /// One line a server (or something in its place) might send.
        fn line() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                // Stream lines with fields of any shape.
                (any::<u8>(), 0usize..200, "[ -~]{0,30}", any::<f64>()).prop_map(|(schema, gpus, name, x)| {
                    let g: Vec<String> = (0..gpus)
                        .map(|i| format!("{{\"index\":{i},\"util_gpu_pct\":{x:?},\"name\":{name:?}}}"))
                        .collect();
                    format!(
                        "{{\"schema\":{schema},\"host\":{{\"cpu_pct\":{x:?},\"per_core_pct\":[1,2]}},\"gpus\":[{}]}}\n",
                        g.join(",")
                    )
                    .into_bytes()
                }),
                // Any JSON-ish text, any bytes, an endless-looking line.
                "[ -~]{0,200}\n".prop_map(String::into_bytes),
                proptest::collection::vec(any::<u8>(), 0..400),
                (1usize..3).prop_map(|k| vec![b'{'; k * MAX_LINE / 2]),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

            /// Issue 33: the SSH stream reader on anything: it returns, never panics, and what
            /// it keeps is within its caps.
            #[test]
            fn the_stream_reader_takes_anything(lines in proptest::collection::vec(line(), 0..40)) {
                let bytes: Vec<u8> = lines.concat();
                let sink = Sink::default();
                let got = AtomicBool::new(false);
                let _ = read_stream(bytes.as_slice(), &sink, &got);
                if let Some(t) = sink.latest.load_full() {
                    prop_assert!(t.gpus.len() <= MAX_GPUS);
                    prop_assert!(t.host.as_ref().is_none_or(|h| h.per_core_pct.len() <= MAX_CORES));
                }
                for l in &lines {
                    let _ = parse_line(l);
                }
            }
        }
    }
}
