//! Redaction for anything saved for sharing: host names, user names (also inside home paths), IP
//! and MAC addresses and, optionally, GPU UUIDs and serial numbers are replaced by tokens such as
//! `[host-1]`. The same value always gets the same token within one report, so support staff can
//! still tell "the same machine" or "two different users" apart.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// What to redact. Everything but GPU identifiers is on by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedactOptions {
    /// Master switch: false saves everything as it is.
    pub enabled: bool,
    /// The machine's host name (and its short form).
    pub hostname: bool,
    /// User names, wherever they appear, and the name part of home paths.
    pub users: bool,
    /// IPv4 and IPv6 addresses.
    pub ip: bool,
    /// MAC addresses.
    pub mac: bool,
    /// GPU UUIDs (`GPU-…`, `MIG-…`) and serial numbers.
    pub gpu_ids: bool,
}

impl Default for RedactOptions {
    fn default() -> Self {
        RedactOptions { enabled: true, hostname: true, users: true, ip: true, mac: true, gpu_ids: false }
    }
}

impl RedactOptions {
    /// Nothing redacted.
    pub fn off() -> Self {
        RedactOptions { enabled: false, ..RedactOptions::default() }
    }
}

/// The values known to be private on this machine (the patterns catch the rest).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Secrets {
    /// Host names.
    pub hostnames: Vec<String>,
    /// User names.
    pub users: Vec<String>,
    /// GPU serial numbers.
    pub serials: Vec<String>,
}

impl Secrets {
    /// This machine's host name and the current user (from the environment and the home
    /// directory's name).
    pub fn this_machine() -> Secrets {
        let mut s = Secrets::default();
        if let Some(h) = sysinfo::System::host_name().ok().filter(|h| !h.trim().is_empty()) {
            s.add_host(h.trim());
        }
        for var in ["USER", "USERNAME", "LOGNAME", "SUDO_USER"] {
            if let Ok(u) = std::env::var(var) {
                s.users.push(u);
            }
        }
        for var in ["HOME", "USERPROFILE"] {
            if let Some(name) = std::env::var_os(var)
                .and_then(|h| std::path::PathBuf::from(h).file_name().map(|n| n.to_string_lossy().into_owned()))
            {
                s.users.push(name);
            }
        }
        s.users.sort();
        s.users.dedup();
        s
    }

    /// A host name, and its short form too (`gpu7` of `gpu7.lab.example`): logs use either.
    fn add_host(&mut self, h: &str) {
        if let Some((short, _)) = h.split_once('.') {
            self.hostnames.push(short.to_string());
        }
        self.hostnames.push(h.to_string());
    }

    /// These secrets and the names of the machine a file came from (a capture's user, a bug
    /// report's host name): a report made from a user's file redacts that machine's names, not
    /// only the names of the machine making it.
    pub fn with_origin(mut self, origin: Option<&crate::diagnose::origin::Origin>) -> Secrets {
        if let Some(o) = origin {
            for h in &o.hostnames {
                self.add_host(h);
            }
            self.users.extend(o.users.iter().cloned());
            for v in [&mut self.hostnames, &mut self.users] {
                v.sort();
                v.dedup();
            }
        }
        self
    }
}

