//! Reaching a server with the system OpenSSH client: the server as typed ([`Target`]), the ssh
//! command line ([`SshSetup`]), one command's bounded output ([`run_once`]) and the failures named
//! with their next step ([`classify`]).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::i18n::Message;
use crate::msg;

/// The largest output read from one command (`info --json`, `check --json`).
pub const MAX_OUTPUT: usize = 16 << 20;
/// Environment variable naming the ssh program (default `ssh` on the PATH).
pub const SSH_ENV: &str = "GPU_DOCTOR_SSH";

/// A server as the user typed it: `host`, `user@host`, `host:port`, `user@[::1]:2222`, or a
/// `~/.ssh/config` alias (resolved by ssh itself).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Login name, when given.
    pub user: Option<String>,
    /// Host name, address or ssh alias.
    pub host: String,
    /// Port, when given.
    pub port: Option<u16>,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        match (self.port, self.host.contains(':')) {
            (Some(p), true) => write!(f, "[{}]:{p}", self.host),
            (Some(p), false) => write!(f, "{}:{p}", self.host),
            (None, _) => write!(f, "{}", self.host),
        }
    }
}

/// [`Target::parse_message`] with its error in English (a front end shows the message in its
/// language).
impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Target, String> {
        Target::parse_message(s).map_err(|m| m.en())
    }
}

impl Target {
    /// Parses `[user@]host[:port]`. Names that ssh would read as an option (a leading `-`), spaces
    /// and shell or control characters are refused, so a typed (or pasted) name cannot become an
    /// ssh option or a command.
    pub fn parse_message(s: &str) -> Result<Target, Message> {
        let s = s.trim();
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, s),
        };
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (h, after) = inner.split_once(']').ok_or_else(|| msg!("'{text}': a ']' is missing", text = s))?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(msg!("'{text}' is not user@host or user@host:port", text = s)),
            };
            (h, port)
        } else if rest.matches(':').count() == 1 {
            let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
            (h, Some(p))
        } else {
            (rest, None)
        };
        let ok_host = |h: &str| {
            !h.is_empty()
                && !h.starts_with('-')
                && h.len() <= 253
                && h.chars().all(|c| c.is_ascii_alphanumeric() || ".-_:%".contains(c))
        };
        if !ok_host(host) {
            return Err(msg!("'{text}' is not a host name or address", text = host));
        }
        if let Some(u) = user
            && (u.is_empty()
                || u.starts_with('-')
                || u.len() > 64
                || !u.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        {
            return Err(msg!("'{text}' is not a user name", text = u));
        }
        let port = match port {
            Some(p) => {
                Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| msg!("'{text}' is not a port", text = p))?)
            }
            None => None,
        };
        Ok(Target { user: user.map(String::from), host: host.to_string(), port })
    }
}

/// How the server is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshSetup {
    /// The ssh program ([`SSH_ENV`], else `ssh`).
    pub program: PathBuf,
    /// The CLI on the server: a name on its PATH (with `~/.local/bin`, where the tarball's
    /// `install.sh --user` puts it, and `/usr/local/bin` added) or an absolute path.
    pub remote_cli: String,
    /// Seconds ssh waits for the connection.
    pub connect_timeout: u32,
}

impl Default for SshSetup {
    fn default() -> Self {
        SshSetup {
            program: std::env::var_os(SSH_ENV).map_or_else(|| PathBuf::from("ssh"), PathBuf::from),
            remote_cli: "gpu-doctor-cli".into(),
            connect_timeout: 10,
        }
    }
}

