//! The exporter's HTTP side: a small server over `std::net` with hyper's request parser
//! (`httparse`), bounded in every direction, that serves the latest exposition and nothing else.
//!
//! - Only `GET` of `/metrics` (the exposition) and `/` (a short page naming it); any other method
//!   gets 405, any other path 404.
//! - One request per connection (`Connection: close`); the request head must arrive within
//!   [`READ_TIMEOUT`] and be at most [`MAX_REQUEST`] bytes (431 otherwise); a body is never read.
//! - At most [`Limits::connections`] connections are served at once; one more is answered 503 at
//!   once and closed, so a client holding connections open cannot exhaust threads or memory.
//! - A scrape reads the latest text through an `ArcSwap` and never waits for the sampler.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;

/// How long a client may take to send its request head, and to take the answer.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
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
        if active.load(Ordering::SeqCst) >= limits.connections.max(1) {
            counters.refused.fetch_add(1, Ordering::Relaxed);
            let _ = respond(&mut stream, 503, "text/plain; charset=utf-8", "too many connections; try again\n", &[]);
            continue;
        }
        let slot = Slot::take(&active);
        let (page, counters) = (Arc::clone(page), Arc::clone(counters));
        // When the thread cannot start, the closure and its slot are dropped: the slot is freed.
        let _ = std::thread::Builder::new().name("gd-serve-conn".into()).spawn(move || {
            let _slot = slot;
            serve_one(&mut stream, &page, &counters);
        });
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

/// Reads one request head (bounded in size and time) and answers it.
fn serve_one(stream: &mut TcpStream, page: &ArcSwap<Page>, counters: &Counters) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut len = 0;
    let answer = loop {
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
        // Two idle connections hold both slots; a third is refused at once, not queued.
        let _h1 = TcpStream::connect(a).unwrap_or_else(|e| panic!("{e}"));
        let _h2 = TcpStream::connect(a).unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(200));
        let busy = ask(a, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
        assert!(server.counters.refused.load(Ordering::Relaxed) >= 6);
        server.stop();
    }
}