/// Home directories in paths ([`crate::text::HOME_PATH`]): group 2 is the user name.
use crate::text::HOME_PATH as HOME;
static MAC: LazyLock<Regex> =
    LazyLock::new(|| regex_or_never(r"\b[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){4}\b"));
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(
        r"\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\b",
    )
});
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    // Full or ::-compressed forms; a run of three or more colon-separated hex groups, or any run
    // with "::". Clock times (12:34:56) have two colons and no "::", so they stay.
    regex_or_never(
        r"(?i)\b(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}\b|(?:\b[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*\b)?",
    )
});
static GPU_UUID: LazyLock<Regex> = LazyLock::new(|| {
    regex_or_never(r"(?i)\b(?:GPU|MIG)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
});

/// Compiles one of this file's constant patterns (the tests compile each one).
#[allow(clippy::expect_used)]
fn regex_or_never(p: &str) -> Regex {
    Regex::new(p).expect("constant pattern")
}

/// Login and host names that are words of the data a report quotes (a distribution's name in
/// os-release, a vendor in a GPU's name, `/root` and `/dev` in paths, a container's default user).
/// Such a name, like one that is a word of the report's own texts ([`is_report_word`]), is
/// redacted only where it stands as a value — inside home paths, as a whole field, before or after
/// `@` in a prompt, after "host:"/"user:", as a syslog line's host — never as a word elsewhere
/// (`USER=nvidia` on Jetson boards, `USER=ubuntu` on cloud images, a host called `gpu`).
const COMMON_NAMES: &[&str] = &[
    "nvidia",
    "gpu",
    "gpus",
    "cuda",
    "home",
    "driver",
    "linux",
    "host",
    "localhost",
    "server",
    "node",
    "worker",
    "master",
    "lab",
    "data",
    "train",
    "ml",
    "ai",
    "jetson",
    "root",
    "admin",
    "administrator",
    "user",
    "users",
    "ubuntu",
    "debian",
    "centos",
    "ec2-user",
    "dev",
    "test",
    "guest",
    "nobody",
    "default",
    "public",
    "jovyan",
    "vscode",
    "runner",
    "docker",
];

/// Every word of the texts gpu-doctor itself writes (the English side of its message catalogue:
/// check titles, findings, fix steps, labels, help), lower-case, with the parts of hyphenated
/// words: derived from the texts, so a new message never needs a list kept by hand.
static REPORT_WORDS: LazyLock<std::collections::HashSet<String>> = LazyLock::new(|| {
    let mut words = std::collections::HashSet::new();
    let texts = crate::i18n::zh_catalogue().keys().chain(crate::i18n::zh_help_catalogue().keys());
    for text in texts {
        for w in text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.')) {
            let w = w.trim_matches(|c: char| c == '.' || c == '-' || c == '_').to_lowercase();
            if w.is_empty() {
                continue;
            }
            for part in w.split(['-', '_', '.']).filter(|p| !p.is_empty()) {
                words.insert(part.to_string());
            }
            words.insert(w);
        }
    }
    words
});

/// Whether `name` is a word of gpu-doctor's own texts (see [`REPORT_WORDS`]) or of the data a
/// report quotes ([`COMMON_NAMES`]): then it is redacted only where it stands as a value.
pub fn is_report_word(name: &str) -> bool {
    let n = name.trim().to_lowercase();
    COMMON_NAMES.contains(&n.as_str()) || REPORT_WORDS.contains(&n)
}

/// A redaction token (`[user-1]`, `[host-2]`) in `text`: a command holding one cannot be run as
/// shown.
pub fn has_token(text: &str) -> bool {
    static TOKEN: LazyLock<Regex> = LazyLock::new(|| regex_or_never(r"\[(?:host|user|ip|mac|gpu-uuid|serial)-\d+\]"));
    TOKEN.is_match(text)
}

