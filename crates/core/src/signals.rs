//! SIGINT, SIGTERM and SIGHUP taken by one thread of their own with `sigwait`, so no code runs
//! inside a signal handler: the commands that must leave something whole when interrupted (an
//! unpacked capture removed, a tune's journal ended) say what to do with each signal.

/// From now on the three signals are blocked in the calling thread (and the threads it starts
/// later) and each one calls `on_signal` with its number on the `gd-signals` thread. Call it from
/// the main thread before any other thread exists. Nothing happens on other systems (on Windows a
/// console's Ctrl+C ends the process).
pub fn take_stop_signals(on_signal: impl FnMut(i32) + Send + 'static) {
    #[cfg(target_os = "linux")]
    {
        let mut on_signal = on_signal;
        // SAFETY: a zeroed sigset_t is a valid argument to sigemptyset, which initialises it;
        // sigaddset and pthread_sigmask only read and write that set and this thread's mask.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut set, s);
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return;
            }
            set
        };
        let spawned = std::thread::Builder::new().name("gd-signals".into()).spawn(move || {
            loop {
                let mut sig: libc::c_int = 0;
                // SAFETY: `set` is an initialised signal set; `sig` is a valid out-pointer.
                if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                    return;
                }
                on_signal(sig);
            }
        });
        if spawned.is_err() {
            // Nobody would take the signals: let them act as before.
            // SAFETY: as above, on this thread's own mask.
            unsafe {
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    drop(on_signal);
}

/// Ends the process at once with 128 + `sig`, as the shell expects of a process a signal ended.
pub fn exit_for(sig: i32) -> ! {
    #[cfg(target_os = "linux")]
    // SAFETY: ends the process at once; the interrupted work is abandoned on purpose.
    unsafe {
        libc::_exit(128 + sig)
    }
    #[cfg(not(target_os = "linux"))]
    std::process::exit(128 + sig)
}
