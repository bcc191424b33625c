//! The exporter's HTTP side: a small server over `std::net` with hyper's request parser
//! (`httparse`), bounded in every direction, that serves the latest exposition and nothing else.
//!
//! - Only `GET` of `/metrics` (the exposition) and `/` (a short page naming it); any other method
//!   gets 405, any other path 404.
//! - One request per connection (`Connection: close`); the whole request head must arrive within
//!   [`READ_TIMEOUT`] of the connection (a deadline, not a limit per read: a client sending one
//!   byte every few seconds is closed at the deadline) and be at most [`MAX_REQUEST`] bytes (431
//!   otherwise); a body is never read.
//! - At most [`Limits::connections`] connections are served at once. When all are taken, the
//!   oldest one still sending its head after [`EVICT_AFTER`] is closed to make room (a scraper
//!   sends its head in one packet, so only slow or idle clients are ever evicted); when none can
//!   be, the newcomer is answered 503 at once and closed. Slow clients can therefore hold the
//!   server's threads for at most the head deadline and can never starve a real scraper.
//! - A scrape reads the latest text through an `ArcSwap` and never waits for the sampler.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

/// How long a client may take to send its request head, and to take the answer.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection still sending its request head after this long may be closed to make room for a
/// new one when every slot is taken.
pub const EVICT_AFTER: Duration = Duration::from_millis(250);
/// The largest request head read.
pub const MAX_REQUEST: usize = 8 * 1024;
/// Headers parsed at most (more is a 431).
const MAX_HEADERS: usize = 32;

/// The server's limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections served at once.
    pub connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { connections: 8 }
    }
}

/// What the server hands out: the exposition text and its media type.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The `/metrics` body.
    pub body: String,
    /// Its `Content-Type`.
    pub content_type: &'static str,
}

/// Counters the exporter reports about itself.
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests answered 200.
    pub served: AtomicUsize,
    /// Requests refused (bad request, wrong method or path, too large, too many connections).
    pub refused: AtomicUsize,
}

/// A running server; dropping it does not stop it (call [`Server::stop`]).
pub struct Server {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    /// What it counted.
    pub counters: Arc<Counters>,
}

impl Server {
    /// Serves `page` on `listener` from a new thread.
    pub fn start(listener: TcpListener, page: Arc<ArcSwap<Page>>, limits: Limits) -> std::io::Result<Server> {
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let (s, c) = (Arc::clone(&stop), Arc::clone(&counters));
        std::thread::Builder::new()
            .name("gd-serve-accept".into())
            .spawn(move || accept_loop(&listener, &page, limits, &s, &c))?;
        Ok(Server { addr, stop, counters })
    }

    /// The address it listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Stops accepting connections (those being served finish).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn accept_loop(
    listener: &TcpListener,
    page: &Arc<ArcSwap<Page>>,
    limits: Limits,
    stop: &AtomicBool,
    counters: &Arc<Counters>,
) {
    let active = Arc::new(AtomicUsize::new(0));
    let heads: Arc<Mutex<Vec<Arc<Pending>>>> = Arc::default();
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = conn else {
            // Out of file descriptors and the like: wait a little rather than spin.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let _ = stream.set_write_timeout(Some(READ_TIMEOUT));
        let limit = limits.connections.max(1);
        // Evicted connections end within moments; until they do they still count, up to twice
        // the limit in all.
        if active.load(Ordering::SeqCst) >= limit && (active.load(Ordering::SeqCst) >= 2 * limit || !evict_one(&heads))
        {
            counters.refused.fetch_add(1, Ordering::Relaxed);
            let _ = respond(&mut stream, 503, "text/plain; charset=utf-8", "too many connections; try again\n", &[]);
            continue;
        }
        let slot = Slot::take(&active);
        let pending = stream.try_clone().ok().map(|s| Arc::new(Pending { started: Instant::now(), stream: s }));
        if let (Some(p), Ok(mut h)) = (&pending, heads.lock()) {
            h.push(Arc::clone(p));
        }
        let (page, counters, heads) = (Arc::clone(page), Arc::clone(counters), Arc::clone(&heads));
        // When the thread cannot start, the closure and its slot are dropped: the slot is freed.
        let _ = std::thread::Builder::new().name("gd-serve-conn".into()).spawn(move || {
            let _slot = slot;
            let _head = HeadGuard { heads: &heads, pending: pending.as_ref() };
            serve_one(&mut stream, &page, &counters, &|| {
                if let Some(p) = &pending {
                    forget(&heads, p);
                }
            });
        });
    }
}