/// Replaces private values by stable tokens.
#[derive(Clone, Debug)]
pub struct Redactor {
    opts: RedactOptions,
    secrets: Secrets,
    /// Host and user names that are common words, redacted in value positions only.
    value_only: Vec<(&'static str, Regex, String)>,
    tokens: HashMap<(&'static str, String), String>,
    counts: HashMap<&'static str, usize>,
}

impl Redactor {
    /// A redactor for these secrets.
    pub fn new(opts: RedactOptions, mut secrets: Secrets) -> Redactor {
        let common = |s: &String| is_report_word(s);
        let mut value_only = Vec::new();
        for (kind, list) in [("host", &secrets.hostnames), ("user", &secrets.users)] {
            for name in list.iter().filter(|n| common(n)) {
                let n = regex::escape(name.trim());
                // Group 2 is the name: after "@" (host), before "@" (user), after "host:"/"user:",
                // and a syslog line's host after its time ("Jan 25 10:31:17 gpu kernel: ...").
                // Never a word at the end of a field ("CUDA programs see every gpu").
                let patterns = if kind == "host" {
                    vec![format!(
                        r"(?i)(@|\bhost(?:\s*name)?\s*[:=]\s*|\b\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d)?\s+)({n})\b(?:[^-.]|$)"
                    )]
                } else {
                    vec![
                        format!(r"(?i)(\buser(?:\s*name)?\s*[:=]\s*)({n})\b"),
                        format!(r"(?i)(^|[\s(])({n})@"),
                        // The user a command acts on: `usermod -aG video NAME`.
                        format!(r"(?i)(\busermod\s+-a?G\s+\S+\s+)({n})\b"),
                    ]
                };
                for pattern in patterns {
                    if let Ok(re) = Regex::new(&pattern) {
                        value_only.push((kind, re, name.trim().to_string()));
                    }
                }
            }
        }
        // Longest first, so "node1.example.org" is replaced before "node1".
        secrets.users.retain(|u| !common(u));
        secrets.hostnames.retain(|h| !common(h));
        for v in [&mut secrets.hostnames, &mut secrets.users, &mut secrets.serials] {
            v.retain(|s| !s.trim().is_empty());
            v.sort_by_key(|s| std::cmp::Reverse(s.len()));
            v.dedup();
        }
        Redactor { opts, secrets, value_only, tokens: HashMap::new(), counts: HashMap::new() }
    }

    /// The options in force.
    pub fn options(&self) -> RedactOptions {
        self.opts
    }

    fn token(&mut self, kind: &'static str, value: &str) -> String {
        let key = (kind, value.to_lowercase());
        if let Some(t) = self.tokens.get(&key) {
            return t.clone();
        }
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        let t = format!("[{kind}-{n}]");
        self.tokens.insert(key, t.clone());
        t
    }

    /// The replacements made so far, for the preview: (kind, token, how many distinct values).
    pub fn summary(&self) -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = self.counts.iter().map(|(k, n)| ((*k).to_string(), *n)).collect();
        v.sort();
        v
    }

    /// Redacts one field that may be a name as a whole ("gpu" as the value of "Host name").
    pub fn text(&mut self, s: &str) -> String {
        self.redact(s, true)
    }

    /// Redacts a message: its data (each value in it: a path, a user name, a host) as
    /// [`Redactor::text`] does; its words are the program's own and stay.
    pub fn message(&mut self, m: &crate::i18n::Message) -> crate::i18n::Message {
        m.map_data(&mut |t| self.text(t))
    }

    /// Redacts the names inside a text that is not itself a name (a label, a verdict, a sentence,
    /// a fact other than the host name): a name that is a word ("Kernel" with USER=kernel, "INFO"
    /// with USER=info) is never taken for the whole field; names are still redacted where they
    /// stand as values in it, and distinctive names anywhere.
    pub fn inside(&mut self, s: &str) -> String {
        self.redact(s, false)
    }

    fn redact(&mut self, s: &str, whole_field: bool) -> String {
        if !self.opts.enabled {
            return s.to_string();
        }
        let mut out = s.to_string();
        if self.opts.gpu_ids {
            out = self.replace_re(&GPU_UUID, &out, "gpu-uuid");
            for serial in self.secrets.serials.clone() {
                out = self.replace_literal(&out, &serial, "serial", false);
            }
        }
        if self.opts.users {
            out = self.replace_homes(&out);
        }
        if self.opts.hostname {
            for h in self.secrets.hostnames.clone() {
                // Short names ("vm", "gpu") only as whole words: inside other words they are not
                // the host name.
                let short = h.chars().count() <= 4;
                out = self.replace_literal(&out, &h, "host", short);
            }
        }
        if self.opts.users {
            for u in self.secrets.users.clone() {
                out = self.replace_literal(&out, &u, "user", true);
            }
        }
        for (kind, re, name) in self.value_only.clone() {
            if (kind == "host" && !self.opts.hostname) || (kind == "user" && !self.opts.users) {
                continue;
            }
            if whole_field && out.trim().eq_ignore_ascii_case(&name) {
                // The whole field is the name ("Host name: gpu" as a fact row's value).
                out = out.replacen(out.trim(), &self.token(kind, &name), 1);
                continue;
            }
            out = self.replace_group(&re, &out, kind);
        }
        if self.opts.mac {
            out = self.replace_re(&MAC, &out, "mac");
        }
        if self.opts.ip {
            out = self.replace_re(&IPV4, &out, "ip");
            out = self.replace_ipv6(&out);
        }
        out
    }

    /// Redacts every string (and object key) in a JSON value.
    pub fn json(&mut self, v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => *s = self.text(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.json(x)),
            serde_json::Value::Object(m) => {
                let old = std::mem::take(m);
                for (k, mut x) in old {
                    self.json(&mut x);
                    m.insert(self.text(&k), x);
                }
            }
            _ => {}
        }
    }