impl SshSetup {
    /// The ssh command that runs `gpu-doctor-cli ARGS` on `target`. `args` are fixed words of ours;
    /// the CLI's name was checked to hold no shell characters.
    pub fn command(&self, target: &Target, args: &[&str]) -> Result<Command, RemoteError> {
        let cli = &self.remote_cli;
        if cli.is_empty()
            || cli.starts_with('-')
            || !cli.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+~".contains(c))
        {
            return Err(RemoteError::new(
                RemoteErrorKind::Other,
                msg!("'{text}' is not a program name or path", text = cli),
                msg!("Give the name or the absolute path of gpu-doctor-cli on the server."),
            ));
        }
        let cli = cli.strip_prefix("~/").map_or_else(|| cli.clone(), |rest| format!("\"$HOME\"/{rest}"));
        // Non-interactive ssh sessions get a short PATH: add where install.sh and packages put it.
        let remote =
            format!("PATH=\"$PATH:$HOME/.local/bin:/usr/local/bin\" GPU_DOCTOR_LANG=en exec {cli} {}", args.join(" "));
        let mut c = Command::new(&self.program);
        c.args(["-o", "BatchMode=yes", "-o"]).arg(format!("ConnectTimeout={}", self.connect_timeout)).args([
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=2",
            "-T",
        ]);
        if let Some(p) = target.port {
            c.arg("-p").arg(p.to_string());
        }
        if let Some(u) = &target.user {
            c.arg("-l").arg(u);
        }
        c.arg("--").arg(&target.host).arg(remote);
        c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        Ok(c)
    }
}

/// What kind of failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemoteErrorKind {
    /// No ssh program here.
    NoSsh,
    /// The host cannot be reached (name, network, refused, timed out).
    Unreachable,
    /// The server wants a password or passphrase (BatchMode refuses to ask).
    Auth,
    /// The server's host key is unknown or changed.
    HostKey,
    /// `gpu-doctor-cli` is not on the server.
    NotInstalled,
    /// The server's gpu-doctor-cli speaks another version that cannot be read.
    VersionSkew,
    /// The stream stopped (the command or the connection ended).
    StreamEnded,
    /// Anything else.
    Other,
}

impl RemoteErrorKind {
    /// Failures that need the user: no retry until they ask.
    pub fn needs_user(self) -> bool {
        matches!(
            self,
            RemoteErrorKind::NoSsh
                | RemoteErrorKind::Auth
                | RemoteErrorKind::HostKey
                | RemoteErrorKind::NotInstalled
                | RemoteErrorKind::VersionSkew
                | RemoteErrorKind::Other
        )
    }
}

/// A failure to reach or read the server, with the next step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteError {
    /// What kind.
    pub kind: RemoteErrorKind,
    /// One sentence.
    #[serde(with = "crate::i18n::message::compact")]
    pub message: Message,
    /// What to do.
    #[serde(with = "crate::i18n::message::compact")]
    pub next_step: Message,
    /// The last lines ssh or the server wrote on stderr.
    #[serde(default)]
    pub detail: String,
}

impl RemoteError {
    pub(super) fn new(kind: RemoteErrorKind, message: Message, next_step: Message) -> Self {
        RemoteError { kind, message, next_step, detail: String::new() }
    }
}

/// What went wrong and the next step, one after the other.
impl crate::i18n::ToMessage for RemoteError {
    fn to_message(&self) -> crate::i18n::Message {
        crate::i18n::Message::join([self.message.clone(), self.next_step.clone()], &crate::i18n::Message::data(" "))
    }
}

/// In English (logs); a front end shows [`crate::i18n::ToMessage::to_message`] in its language.
impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::i18n::ToMessage::to_message(self).en())
    }
}

/// The failure when ssh itself cannot be started.
pub fn spawn_error(setup: &SshSetup, e: &std::io::Error) -> RemoteError {
    if e.kind() == std::io::ErrorKind::NotFound {
        RemoteError::new(
            RemoteErrorKind::NoSsh,
            msg!("There is no ssh program on this machine ({program}).", program = setup.program.display()),
            if cfg!(windows) {
                msg!("Install the OpenSSH client: Settings → System → Optional features → OpenSSH Client.")
            } else {
                msg!(
                    "Install the OpenSSH client (Debian/Ubuntu: sudo apt install openssh-client; Fedora: sudo dnf install openssh-clients)."
                )
            },
        )
    } else {
        RemoteError::new(
            RemoteErrorKind::Other,
            msg!("Could not start {program}: {error}", program = setup.program.display(), error = e),
            msg!("Check that the ssh program works in a terminal."),
        )
    }
}

