//! The harness of tests/redis_outcomes.rs: a scripted gateway, a closed gate, and a runtime over a `RedisStore` on a private redis-server.
//!
//! The gateway picks its answer from the prompt's prefix: `ok:` (200 with
//! [`answer`]), `reject:` (400), `throttle:` (429 with `Retry-After: 1`, then
//! 200), `flaky:` (500, then 200), `hang:` (never answers).

use super::{Depths, QUEUE};
use async_trait::async_trait;
use async_worker::http_handler::{Backoff, HttpHandler, HttpTarget};
use async_worker::{DispatchGate, QueueSpec, RunReport, Runtime, RuntimeConfig};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use claim_core::ClaimStore;
use claim_core::store::StoreConfig;
use claim_core::wire::{ErrorCode, ResultRecord};
use claim_redis::testing::RedisServer;
use claim_redis::{RedisStore, RedisStoreOptions, TimeSource};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long a test waits for its one record.
pub const RECORD_WAIT: Duration = Duration::from_secs(20);

/// The calls the scripted gateway received: prompt and arrival time.
#[derive(Debug, Default)]
pub struct Calls(Mutex<Vec<(String, Instant)>>);

impl Calls {
    pub fn record(&self, prompt: &str) -> usize {
        let mut calls = self.0.lock().unwrap();
        calls.push((prompt.to_owned(), Instant::now()));
        calls.iter().filter(|(p, _)| p == prompt).count()
    }

    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    pub fn times(&self) -> Vec<Instant> {
        self.0.lock().unwrap().iter().map(|(_, t)| *t).collect()
    }
}

/// The body of the gateway's success answer to `prompt`.
pub fn answer(prompt: &str) -> String {
    serde_json::json!({"choices": [{"text": format!("answer to {prompt}")}]}).to_string()
}

/// Answers by the prompt's prefix; `n` is the call number for this prompt.
async fn scripted(State(calls): State<Arc<Calls>>, body: Bytes) -> Response {
    let payload: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let prompt = payload["prompt"].as_str().unwrap_or_default().to_owned();
    let n = calls.record(&prompt);
    let ok = (StatusCode::OK, answer(&prompt)).into_response();
    match prompt.split(':').next().unwrap_or_default() {
        "reject" => (StatusCode::BAD_REQUEST, "prompt rejected").into_response(),
        "throttle" if n == 1 => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "1")],
            "slow down",
        )
            .into_response(),
        "flaky" if n == 1 => (StatusCode::INTERNAL_SERVER_ERROR, "try again").into_response(),
        "hang" => std::future::pending().await,
        _ => ok,
    }
}

/// A scripted gateway on an ephemeral loopback port.
pub struct Gateway {
    pub base_url: String,
    pub calls: Arc<Calls>,
    task: JoinHandle<()>,
}

