//! The `flow` run's stand-in inference pool: `slots` requests served at once for a fixed time each, the rest waiting in its FIFO, its real counts on `/metrics`.
//!
//! Every request, interactive (`POST /interactive`) or batch (`POST
//! /v1/completions`, the runtime's), queues for a slot on one
//! fair semaphore, so a batch request that arrived first is served first,
//! as a model server's own queue does: that wait is what interactive users
//! feel. The pool records, for the measuring window only, busy slot-time,
//! each interactive request's wait and the batch requests completed.
//! Busy time is a slot's real hold time (taken to given back: the nominal
//! service time plus the timer's and scheduler's lateness, ~1 ms on the
//! shared VM), counted when the slot is given back; a request still in
//! service when the window's figures are read is left out (at most
//! `slots × service` of slot-time, 0.2 % of a 10 s window). Each answer carries `x-llm-d-flow-queue-duration-ms` (the
//! request's wait), the advisory header an `aimd` gate reads.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Uri};
use axum::routing::{get, post};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The label Prometheus queries select the pool by.
pub const POOL_NAME: &str = "bench-pool";
/// The path interactive requests use.
pub const INTERACTIVE_PATH: &str = "/interactive";
/// The path the runtime's batch requests use (the HttpHandler's default).
pub const BATCH_PATH: &str = "/v1/completions";

/// What the pool saw during one measuring window.
#[derive(Debug, Default)]
pub struct WindowFigures {
    /// Slot-time spent serving, within the window.
    pub busy: Duration,
    /// Queue waits (µs) of interactive requests that arrived in the window, sorted.
    pub interactive_waits: Vec<u32>,
    /// Batch requests whose service ended in the window.
    pub batch_completed: u64,
}

#[derive(Debug, Default)]
struct Window {
    span: Option<(Instant, Instant)>,
    interactive_waits: Vec<u32>,
}

#[derive(Debug)]
struct Shared {
    slots: Semaphore,
    service: Duration,
    running: AtomicUsize,
    waiting: AtomicUsize,
    busy_nanos: AtomicU64,
    batch_completed: AtomicU64,
    window: Mutex<Window>,
}

/// One request counted in a gauge until it is dropped, however its step
/// ends (a client that hangs up drops the handler mid-wait).
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(gauge: &'a AtomicUsize) -> Self {
        gauge.fetch_add(1, Ordering::SeqCst);
        Counted(gauge)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The running stand-in; the server stops when it is dropped.
#[derive(Debug)]
pub struct Pool {
    pub addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Pool {
    /// Starts the pool on a free loopback port.
    pub async fn start(slots: usize, service: Duration) -> Pool {
        let shared = Arc::new(Shared {
            slots: Semaphore::new(slots),
            service,
            running: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            busy_nanos: AtomicU64::new(0),
            batch_completed: AtomicU64::new(0),
            window: Mutex::new(Window::default()),
        });
        let app = Router::new()
            .route("/metrics", get(metrics))
            .route(INTERACTIVE_PATH, post(serve))
            .route(BATCH_PATH, post(serve))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the stand-in pool");
        let addr = listener.local_addr().expect("the pool's address");
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the stand-in pool");
        });
        Pool {
            addr,
            shared,
            server,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests in service and waiting for a slot.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.shared.running.load(Ordering::SeqCst),
            self.shared.waiting.load(Ordering::SeqCst),
        )
    }

    /// Starts counting a window of `length` from now (the previous one's figures are dropped).
    pub fn open_window(&self, length: Duration) {
        let now = Instant::now();
        self.shared.busy_nanos.store(0, Ordering::SeqCst);
        self.shared.batch_completed.store(0, Ordering::SeqCst);
        let mut window = self.shared.window.lock().unwrap();
        *window = Window {
            span: Some((now, now + length)),
            interactive_waits: Vec::new(),
        };
    }

    /// The figures of the window (call it once the window has passed).
    pub fn window_figures(&self) -> WindowFigures {
        let mut waits = {
            let mut window = self.shared.window.lock().unwrap();
            window.span = None;
            std::mem::take(&mut window.interactive_waits)
        };
        waits.sort_unstable();
        WindowFigures {
            busy: Duration::from_nanos(self.shared.busy_nanos.load(Ordering::SeqCst)),
            interactive_waits: waits,
            batch_completed: self.shared.batch_completed.load(Ordering::SeqCst),
        }
    }
}

/// The part of `from..to` inside `span`.
fn overlap(span: (Instant, Instant), from: Instant, to: Instant) -> Duration {
    let start = from.max(span.0);
    let end = to.min(span.1);
    end.saturating_duration_since(start)
}

async fn serve(State(pool): State<Arc<Shared>>, uri: Uri) -> (HeaderMap, &'static str) {
    let arrived = Instant::now();
    let waiting = Counted::new(&pool.waiting);
    let permit = pool.slots.acquire().await.expect("the slots stay open");
    drop(waiting);
    let running = Counted::new(&pool.running);
    let started = Instant::now();
    let wait = started - arrived;
    let interactive = uri.path() == INTERACTIVE_PATH;
    tokio::time::sleep_until((started + pool.service).into()).await;
    let ended = Instant::now();
    {
        let mut window = pool.window.lock().unwrap();
        if let Some(span) = window.span {
            let busy = overlap(span, started, ended).as_nanos() as u64;
            pool.busy_nanos.fetch_add(busy, Ordering::SeqCst);
            if interactive && (span.0..span.1).contains(&arrived) {
                window.interactive_waits.push(wait.as_micros() as u32);
            }
            if !interactive && (span.0..span.1).contains(&ended) {
                pool.batch_completed.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    drop(running);
    drop(permit);
    let mut headers = HeaderMap::new();
    let waited_ms = HeaderValue::from(wait.as_millis() as u64);
    headers.insert("x-llm-d-flow-queue-duration-ms", waited_ms);
    (headers, "{}")
}

async fn metrics(State(pool): State<Arc<Shared>>) -> String {
    let running = pool.running.load(Ordering::SeqCst);
    let waiting = pool.waiting.load(Ordering::SeqCst);
    format!(
        "# TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{{inference_pool=\"{POOL_NAME}\",model_name=\"m\"}} {running}\n\
         # TYPE vllm:num_requests_waiting gauge\n\
         vllm:num_requests_waiting{{inference_pool=\"{POOL_NAME}\",model_name=\"m\"}} {waiting}\n\
         # TYPE inference_pool_ready_pods gauge\n\
         inference_pool_ready_pods{{name=\"{POOL_NAME}\"}} 1\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_part_of_a_service_inside_the_window_counts() {
        let origin = Instant::now();
        let at = |ms| origin + Duration::from_millis(ms);
        let window = (at(100), at(200));
        assert_eq!(overlap(window, at(90), at(110)), Duration::from_millis(10));
        assert_eq!(overlap(window, at(120), at(140)), Duration::from_millis(20));
        assert_eq!(overlap(window, at(190), at(230)), Duration::from_millis(10));
        assert_eq!(overlap(window, at(10), at(30)), Duration::ZERO);
    }
}
