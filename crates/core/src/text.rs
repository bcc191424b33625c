//! Text from outside (a server's GPU name, a bug report's os-release, a recording's process
//! names, a kernel-log line) made safe for the format it is written into. A value never becomes
//! structure: in a terminal no control character reaches it (an OSC 52 sequence would write the
//! reader's clipboard, CSI 2J clear the screen), in Markdown no character starts a heading, a
//! list, emphasis, a link or an image, and a newline never starts a new block. HTML is escaped
//! by `report::render::escape_html`, JSON and CSV by their writers.

use std::borrow::Cow;

/// True for what a terminal would act on rather than show: C0 and C1 control characters other
/// than a line feed and a tab, DEL, and the bidirectional overrides that reorder what is shown
/// ("Trojan Source").
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character a terminal would act on written visibly instead (`\x1b`, `\r`,
/// `\u{202e}`); unchanged (borrowed) when there is none.
pub fn safe_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acts_on_terminal) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if acts_on_terminal(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` on one line: line ends become spaces, and control characters are shown as
/// [`safe_terminal`] shows them.
pub fn one_line(s: &str) -> String {
    safe_terminal(&s.replace("\r\n", " ").replace(['\n', '\r'], " ")).into_owned()
}

/// `s` as Markdown inline text that renders as written: on one line, with a backslash (CommonMark
/// allows one before any ASCII punctuation) before each character that could open code,
/// emphasis, a link, an image, HTML, strikethrough or an entity (`_` only at a word's edge: GitHub
/// does not treat `a_b` as emphasis, so `CUDA_VISIBLE_DEVICES` stays readable), and before a line
/// start that would begin a heading, a quote, a list item or a numbered item. `|` is escaped only
/// in table cells (`report::render`).
pub fn md_inline(s: &str) -> String {
    let line = one_line(s);
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
        let escape = match c {
            // A backslash is an escape only before ASCII punctuation (which may be a backslash
            // this adds) or at the end: `C:\Windows\System32` stays as it is.
            '\\' => chars.get(i + 1).is_none_or(char::is_ascii_punctuation),
            // Code, emphasis, links and images (`![` needs the `[`), HTML and autolinks,
            // strikethrough, entities.
            '`' | '*' | '[' | '<' | '~' | '&' => true,
            '_' => !(word(i.checked_sub(1)) && word(Some(i + 1))),
            // A heading, a quote, a list marker or a setext underline at the start of a line.
            '#' | '>' | '-' | '+' | '=' if i == 0 => true,
            '.' | ')' => {
                i > 0 && chars[..i].iter().all(char::is_ascii_digit) && chars.get(i + 1).is_none_or(|n| *n == ' ')
            }
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The character set the terminal expects when it is one of China's national sets (GB18030,
/// GBK, GB2312, EUC-CN), from the locale (`LC_ALL`, then `LC_CTYPE`, then `LANG`, as the C
/// library reads them): `zh_CN.GB18030` → `GB18030`. `None` for UTF-8 and everything else.
fn chinese_national_charset() -> Option<&'static str> {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].iter().find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))?;
    let codeset = locale.split_once('.')?.1.split('@').next()?.to_ascii_uppercase().replace('-', "");
    match codeset.as_str() {
        // GB18030 contains GBK and GB2312: what they can show, it encodes the same.
        "GB18030" | "GBK" | "GB2312" | "EUCCN" | "CP936" => Some("GB18030"),
        _ => None,
    }
}

/// Which stream text goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

impl Stream {
    fn is_terminal(self) -> bool {
        use std::io::IsTerminal as _;
        static OUT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        static ERR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        match self {
            Stream::Out => *OUT.get_or_init(|| std::io::stdout().is_terminal()),
            Stream::Err => *ERR.get_or_init(|| std::io::stderr().is_terminal()),
        }
    }
}

/// `s` as bytes for `stream`: made safe ([`safe_terminal`]) and, when the stream is a terminal in
/// a locale whose character set is GB18030/GBK (common on Chinese systems), converted to it with
/// the C library's iconv, so Chinese is not mojibake there. UTF-8 everywhere else (a file or a
/// pipe gets UTF-8, as JSON, CSV and the reports require), and where the conversion is not
/// available.
pub fn terminal_bytes(s: &str, stream: Stream) -> Cow<'_, [u8]> {
    let safe = safe_terminal(s);
    if safe.is_ascii() || !stream.is_terminal() {
        return match safe {
            Cow::Borrowed(b) => Cow::Borrowed(b.as_bytes()),
            Cow::Owned(o) => Cow::Owned(o.into_bytes()),
        };
    }
    if let Some(charset) = chinese_national_charset()
        && let Some(bytes) = convert(&safe, charset)
    {
        return Cow::Owned(bytes);
    }
    match safe {
        Cow::Borrowed(b) => Cow::Borrowed(b.as_bytes()),
        Cow::Owned(o) => Cow::Owned(o.into_bytes()),
    }
}

/// `s` in `charset`, by iconv; `None` when the C library cannot convert to it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn convert(s: &str, charset: &str) -> Option<Vec<u8>> {
    let to = std::ffi::CString::new(charset).ok()?;
    let from = c"UTF-8";
    // SAFETY: both arguments are NUL-terminated strings that outlive the call.
    let cd = unsafe { libc::iconv_open(to.as_ptr(), from.as_ptr()) };
    if cd as isize == -1 {
        return None;
    }
    let mut input = s.as_bytes().to_vec();
    let mut out = vec![0u8; s.len() * 2 + 16];
    let (mut in_ptr, mut in_left) = (input.as_mut_ptr().cast::<libc::c_char>(), input.len());
    let (mut out_ptr, mut out_left) = (out.as_mut_ptr().cast::<libc::c_char>(), out.len());
    // SAFETY: the pointers and lengths describe `input` and `out`, which live across the call;
    // iconv advances them within those buffers. GB18030 encodes every Unicode character in at
    // most 4 bytes, and UTF-8 takes at least half as many bytes as that for each, so twice the
    // input's length always suffices.
    let r = unsafe { libc::iconv(cd, &mut in_ptr, &mut in_left, &mut out_ptr, &mut out_left) };
    // SAFETY: `cd` came from iconv_open and is closed once.
    unsafe { libc::iconv_close(cd) };
    if r == usize::MAX || in_left != 0 {
        return None;
    }
    out.truncate(out.len() - out_left);
    Some(out)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn convert(_s: &str, _charset: &str) -> Option<Vec<u8>> {
    None
}

/// Home directories in paths: `/home/NAME`, `/Users/NAME`, `/var/home/NAME`, `C:\\Users\\NAME` (any
/// slash style, any case); group 2 is the user name.
#[allow(clippy::expect_used)]
pub static HOME_PATH: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)((?:/home|/Users|/var/home|[A-Za-z]:[\\/]+Users)[\\/]+)([^\\/\s:;,'`)\]}>]+)")
        .expect("constant pattern")
});

/// The user names in the home directories `text` quotes (`/home/alice/...` gives `alice`).
pub fn home_names(text: &str) -> Vec<String> {
    HOME_PATH.captures_iter(text).filter_map(|c| c.get(2)).map(|m| m.as_str().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_shown_not_acted_on() {
        let osc52 = "NVIDIA \x1b]52;c;ZWNobyBwd25lZA==\x07 A100";
        let s = safe_terminal(osc52);
        assert!(!s.contains('\x1b') && !s.contains('\x07'), "{s}");
        assert!(s.contains("\\u{1b}]52"), "{s}");
        assert_eq!(safe_terminal("plain\ttext\nnext"), "plain\ttext\nnext");
        assert!(matches!(safe_terminal("plain"), Cow::Borrowed(_)));
        for c in ['\r', '\u{9b}', '\u{7f}', '\u{202e}', '\u{2067}', '\0'] {
            assert!(!safe_terminal(&format!("a{c}b")).contains(c), "{c:?}");
        }
    }

    #[test]
    fn markdown_values_never_become_structure() {
        let name = "A100\n# Title\n## Checklist\n**PASS (ROOT CAUSE)** ![x](http://e.invalid/p.png) <img src=x>";
        let m = md_inline(name);
        assert!(!m.contains('\n'));
        assert!(!m.contains("**") && !m.contains("!["), "{m}");
        assert!(m.contains("\\*\\*") && m.contains("!\\[") && m.contains("\\<img"), "{m}");
        assert_eq!(md_inline("# Title"), "\\# Title");
        assert_eq!(md_inline("CUDA_VISIBLE_DEVICES=0"), "CUDA_VISIBLE_DEVICES=0");
        assert_eq!(md_inline("_x_"), "\\_x\\_");
        assert_eq!(md_inline("- item"), "\\- item");
        assert_eq!(md_inline("12. item"), "12\\. item");
        assert_eq!(md_inline("550.54.15"), "550.54.15");
        assert_eq!(md_inline("loaded C:\\windows\\System32\\nvml.dll"), "loaded C:\\windows\\System32\\nvml.dll");
        // A backslash before what is escaped cannot undo the escape.
        assert_eq!(md_inline("a\\*b*"), "a\\\\\\*b\\*");
        assert_eq!(md_inline("end\\"), "end\\\\");
    }
}
