//! A process and its descendants from `/proc` (Linux): state, CPU time, resident memory and I/O
//! bytes, for "measure a run" and the stuck-job triage. Elsewhere the readers return nothing.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Clock ticks per second of the times in `/proc/PID/stat` (USER_HZ, 100 on every Linux ABI).
pub const TICKS_PER_SEC: f64 = 100.0;
/// Bytes per page for `/proc/PID/statm` (4 KiB on x86-64 and most arm64 kernels).
pub const PAGE: u64 = 4096;

/// One reading of one process.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcStat {
    /// Process id.
    pub pid: u32,
    /// Parent's process id.
    pub ppid: u32,
    /// Command name (`comm`).
    pub name: String,
    /// State letter: R running, S sleeping, D uninterruptible (I/O) wait, Z zombie, T stopped...
    pub state: char,
    /// CPU time used, seconds (user + system).
    pub cpu_secs: f64,
    /// CPU time of its children that have ended and been collected, seconds.
    pub children_cpu_secs: f64,
    /// Threads.
    pub threads: u32,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Bytes read from storage (`read_bytes` of /proc/PID/io; None when not readable).
    pub read_bytes: Option<u64>,
    /// Bytes written to storage.
    pub write_bytes: Option<u64>,
    /// All bytes read through read() calls, page cache included (`rchar`).
    pub rchar: Option<u64>,
}

/// Parses `/proc/PID/stat` (the command name may hold spaces and parentheses).
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let name = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] = state (field 3), rest[1] = ppid (4), rest[11] = utime (14), rest[12] = stime (15),
    // rest[17] = num_threads (20).
    let state = rest.first()?.chars().next()?;
    let ppid = rest.get(1)?.parse().ok()?;
    let utime: f64 = rest.get(11)?.parse().ok()?;
    let stime: f64 = rest.get(12)?.parse().ok()?;
    let threads = rest.get(17).and_then(|t| t.parse().ok()).unwrap_or(1);
    let cutime: f64 = rest.get(13).and_then(|t| t.parse().ok()).unwrap_or(0.0);
    let cstime: f64 = rest.get(14).and_then(|t| t.parse().ok()).unwrap_or(0.0);
    Some(ProcStat {
        pid,
        ppid,
        name,
        state,
        cpu_secs: (utime + stime) / TICKS_PER_SEC,
        children_cpu_secs: (cutime + cstime) / TICKS_PER_SEC,
        threads,
        ..ProcStat::default()
    })
}

/// Parses `/proc/PID/io` into (read_bytes, write_bytes, rchar).
pub fn parse_io(text: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let get = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key).and_then(|v| v.trim_start_matches(':').trim().parse().ok()))
    };
    (get("read_bytes"), get("write_bytes"), get("rchar"))
}

/// Reads one process under `root` (normally "/").
pub fn read(root: &Path, pid: u32) -> Option<ProcStat> {
    let dir = root.join("proc").join(pid.to_string());
    let mut s = parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)?;
    if let Ok(statm) = std::fs::read_to_string(dir.join("statm")) {
        s.rss_bytes = statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * PAGE;
    }
    if let Ok(io) = std::fs::read_to_string(dir.join("io")) {
        (s.read_bytes, s.write_bytes, s.rchar) = parse_io(&io);
    }
    Some(s)
}

/// `pid` and every descendant, read now.
pub fn tree(root: &Path, pid: u32) -> Vec<ProcStat> {
    trees(root, &[pid])
}

