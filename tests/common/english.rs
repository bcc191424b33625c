//! Finding English left in a Chinese text (shared by the GUI and CLI language tests).

/// A run of three English words that is no command line, path or name: an untranslated text.
/// What a Chinese sentence quotes in （…） or “…” is data (an error of the operating system, a
/// process name) and not looked at.
pub fn english_run(text: &str) -> Option<String> {
    const DATA: &[&str] = &["none (test harness)"];
    if DATA.contains(&text.trim()) {
        return None;
    }
    let mut own = String::new();
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '（' | '“' => depth += 1,
            '）' | '”' => depth -= 1,
            _ if depth <= 0 => own.push(c),
            _ => {}
        }
    }
    let text = own.as_str();
    const COMMANDS: &[&str] = &[
        "sudo ",
        "nvidia-smi",
        "python",
        "pip ",
        "export ",
        "modprobe",
        "docker ",
        "lspci",
        "dmesg",
        "journalctl",
        "echo ",
        "apt",
        "dnf ",
        "ls ",
        "cat ",
        "gpu-doctor",
        "nvcc",
        "reg ",
        "powercfg",
        "pnputil",
        "wsl ",
        "ldconfig",
        "torchrun",
        "accelerate ",
        "systemctl",
        "mokutil",
        "dkms",
        "update-",
        "grep ",
    ];
    if COMMANDS.iter().any(|c| text.trim_start().starts_with(c)) {
        return None;
    }
    let mut run: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        let word = w.trim_matches(|c: char| ",.;:()[]'\"!?".contains(c));
        let plain = word.len() >= 2
            && word.chars().all(|c| c.is_ascii_alphabetic())
            && word.chars().any(|c| c.is_ascii_lowercase());
        if plain && !w.contains(['/', '=', '_']) {
            run.push(word);
            if run.len() >= 3 {
                return Some(run.join(" "));
            }
        } else {
            run.clear();
        }
    }
    None
}