/// A connection still sending its request head: when it started, and a handle to close it.
struct Pending {
    started: Instant,
    stream: TcpStream,
}

/// Closes the oldest connection that has been sending its head for at least [`EVICT_AFTER`];
/// false when there is none.
fn evict_one(heads: &Mutex<Vec<Arc<Pending>>>) -> bool {
    let Ok(mut h) = heads.lock() else { return false };
    let oldest =
        h.iter().enumerate().filter(|(_, p)| p.started.elapsed() >= EVICT_AFTER).min_by_key(|(_, p)| p.started);
    let Some((i, _)) = oldest else { return false };
    let p = h.swap_remove(i);
    let _ = p.stream.shutdown(std::net::Shutdown::Both);
    true
}

fn forget(heads: &Mutex<Vec<Arc<Pending>>>, p: &Arc<Pending>) {
    if let Ok(mut h) = heads.lock() {
        h.retain(|q| !Arc::ptr_eq(q, p));
    }
}

/// Takes a connection off the evictable list however its thread ends.
struct HeadGuard<'a> {
    heads: &'a Mutex<Vec<Arc<Pending>>>,
    pending: Option<&'a Arc<Pending>>,
}

impl Drop for HeadGuard<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.pending {
            forget(self.heads, p);
        }
    }
}

/// One of the limited connection slots, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(active: &Arc<AtomicUsize>) -> Slot {
        active.fetch_add(1, Ordering::SeqCst);
        Slot(Arc::clone(active))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads one request head (bounded in size, and in time by one deadline for all of it) and
/// answers it; `head_done` is called once the head is in (the connection can no longer be
/// evicted).
fn serve_one(stream: &mut TcpStream, page: &ArcSwap<Page>, counters: &Counters, head_done: &dyn Fn()) {
    let deadline = Instant::now() + READ_TIMEOUT;
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut len = 0;
    let answer = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // Too slow: closed without an answer (a slow sender would be slow to read it too).
            counters.refused.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut buf[len..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => len += n,
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => break route(req.method, req.path, page),
            Ok(httparse::Status::Partial) if len == buf.len() => break Answer::error(431, "request head too large\n"),
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => break Answer::error(431, "too many headers\n"),
            Err(_) => break Answer::error(400, "bad request\n"),
        }
    };
    head_done();
    let counter = if answer.status == 200 { &counters.served } else { &counters.refused };
    counter.fetch_add(1, Ordering::Relaxed);
    let extra: &[(&str, &str)] = if answer.status == 405 { &[("Allow", "GET")] } else { &[] };
    let _ = respond(stream, answer.status, answer.content_type, &answer.body, extra);
}

struct Answer {
    status: u16,
    content_type: &'static str,
    body: String,
}

impl Answer {
    fn error(status: u16, body: &str) -> Answer {
        Answer { status, content_type: "text/plain; charset=utf-8", body: body.to_string() }
    }
}