/// Names the failure of an ssh run from its exit code and stderr.
pub fn classify(target: &Target, code: Option<i32>, stderr: &str, got_data: bool) -> RemoteError {
    let has = |k: &str| stderr.contains(k);
    let t = target.to_string();
    let mut e = if has("Permission denied") || has("Too many authentication failures") || has("passphrase") {
        RemoteError::new(
            RemoteErrorKind::Auth,
            msg!("{host} wants a password or a key passphrase; gpu-doctor never asks for or stores either.", host = t),
            msg!(
                "Set up a key once in a terminal: ssh-keygen -t ed25519, then ssh-copy-id {host}; for a key with a passphrase, load it into your agent with ssh-add. Then connect again.",
                host = t
            ),
        )
    } else if has("Host key verification failed") || has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        RemoteError::new(
            RemoteErrorKind::HostKey,
            msg!("The host key of {host} is not known yet, or it changed.", host = t),
            msg!(
                "Connect once in a terminal (ssh {host}) and check the key's fingerprint with the server's admin before accepting it.",
                host = t
            ),
        )
    } else if has("Could not resolve hostname")
        || has("Connection refused")
        || has("Connection timed out")
        || has("No route to host")
        || has("Network is unreachable")
        || has("Connection closed by")
        || has("Connection reset")
        || has("kex_exchange_identification")
    {
        RemoteError::new(
            RemoteErrorKind::Unreachable,
            msg!("{host} cannot be reached.", host = t),
            msg!(
                "Check the name and port, the network or VPN, and that sshd runs on the server (ssh {host} in a terminal says more).",
                host = t
            ),
        )
    } else if code == Some(127) || has("gpu-doctor-cli: not found") || has("command not found") {
        RemoteError::new(
            RemoteErrorKind::NotInstalled,
            msg!(
                "gpu-doctor-cli is not installed on {host} (or not on the PATH of a non-interactive login).",
                host = t
            ),
            msg!(
                "Copy gpu-doctor-<version>-x86_64-linux.tar.gz to the server, unpack it and run ./install.sh --user there (no root needed; it lands in ~/.local/bin); or give its full path under \"gpu-doctor-cli on the server\"."
            ),
        )
    } else if got_data {
        RemoteError::new(
            RemoteErrorKind::StreamEnded,
            msg!("The stream from {host} stopped.", host = t),
            msg!(
                "gpu-doctor reconnects by itself; if it keeps stopping, run gpu-doctor-cli monitor --json on the server to see why."
            ),
        )
    } else {
        RemoteError::new(
            RemoteErrorKind::Other,
            match code {
                Some(c) => msg!("ssh to {host} ended with exit code {code}.", host = t, code = c),
                None => msg!("ssh to {host} was stopped by a signal.", host = t),
            },
            msg!("Run the same in a terminal to see why: ssh {host} gpu-doctor-cli info", host = t),
        )
    };
    e.detail = tail(stderr, 600);
    e
}

/// The last `max` bytes of `s`, cut at a character boundary.
pub(super) fn tail(s: &str, max: usize) -> String {
    let s = s.trim();
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}

/// Reads a child's pipe to the end into a buffer capped at `cap` bytes (the rest is drained and
/// dropped, so the child never blocks on a full pipe).
pub(super) fn read_capped(mut r: impl Read, cap: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    out
}

/// The output of one command on the server.
#[derive(Clone, Debug)]
pub struct Output {
    /// Its exit code.
    pub code: Option<i32>,
    /// What it wrote (at most [`MAX_OUTPUT`] bytes).
    pub stdout: Vec<u8>,
    /// The end of its stderr.
    pub stderr: String,
}

