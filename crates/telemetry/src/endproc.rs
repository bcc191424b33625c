//! Ending a process from the process table: whose it is, asking it to exit, forcing it, and
//! whether it is still there.
//!
//! Only a process of the user running gpu-doctor is offered (the operating system would refuse
//! the others without administrator rights, and gpu-doctor never asks for them). On Linux "end"
//! is SIGTERM, which a program can catch to save its work and free the GPU cleanly, and "force"
//! is SIGKILL; Windows has no polite request for a console program, so both terminate it.

use crate::i18n::Message;
use crate::msg;

/// Whose process a PID is, as far as gpu-doctor can end it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The user running gpu-doctor: it may be ended.
    Me,
    /// Another user (root's display server, a colleague's job): not offered.
    Other,
    /// gpu-doctor itself (its own NVML or CUDA context): never offered.
    Myself,
    /// No such process here (it ended, or it lives in another PID namespace).
    Gone,
}

/// Whose process `pid` is.
pub fn owner(pid: u32) -> Owner {
    if pid == std::process::id() {
        return Owner::Myself;
    }
    owner_of(pid)
}

#[cfg(unix)]
fn owner_of(pid: u32) -> Owner {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(format!("/proc/{pid}")) {
        // SAFETY: geteuid has no preconditions and cannot fail.
        Ok(m) if m.uid() == unsafe { libc::geteuid() } => Owner::Me,
        Ok(_) => Owner::Other,
        Err(_) => Owner::Gone,
    }
}

#[cfg(windows)]
fn owner_of(pid: u32) -> Owner {
    // Whether Windows lets this user end it is known only by trying: the process is offered
    // and a refusal is said as such.
    if windows_process(pid).is_some() { Owner::Me } else { Owner::Gone }
}

#[cfg(windows)]
fn windows_process(pid: u32) -> Option<sysinfo::System> {
    let mut sys = sysinfo::System::new().ok()?;
    let p = sysinfo::Pid::from_u32(pid);
    sys.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[p]), true);
    sys.process(p).is_some().then_some(sys)
}

/// Whether `pid` still runs (a process that has exited but whose parent has not yet collected
/// it, a zombie, no longer holds the GPU and counts as ended).
pub fn is_running(pid: u32) -> bool {
    running(pid)
}

#[cfg(unix)]
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the name in parentheses, which may itself hold ") ".
        Ok(stat) => stat.rsplit_once(") ").is_none_or(|(_, rest)| !rest.starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

#[cfg(windows)]
fn running(pid: u32) -> bool {
    windows_process(pid).is_some()
}

/// How a process is asked to end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// SIGTERM on Linux: the program may save and clean up.
    Ask,
    /// SIGKILL on Linux: ends it at once, unsaved work lost.
    Force,
}

/// Sends the request; the error says why it could not be sent and what to do.
pub fn end(pid: u32, how: How) -> Result<(), Message> {
    match owner(pid) {
        Owner::Myself => return Err(msg!("That is gpu-doctor itself; close the window instead.")),
        Owner::Gone => return Err(msg!("Process {pid} is no longer running.", pid = pid)),
        Owner::Other => {
            return Err(msg!(
                "Process {pid} belongs to another user; only they or an administrator can end it (sudo kill {pid}).",
                pid = pid
            ));
        }
        Owner::Me => {}
    }
    send(pid, how)
}

#[cfg(unix)]
fn send(pid: u32, how: How) -> Result<(), Message> {
    let Ok(target) = libc::pid_t::try_from(pid) else {
        return Err(msg!("Process {pid} is no longer running.", pid = pid));
    };
    let sig = match how {
        How::Ask => libc::SIGTERM,
        How::Force => libc::SIGKILL,
    };
    // SAFETY: kill takes plain integers; a positive pid names one process.
    if unsafe { libc::kill(target, sig) } == 0 {
        return Ok(());
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ESRCH) => Err(msg!("Process {pid} is no longer running.", pid = pid)),
        Some(libc::EPERM) => Err(msg!(
            "Process {pid} belongs to another user; only they or an administrator can end it (sudo kill {pid}).",
            pid = pid
        )),
        _ => Err(msg!("The signal could not be sent: {why}", why = std::io::Error::last_os_error().to_string())),
    }
}

#[cfg(windows)]
fn send(pid: u32, _how: How) -> Result<(), Message> {
    let Some(sys) = windows_process(pid) else {
        return Err(msg!("Process {pid} is no longer running.", pid = pid));
    };
    match sys.process(sysinfo::Pid::from_u32(pid)).map(|p| p.kill()) {
        Some(true) => Ok(()),
        Some(false) => Err(msg!(
            "Windows refused to end process {pid}: it belongs to another user or to the system; end it from an administrator's Task Manager.",
            pid = pid
        )),
        None => Err(msg!("Process {pid} is no longer running.", pid = pid)),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn gpu_doctor_itself_and_a_missing_process_are_never_ended() {
        assert_eq!(owner(std::process::id()), Owner::Myself);
        assert!(end(std::process::id(), How::Force).is_err());
        // PIDs above the kernel's limit (at most 2^22) never exist.
        assert_eq!(owner(4_999_999), Owner::Gone);
        assert!(end(4_999_999, How::Ask).unwrap_err().en().contains("no longer running"));
        assert!(!is_running(4_999_999));
    }

    #[test]
    fn a_child_of_this_user_is_asked_to_end_and_then_counts_as_ended() {
        let mut child = Command::new("sleep").arg("300").spawn().expect("sleep runs");
        let pid = child.id();
        assert_eq!(owner(pid), Owner::Me);
        assert!(is_running(pid));
        end(pid, How::Ask).expect("the signal is sent");
        // Until it is collected it is a zombie: ended, though /proc still lists it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while is_running(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!is_running(pid), "SIGTERM ends sleep");
        let status = child.wait().expect("collected");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }
}