    fn replace_re(&mut self, re: &Regex, s: &str, kind: &'static str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for m in re.find_iter(s) {
            out.push_str(&s[last..m.start()]);
            out.push_str(&self.token(kind, m.as_str()));
            last = m.end();
        }
        out.push_str(&s[last..]);
        out
    }

    /// Replaces capture group 2 of each match (the name in its value position).
    fn replace_group(&mut self, re: &Regex, s: &str, kind: &'static str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        let spans: Vec<(usize, usize, String)> = re
            .captures_iter(s)
            .filter_map(|c| c.get(2).map(|m| (m.start(), m.end(), m.as_str().to_string())))
            .collect();
        for (start, end, name) in spans {
            out.push_str(&s[last..start]);
            out.push_str(&self.token(kind, &name));
            last = end;
        }
        out.push_str(&s[last..]);
        out
    }

    fn replace_ipv6(&mut self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for m in IPV6.find_iter(s) {
            // A lone "::" (C++ scopes, Rust paths) is not an address.
            if m.as_str() == "::" {
                continue;
            }
            out.push_str(&s[last..m.start()]);
            out.push_str(&self.token("ip", m.as_str()));
            last = m.end();
        }
        out.push_str(&s[last..]);
        out
    }

    fn replace_homes(&mut self, s: &str) -> String {
        self.replace_group(&HOME, s, "user")
    }

    /// Replaces every case-insensitive occurrence of `needle`; `word` requires it not to be part
    /// of a longer word (user names like "dev" must not eat "device").
    fn replace_literal(&mut self, s: &str, needle: &str, kind: &'static str, word: bool) -> String {
        if needle.is_empty() {
            return s.to_string();
        }
        let lower = s.to_lowercase();
        let n = needle.to_lowercase();
        // Lower-casing can change byte lengths (rare scripts); fall back to exact matching then.
        let (hay, pat) = if lower.len() == s.len() && n.len() == needle.len() {
            (lower, n)
        } else {
            (s.to_string(), needle.to_string())
        };
        let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        let mut from = 0;
        while let Some(pos) = hay[from..].find(&pat) {
            let start = from + pos;
            let end = start + pat.len();
            let ok = !word || (!is_word(s[..start].chars().next_back()) && !is_word(s[end..].chars().next()));
            if ok && s.is_char_boundary(start) && s.is_char_boundary(end) {
                out.push_str(&s[last..start]);
                let t = self.token(kind, &s[start..end]);
                out.push_str(&t);
                last = end;
            }
            from = end;
        }
        out.push_str(&s[last..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redaction_token_is_found_and_a_plain_command_has_none() {
        assert!(has_token("sudo usermod -aG video [user-1]"));
        assert!(has_token("ssh [host-12] nvidia-smi"));
        assert!(!has_token("sudo usermod -aG video alice"));
        assert!(!has_token("arr[user-x] and [1]"));
    }

    #[test]
    fn names_that_are_words_of_this_domain_are_redacted_only_as_values() {
        // USER=nvidia (Jetson boards), host "gpu", HOME=/tmp/x/home: the report's own words stay.
        let secrets = Secrets {
            hostnames: vec!["gpu".into()],
            users: vec!["nvidia".into(), "home".into(), "cuda".into()],
            serials: Vec::new(),
        };
        let mut red = Redactor::new(RedactOptions::default(), secrets);
        for text in [
            "# gpu-doctor report",
            "the NVIDIA Container Toolkit; /proc/driver/nvidia/version",
            "GPU-00000000-1111-2222-3333-444444444444 on GPU 0",
            "/home/alice/lib",
            "CUDA 12.4, cuda-toolkit, libcuda.so.1",
        ] {
            let out = red.text(text);
            assert!(
                !out.contains("[host-") && !out.contains("[user-1]") || text.starts_with("/home"),
                "{text} -> {out}"
            );
            assert!(
                out.to_lowercase().contains("nvidia") || !text.to_lowercase().contains("nvidia"),
                "{text} -> {out}"
            );
        }
        assert_eq!(red.text("/home/alice/lib"), "/home/[user-1]/lib");
        // As values they are still redacted.
        assert_eq!(red.text("gpu"), "[host-1]");
        assert!(
            red.text("nvidia@gpu:~$ nvidia-smi").starts_with("[user-2]@[host-1]:~$ nvidia-smi"),
            "{}",
            red.text("nvidia@gpu:~$ nvidia-smi")
        );
        assert_eq!(red.text("Host name: gpu"), "Host name: [host-1]");
        assert_eq!(red.text("user: nvidia"), "user: [user-2]");
        assert_eq!(red.text("/home/nvidia/models"), "/home/[user-2]/models");
    }

    fn r(opts: RedactOptions) -> Redactor {
        Redactor::new(
            opts,
            Secrets {
                hostnames: vec!["gpu-node-07.lab.example.org".into(), "gpu-node-07".into()],
                users: vec!["alice".into(), "bob".into()],
                serials: vec!["1652320012345".into()],
            },
        )
    }

    #[test]
    fn every_pattern_compiles() {
        for re in [&*HOME, &*MAC, &*IPV4, &*IPV6, &*GPU_UUID] {
            assert!(!re.as_str().is_empty());
        }
    }

    #[test]
    fn short_host_names_as_whole_words() {
        let mut red =
            Redactor::new(RedactOptions::default(), Secrets { hostnames: vec!["vm".into()], ..Secrets::default() });
        assert_eq!(red.text("Host name: vm; vmstat"), "Host name: [host-1]; vmstat");
    }

    #[test]
    fn common_login_names_stay_words() {
        let mut red =
            Redactor::new(RedactOptions::default(), Secrets { users: vec!["root".into()], ..Secrets::default() });
        assert_eq!(red.text("root cause in /dev/nvidia0"), "root cause in /dev/nvidia0");
        assert_eq!(red.text("/home/root/x"), "/home/[user-1]/x");
    }

    #[test]
    fn replaces_consistently() {
        let mut red = r(RedactOptions::default());
        let out =
            red.text("alice@gpu-node-07.lab.example.org:/home/alice/run$ ping 10.1.2.3 from 10.1.2.3 and 10.1.2.4");
        assert_eq!(out, "[user-1]@[host-1]:/home/[user-1]/run$ ping [ip-1] from [ip-1] and [ip-2]");
        // The same value keeps its token across calls.
        assert_eq!(red.text("GPU-NODE-07 says hi to alice"), "[host-2] says hi to [user-1]");
    }

    #[test]
    fn words_and_look_alikes_survive() {
        let mut red = r(RedactOptions::default());
        let s = "device 0 at 00000000:17:00.0, driver 550.54.15, 12:34:56, Windows 31.0.15.5222, std::vec";
        assert_eq!(red.text(s), s);
    }

    #[test]
    fn macs_ipv6_windows_homes() {
        let mut red = r(RedactOptions::default());
        assert_eq!(red.text("ether 00:1a:2b:3c:4d:5e"), "ether [mac-1]");
        assert_eq!(red.text("inet6 fe80::1c2:3dff:fe4e:5f60/64"), "inet6 [ip-1]/64");
        assert_eq!(red.text("addr 2001:db8:85a3:0:0:8a2e:370:7334"), "addr [ip-2]");
        assert_eq!(red.text(r"C:\Users\Bob\AppData"), r"C:\Users\[user-1]\AppData");
        assert_eq!(red.text("/Users/carol/x"), "/Users/[user-2]/x");
    }

    #[test]
    fn gpu_ids_only_when_asked() {
        let id = "GPU-8f6e2a4c-1b3d-4e5f-9a7b-0c1d2e3f4a5b";
        let mut red = r(RedactOptions::default());
        assert_eq!(red.text(id), id);
        let mut red = r(RedactOptions { gpu_ids: true, ..RedactOptions::default() });
        assert_eq!(red.text(&format!("{id} serial 1652320012345")), "[gpu-uuid-1] serial [serial-1]");
    }

    #[test]
    fn off_changes_nothing_and_json_is_walked() {
        let mut red = r(RedactOptions::off());
        assert_eq!(red.text("alice 10.0.0.1"), "alice 10.0.0.1");
        let mut red = r(RedactOptions::default());
        let mut v = serde_json::json!({"user": "alice", "paths": ["/home/alice"], "alice": 1, "n": 3});
        red.json(&mut v);
        assert_eq!(v, serde_json::json!({"user": "[user-1]", "paths": ["/home/[user-1]"], "[user-1]": 1, "n": 3}));
    }
}