/// The processes of the trees under `roots` (each once), read now. The family is found from the
/// `stat` files alone (the parent is there); only its members are read in full (memory, I/O), so
/// the cost of a look stays with the job's size, not the machine's process count.
pub fn trees(root: &Path, roots: &[u32]) -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir(root.join("proc")) else { return Vec::new() };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in entries.filter_map(Result::ok).filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
    {
        let Ok(text) = std::fs::read_to_string(root.join("proc").join(pid.to_string()).join("stat")) else { continue };
        if let Some(s) = parse_stat(&text) {
            children.entry(s.ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut stack: Vec<u32> = roots.to_vec();
    let mut seen = std::collections::HashSet::new();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        if let Some(me) = read(root, p) {
            out.push(me);
        }
        stack.extend(children.get(&p).map(Vec::as_slice).unwrap_or(&[]));
    }
    out
}

/// CPU seconds (own plus collected children's) of every process in the trees of `roots`, each
/// process once, read now from the `stat` files alone (cheap enough for every slow tick). `None`
/// when `/proc` cannot be listed or none of `roots` is visible (another PID namespace: a
/// container).
pub fn trees_cpu_secs(root: &Path, roots: &[u32]) -> Option<Vec<(u32, f64)>> {
    let entries = std::fs::read_dir(root.join("proc")).ok()?;
    let all: Vec<ProcStat> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter_map(|p| {
            let text = std::fs::read_to_string(root.join("proc").join(p.to_string()).join("stat")).ok()?;
            parse_stat(&text)
        })
        .collect();
    if !roots.is_empty() && !roots.iter().any(|r| all.iter().any(|p| p.pid == *r)) {
        return None;
    }
    let mut children: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in all.iter().enumerate() {
        children.entry(p.ppid).or_default().push(i);
    }
    let by_pid: HashMap<u32, &ProcStat> = all.iter().map(|p| (p.pid, p)).collect();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<u32> = roots.to_vec();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        if let Some(me) = by_pid.get(&p) {
            out.push((p, me.cpu_secs + me.children_cpu_secs));
        }
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            stack.push(all[c].pid);
        }
    }
    Some(out)
}

/// A process and the CPU it used between two readings of [`all_cpu_secs`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub name: String,
    /// CPU use, % of one core.
    pub cpu_pct: f64,
}

/// Every visible process with its name and CPU seconds so far (own plus collected children's).
pub fn all_cpu_secs(root: &Path) -> Option<Vec<(u32, String, f64)>> {
    let entries = std::fs::read_dir(root.join("proc")).ok()?;
    Some(
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
            .filter_map(|p| {
                let text = std::fs::read_to_string(root.join("proc").join(p.to_string()).join("stat")).ok()?;
                parse_stat(&text).map(|s| (s.pid, s.name, s.cpu_secs))
            })
            .collect(),
    )
}

/// The `n` processes that used the most CPU between two readings of [`all_cpu_secs`] `dt`
/// seconds apart (own CPU only: a parent does not count its children twice), busiest first;
/// processes below 1 % are left out.
pub fn busiest_between(
    before: &[(u32, String, f64)],
    now: &[(u32, String, f64)],
    dt: f64,
    n: usize,
) -> Vec<BusyProcess> {
    if dt <= 0.0 {
        return Vec::new();
    }
    let old: HashMap<u32, f64> = before.iter().map(|(p, _, s)| (*p, *s)).collect();
    let mut out: Vec<BusyProcess> = now
        .iter()
        .filter_map(|(pid, name, secs)| {
            let pct = 100.0 * (secs - old.get(pid)?) / dt;
            (pct >= 1.0).then(|| BusyProcess { pid: *pid, name: name.clone(), cpu_pct: pct })
        })
        .collect();
    out.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct));
    out.truncate(n);
    out
}

/// CPU use between two readings of [`trees_cpu_secs`] `dt` seconds apart, % of one core: the
/// growth of every process present in both, plus all the CPU time of the trees' processes that
/// started in between (one that ended shows in its parent's collected time). None when no process
/// is in both readings.
pub fn cpu_pct_between(before: &[(u32, f64)], now: &[(u32, f64)], dt: f64) -> Option<f64> {
    if dt.is_nan() || dt <= 0.0 {
        return None;
    }
    let prev: HashMap<u32, f64> = before.iter().copied().collect();
    // No process in both readings (the job started after the first): nothing measured yet, which
    // is not 0 %.
    if !now.iter().any(|(p, _)| prev.contains_key(p)) {
        return None;
    }
    // A process of the trees that is new since the first reading was started by the job in
    // between (a data-loader worker, a shell's child): all its CPU time falls in the interval.
    let grown: f64 = now.iter().map(|(p, s)| prev.get(p).map_or(*s, |b| (s - b).max(0.0))).sum();
    Some(100.0 * grown / dt)
}

/// The state's short name (no explanation), a catalogue key: "sleeping", "uninterruptible wait".
pub fn state_short_key(c: char) -> &'static str {
    match c {
        'R' => crate::tr_key!("running"),
        'S' => crate::tr_key!("sleeping"),
        'D' => crate::tr_key!("uninterruptible wait"),
        'Z' => crate::tr_key!("zombie"),
        'T' | 't' => crate::tr_key!("stopped"),
        'I' => crate::tr_key!("idle"),
        'X' => crate::tr_key!("dead"),
        _ => crate::tr_key!("unknown"),
    }
}