impl Gateway {
    pub async fn start() -> Gateway {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let calls = Arc::new(Calls::default());
        let app = Router::new()
            .route("/{*path}", post(scripted))
            .with_state(calls.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Gateway {
            base_url,
            calls,
            task,
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A gate that refuses every poll and counts how often it was asked.
#[derive(Debug, Default)]
pub struct ClosedGate {
    pub asked: AtomicUsize,
}

#[async_trait]
impl DispatchGate for ClosedGate {
    async fn budget(&self) -> f64 {
        self.asked.fetch_add(1, Ordering::SeqCst);
        0.0
    }
}

/// A private redis-server, a store on it with server time, the gateway and
/// a raw connection for the Go producer's and consumer's commands.
pub struct Rig {
    pub server: RedisServer,
    pub store: RedisStore,
    pub gateway: Gateway,
    pub conn: MultiplexedConnection,
}

impl Rig {
    pub async fn start() -> Option<Rig> {
        let server = super::redis_server()?;
        let config = StoreConfig {
            lease_ttl_ms: 3_000,
            result_dedup_ttl_ms: 60_000,
            ..StoreConfig::default()
        };
        let options = RedisStoreOptions {
            pool_size: 4,
            call_timeout: Duration::from_secs(2),
            time: TimeSource::Server,
            ..RedisStoreOptions::new(server.url(), config)
        };
        let store = RedisStore::connect(options)
            .await
            .expect("connect the store");
        let conn = super::connect(&server.url()).await;
        Some(Rig {
            store,
            gateway: Gateway::start().await,
            conn,
            server,
        })
    }

    /// Submits `id` with `prompt`, due in `deadline_in` seconds (negative: already late).
    pub async fn submit(&mut self, id: &str, prompt: &str, deadline_in: i64) {
        let payload = serde_json::json!({"model": "m", "prompt": prompt});
        super::go_submit(&mut self.conn, id, super::unix_now() + deadline_in, payload).await;
    }

    /// Starts a runtime posting to `gateway_url`, its queue behind `gate`
    /// when one is given.
    pub fn run_with(&self, gateway_url: &str, gate: Option<Arc<dyn DispatchGate>>) -> Running {
        let target = HttpTarget::new(gateway_url, "/v1/completions", None).unwrap();
        let handler = HttpHandler::new([(QUEUE.to_owned(), target)])
            .unwrap()
            .with_backoff(Backoff {
                base: Duration::from_millis(50),
                cap: Duration::from_millis(400),
            });
        let config = RuntimeConfig {
            queues: vec![QueueSpec::new(QUEUE)],
            concurrency: 4,
            poll_interval: Duration::from_millis(50),
            request_timeout: Duration::from_secs(30),
            drain_timeout: Duration::from_secs(5),
            reclaim_interval: Duration::from_millis(500),
            promote_interval: Duration::from_millis(100),
            ..RuntimeConfig::default()
        };
        let store: Arc<dyn ClaimStore> = Arc::new(self.store.clone());
        let mut builder = Runtime::builder(store)
            .handler(Arc::new(handler))
            .config(config);
        if let Some(gate) = gate {
            builder = builder.queue_gate(QUEUE, gate);
        }
        let runtime = builder.build().expect("valid runtime settings");
        let stop = CancellationToken::new();
        let task = tokio::spawn(runtime.run(stop.clone()));
        Running { stop, task }
    }

    pub fn run(&self) -> Running {
        self.run_with(&self.gateway.base_url.clone(), None)
    }

    /// The next record, read as the Go consumer reads it.
    pub async fn record(&self) -> ResultRecord {
        super::brpop(&self.server.url(), RECORD_WAIT)
            .await
            .unwrap_or_else(|| panic!("no record within {RECORD_WAIT:?}"))
    }

    /// Starts a rig (`None`: skipped), submits `id` (see [`Rig::submit`]),
    /// runs a runtime until its record arrives and stops it; the rig, the
    /// record and the run's report.
    pub async fn one_record(
        id: &str,
        prompt: &str,
        deadline_in: i64,
    ) -> Option<(Rig, ResultRecord, RunReport)> {
        let mut rig = Rig::start().await?;
        rig.submit(id, prompt, deadline_in).await;
        let run = rig.run();
        let record = rig.record().await;
        let report = run.stop().await;
        Some((rig, record, report))
    }

    /// [`Rig::one_record`] of `id` with `prompt`, due in a minute, whose
    /// record must be the gateway's success (see [`assert_answered`]).
    pub async fn answered(id: &str, prompt: &str) -> Option<(Rig, RunReport)> {
        let (rig, record, report) = Rig::one_record(id, prompt, 60).await?;
        assert_answered(&record, id, prompt);
        Some((rig, report))
    }

    pub async fn depths(&mut self) -> Depths {
        super::depths(&mut self.conn).await
    }

    /// Asserts the gateway was never called and Redis holds nothing but
    /// what `left` sets on empty depths (`why` says what that means).
    pub async fn assert_uncalled_leaving(&mut self, left: impl FnOnce(&mut Depths), why: &str) {
        let mut expected = Depths::default();
        left(&mut expected);
        assert_eq!(self.gateway.calls.count(), 0);
        assert_eq!(self.depths().await, expected, "{why}");
    }

    /// Asserts the run pushed exactly one record and Redis is settled (see [`Rig::assert_settled`]).
    pub async fn assert_settled_after_one_record(&mut self, report: &RunReport) {
        assert_eq!(report.records_pushed, 1);
        self.assert_settled().await;
    }

    /// Asserts the run retried `retries` times and Redis is settled (see [`Rig::assert_settled`]).
    pub async fn assert_settled_after_retries(&mut self, report: &RunReport, retries: usize) {
        assert_eq!(report.retries, retries);
        self.assert_settled().await;
    }

    /// Nothing pending, claimed, parked or dead, and no record left after the one read.
    pub async fn assert_settled(&mut self) {
        assert_eq!(
            self.depths().await,
            Depths::default(),
            "Redis after the run"
        );
    }

    /// Asserts the run pushed one record without a retry, the producer's keys
    /// of `id` (active, cancel) are deleted (`why` says which generation's),
    /// and Redis is settled.
    pub async fn assert_one_record_and_keys_deleted(
        &mut self,
        report: &RunReport,
        id: &str,
        why: &str,
    ) {
        assert_eq!((report.records_pushed, report.retries), (1, 0));
        assert_eq!(self.producer_keys(id).await, (false, false), "{why}");
        self.assert_settled().await;
    }

    /// Whether the producer's keys of `id` still exist (active, cancel).
    pub async fn producer_keys(&mut self, id: &str) -> (bool, bool) {
        let active: bool = self
            .conn
            .exists(claim_core::wire::active_key(id))
            .await
            .unwrap();
        let cancel: bool = self
            .conn
            .exists(claim_core::wire::cancel_key(id))
            .await
            .unwrap();
        (active, cancel)
    }
}

/// Asserts `record` is request `id`'s success record: status 200, the
/// gateway's answer to `prompt`, and the request's token.
pub fn assert_answered(record: &ResultRecord, id: &str, prompt: &str) {
    let expected = ResultRecord::success(id, 200, answer(prompt)).with_token(super::token(id));
    assert_eq!(record, &expected);
}

/// Asserts `record` is request `id`'s error record with `code` and no HTTP status.
pub fn assert_error_without_status(record: &ResultRecord, id: &str, code: ErrorCode) {
    assert_eq!(
        (record.id.as_str(), record.error_code, record.status_code),
        (id, Some(code), None),
        "{record:?}"
    );
}

/// A runtime running in a task.
pub struct Running {
    stop: CancellationToken,
    task: JoinHandle<RunReport>,
}

impl Running {
    /// Waits (10 s at most, then fails naming `what`) until `done` holds, then [`Running::stop`]s.
    pub async fn stop_once(self, what: &str, done: impl AsyncFnMut() -> bool) -> RunReport {
        super::eventually(what, Duration::from_secs(10), done).await;
        self.stop().await
    }

    /// Graceful shutdown; fails when the drain does not finish in time.
    pub async fn stop(self) -> RunReport {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(15), self.task)
            .await
            .expect("the runtime stops within 15 s")
            .expect("the runtime task does not panic")
    }
}