/// Runs `gpu-doctor-cli ARGS` on the server and waits at most `timeout` for it.
pub fn run_once(setup: &SshSetup, target: &Target, args: &[&str], timeout: Duration) -> Result<Output, RemoteError> {
    let mut child = setup.command(target, args)?.spawn().map_err(|e| spawn_error(setup, &e))?;
    let out = child.stdout.take().map(|o| std::thread::spawn(move || read_capped(o, MAX_OUTPUT)));
    let err = child.stderr.take().map(|e| std::thread::spawn(move || read_capped(e, 64 << 10)));
    let until = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.and_then(|h| h.join().ok()).unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return Err(RemoteError::new(
            RemoteErrorKind::Unreachable,
            msg!("{host} did not answer within {secs} s.", host = target, secs = timeout.as_secs()),
            msg!("Check the network; a server under heavy load may answer later: connect again."),
        ));
    };
    Ok(Output { code: status.code(), stdout, stderr })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_refuse_what_ssh_would_read_as_an_option() {
        let t: Target = "ann@gpu1.lab:2222".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.user.as_deref(), t.host.as_str(), t.port), (Some("ann"), "gpu1.lab", Some(2222)));
        assert_eq!(t.to_string(), "ann@gpu1.lab:2222");
        let t: Target = "[::1]:22".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.host.as_str(), t.port, t.to_string().as_str()), ("::1", Some(22), "[::1]:22"));
        let t: Target = "my-alias".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.user, t.port), (None, None));
        for bad in
            ["-oProxyCommand=touch /tmp/x", "a b", "host;rm", "ann@", "@h", "h:0", "h:99999", "x@-h", "$(id)", "h\nx"]
        {
            assert!(bad.parse::<Target>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn the_command_never_lets_the_name_become_an_option_or_a_command() {
        let setup = SshSetup { program: "ssh".into(), remote_cli: "gpu-doctor-cli".into(), connect_timeout: 7 };
        let t: Target = "ann@gpu1:2222".parse().unwrap_or_else(|e| panic!("{e}"));
        let c = setup.command(&t, &["monitor", "--json"]).unwrap_or_else(|e| panic!("{e}"));
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let dash = args.iter().position(|a| a == "--").unwrap_or(usize::MAX);
        assert_eq!(args[dash + 1], "gpu1");
        assert!(
            args.contains(&"BatchMode=yes".to_string()) && args.contains(&"ConnectTimeout=7".to_string()),
            "{args:?}"
        );
        assert!(args[dash + 2].ends_with("exec gpu-doctor-cli monitor --json"), "{args:?}");
        let bad = SshSetup { remote_cli: "x; rm -rf ~".into(), ..setup };
        assert!(bad.command(&t, &["info"]).is_err());
    }

    #[test]
    fn failures_are_named_with_the_next_step() {
        let t: Target = "gpu1".parse().unwrap_or_else(|e| panic!("{e}"));
        let k = |code, err: &str| classify(&t, code, err, false).kind;
        assert_eq!(k(Some(255), "ann@gpu1: Permission denied (publickey,password)."), RemoteErrorKind::Auth);
        assert_eq!(k(Some(255), "Host key verification failed."), RemoteErrorKind::HostKey);
        assert_eq!(
            k(Some(255), "ssh: Could not resolve hostname gpu1: Name or service not known"),
            RemoteErrorKind::Unreachable
        );
        assert_eq!(k(Some(255), "ssh: connect to host gpu1 port 22: Connection refused"), RemoteErrorKind::Unreachable);
        assert_eq!(k(Some(127), "sh: 1: exec: gpu-doctor-cli: not found"), RemoteErrorKind::NotInstalled);
        assert_eq!(classify(&t, Some(0), "", true).kind, RemoteErrorKind::StreamEnded);
        let auth = classify(&t, Some(255), "Permission denied (publickey).", false);
        let next = auth.next_step.en();
        assert!(next.contains("ssh-copy-id gpu1") && next.contains("ssh-add"), "{auth:?}");
    }
}