/// The state in words with what it means, a catalogue key ([`state_words`] in the current
/// language).
pub fn state_words_key(c: char) -> &'static str {
    match c {
        'R' => crate::tr_key!("running"),
        'S' => crate::tr_key!("sleeping (waiting for an event)"),
        'D' => crate::tr_key!("uninterruptible wait (usually disk or network I/O)"),
        'Z' => crate::tr_key!("zombie (exited; its parent has not collected it)"),
        'T' | 't' => crate::tr_key!("stopped"),
        'I' => crate::tr_key!("idle"),
        'X' => crate::tr_key!("dead"),
        _ => crate::tr_key!("unknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let line = "4242 (python (worker) 1) D 4000 4242 4000 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 123 1000 200 18446744073709551615";
        let s = parse_stat(line).unwrap_or_default();
        assert_eq!((s.pid, s.ppid, s.name.as_str(), s.state, s.threads), (4242, 4000, "python (worker) 1", 'D', 7));
        assert!((s.cpu_secs - 3.0).abs() < 1e-9);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn the_busiest_processes_are_read_from_proc_and_ranked_by_cpu_between_readings() {
        let root = tempfile::tempdir().expect("temp dir");
        let write = |pid: u32, name: &str, ticks: u64| {
            let dir = root.path().join("proc").join(pid.to_string());
            std::fs::create_dir_all(&dir).expect("mkdir");
            let stat = format!("{pid} ({name}) R 1 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0 0 0 0");
            std::fs::write(dir.join("stat"), stat).expect("write");
        };
        write(10, "cargo", 1000);
        write(11, "idle thing", 50);
        write(12, "rustc", 200);
        let before = all_cpu_secs(root.path()).expect("a reading");
        assert_eq!(before.len(), 3);
        // 5 s later: cargo used 9 s (180 %), rustc 4.5 s (90 %), the idle one nothing; a process
        // that started in between has no earlier reading and is left out.
        write(10, "cargo", 1900);
        write(12, "rustc", 650);
        write(13, "new", 100);
        let now = all_cpu_secs(root.path()).expect("a reading");
        let top = busiest_between(&before, &now, 5.0, 3);
        let names: Vec<(&str, u32)> = top.iter().map(|p| (p.name.as_str(), p.cpu_pct.round() as u32)).collect();
        assert_eq!(names, [("cargo", 180), ("rustc", 90)]);
        assert!(busiest_between(&before, &now, 0.0, 3).is_empty());
        assert!(all_cpu_secs(&root.path().join("missing")).is_none());
    }

    #[test]
    fn parses_io() {
        let io =
            "rchar: 100\nwchar: 5\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), (Some(4096), Some(8192), Some(100)));
    }

    #[test]
    fn cpu_between_readings_counts_growth_and_processes_started_in_between() {
        let before = [(1, 10.0), (2, 5.0)];
        let now = [(1, 12.0), (2, 5.5)];
        assert_eq!(cpu_pct_between(&before, &now, 2.5), Some(100.0));
        // A worker the job started in between: all its CPU time is in the interval.
        let now = [(1, 12.0), (2, 5.5), (3, 0.5)];
        assert_eq!(cpu_pct_between(&before, &now, 2.5), Some(120.0));
        assert_eq!(cpu_pct_between(&before, &now, 0.0), None);
        // A process whose counter went back (a reused PID) adds nothing.
        assert_eq!(cpu_pct_between(&[(1, 10.0)], &[(1, 3.0)], 1.0), Some(0.0));
        // The job started after the first reading: nothing measured yet, not 0 %.
        assert_eq!(cpu_pct_between(&[], &[(7, 3.0), (8, 1.0)], 2.0), None);
        assert_eq!(cpu_pct_between(&[(5, 1.0)], &[(7, 3.0)], 2.0), None);
    }

    #[test]
    fn the_trees_cpu_covers_this_process_and_not_an_unknown_one() {
        let me = std::process::id();
        let t = trees_cpu_secs(Path::new("/"), &[me]).unwrap_or_default();
        assert!(t.iter().any(|(p, _)| *p == me), "{t:?}");
        assert_eq!(trees_cpu_secs(Path::new("/"), &[u32::MAX]), None);
        assert_eq!(trees_cpu_secs(Path::new("/"), &[]), Some(Vec::new()));
    }

    #[test]
    fn reads_this_process_and_its_children() {
        let me = std::process::id();
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let t = tree(Path::new("/"), me);
        assert!(t.iter().any(|p| p.pid == me && p.rss_bytes > 0));
        assert!(t.iter().any(|p| p.pid == child.id() && p.ppid == me && p.name == "sleep"), "{t:?}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