fn route(method: Option<&str>, path: Option<&str>, page: &ArcSwap<Page>) -> Answer {
    // The query string is ignored (Prometheus may add none; a browser may).
    let path = path.unwrap_or("").split('?').next().unwrap_or("");
    match (method, path) {
        (Some("GET"), "/metrics") => {
            let p = page.load();
            Answer { status: 200, content_type: p.content_type, body: p.body.clone() }
        }
        (Some("GET"), "/") => Answer {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: "gpu-doctor exporter: the metrics are at /metrics\n".into(),
        },
        (Some(_), "/" | "/metrics") => Answer::error(405, "only GET\n"),
        _ => Answer::error(404, "not found: the metrics are at /metrics\n"),
    }
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &str,
    extra: &[(&str, &str)],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(addr: std::net::SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect: {e}"));
        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = s.write_all(request);
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn answers_only_get_on_its_paths_and_bounds_requests_and_connections() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let page = Arc::new(ArcSwap::from_pointee(Page { body: "x 1\n# EOF\n".into(), content_type: "text/plain" }));
        let server =
            Server::start(listener, Arc::clone(&page), Limits { connections: 2 }).unwrap_or_else(|e| panic!("{e}"));
        let a = server.addr();
        let ok = ask(a, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200") && ok.ends_with("x 1\n# EOF\n"), "{ok}");
        // The latest page is served, without a restart.
        page.store(Arc::new(Page { body: "y 2\n".into(), content_type: "text/plain" }));
        assert!(ask(a, b"GET /metrics?x=1 HTTP/1.0\r\n\r\n").ends_with("y 2\n"));
        assert!(ask(a, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").starts_with("HTTP/1.1 405"));
        assert!(ask(a, b"GET /etc/passwd HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask(a, b"GET /../metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask(a, b"\x00\x01garbage\r\n\r\n").starts_with("HTTP/1.1 400"));
        let huge = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_REQUEST));
        assert!(ask(a, huge.as_bytes()).starts_with("HTTP/1.1 431"));
        let many: String = (0..40).map(|i| format!("X-{i}: 1\r\n")).collect();
        assert!(ask(a, format!("GET /metrics HTTP/1.1\r\n{many}\r\n").as_bytes()).starts_with("HTTP/1.1 431"));
        // Two idle connections hold both slots; a third, moments later, is refused at once, not
        // queued (connections are accepted in order, so both are being served by then).
        let _h1 = TcpStream::connect(a).unwrap_or_else(|e| panic!("{e}"));
        let _h2 = TcpStream::connect(a).unwrap_or_else(|e| panic!("{e}"));
        let busy = ask(a, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
        assert!(server.counters.refused.load(Ordering::Relaxed) >= 6);
        // Once they have idled past EVICT_AFTER, a scraper gets the oldest one's slot.
        std::thread::sleep(EVICT_AFTER + Duration::from_millis(100));
        let ok = ask(a, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        server.stop();
    }

    /// Issue 33, item 7: eight clients that send a request line and then one byte every 300 ms
    /// (every slot, for as long as they go on) never make a scrape fail, and each is closed at
    /// the head deadline however steadily it trickles.
    #[test]
    fn slow_clients_cannot_starve_scrapers() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let page = Arc::new(ArcSwap::from_pointee(Page { body: "x 1\n".into(), content_type: "text/plain" }));
        let server = Server::start(listener, page, Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        let a = server.addr();
        let stop = Arc::new(AtomicBool::new(false));
        let slow: Vec<_> = (0..Limits::default().connections)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    // Reconnects whenever closed, like an attacker would; returns how long the
                    // longest connection lasted.
                    let mut longest = Duration::ZERO;
                    while !stop.load(Ordering::SeqCst) {
                        let started = Instant::now();
                        let Ok(mut s) = TcpStream::connect(a) else { break };
                        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n");
                        while !stop.load(Ordering::SeqCst) && s.write_all(b"X").is_ok() {
                            std::thread::sleep(Duration::from_millis(300));
                        }
                        longest = longest.max(started.elapsed());
                    }
                    longest
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(600));
        let mut failed = Vec::new();
        for _ in 0..20 {
            let got = ask(a, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
            if !got.starts_with("HTTP/1.1 200") {
                failed.push(got);
            }
            std::thread::sleep(Duration::from_millis(350));
        }
        stop.store(true, Ordering::SeqCst);
        for t in slow {
            let longest = t.join().unwrap_or_default();
            assert!(longest < READ_TIMEOUT + Duration::from_secs(2), "a slow client held a slot {longest:?}");
        }
        assert!(failed.is_empty(), "{} of 20 scrapes failed: {:?}", failed.len(), failed.first());
        server.stop();
    }
}
