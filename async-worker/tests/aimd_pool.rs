//! An `aimd` pool gate in the runtime, in front of a stand-in gateway that refuses (429 `rejected-saturated`) whatever exceeds its capacity: the gateway's answers reach the gate through the HTTP handler's feedback, and the window settles near the capacity while every request is answered.
//!
//! Real time (the handler calls a real socket and bounds calls by the
//! system clock), the memory store, and bounded polls.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use async_worker::gate::GateOwner;
use async_worker::gate::aimd::{AimdConfig, AimdGate};
use async_worker::http_handler::{Backoff, HttpHandler, HttpTarget};
use async_worker::test_support::serve_on_loopback;
use async_worker::{DispatchGate, PoolSpec, QueueSpec, Runtime};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use claim_core::store::StoreConfig;
use claim_core::wire::Envelope;
use claim_core::{ClaimProducer, ListReads};
use claim_memory::MemoryStore;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the stand-in gateway serves at once; more is refused.
const CAPACITY: usize = 4;
const QUEUE: &str = "jobs";
const RESULTS: &str = "aimd-results";
const REQUESTS: usize = 200;

/// The stand-in's counts: calls in progress, and answers by kind.
#[derive(Debug, Default)]
struct Counts {
    serving: AtomicUsize,
    served: AtomicUsize,
    refused: AtomicUsize,
}

/// Serves up to [`CAPACITY`] calls at once (20 ms each) and answers any
/// call beyond that 429 `rejected-saturated` at once.
async fn limited_gateway() -> (SocketAddr, Arc<Counts>) {
    async fn complete(State(counts): State<Arc<Counts>>) -> impl IntoResponse {
        if counts.serving.fetch_add(1, Ordering::SeqCst) >= CAPACITY {
            counts.serving.fetch_sub(1, Ordering::SeqCst);
            counts.refused.fetch_add(1, Ordering::SeqCst);
            let reason = [("x-llm-d-request-dropped-reason", "rejected-saturated")];
            return (StatusCode::TOO_MANY_REQUESTS, reason, "saturated").into_response();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        counts.serving.fetch_sub(1, Ordering::SeqCst);
        counts.served.fetch_add(1, Ordering::SeqCst);
        (StatusCode::OK, r#"{"choices":[]}"#).into_response()
    }
    let counts = Arc::new(Counts::default());
    let app = Router::new()
        .route("/v1/completions", post(complete))
        .with_state(counts.clone());
    (serve_on_loopback(app).await, counts)
}

fn now_secs() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    now.as_secs() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aimd_pool_gate_settles_its_window_near_the_gateways_capacity_and_every_request_is_answered()
 {
    let (addr, counts) = limited_gateway().await;
    let store = MemoryStore::new(StoreConfig {
        default_result_list: RESULTS.into(),
        ..StoreConfig::default()
    });
    let deadline = now_secs() + 600;
    for i in 0..REQUESTS {
        let id = format!("r-{i:03}");
        let mut envelope = Envelope::new(&id, format!("t-{id}"), deadline, serde_json::json!({}));
        envelope.internal.result_queue_name = RESULTS.into();
        store.submit(QUEUE, &envelope.submission()).await.unwrap();
    }
    let config = AimdConfig {
        max_window: 64.0,
        ..AimdConfig::default()
    };
    let gate = Arc::new(AimdGate::new(config, &GateOwner::pool("gpu")));
    let target = HttpTarget::new(&format!("http://{addr}"), "/v1/completions", None).unwrap();
    let observer = gate.clone();
    let handler = HttpHandler::new([(QUEUE.to_owned(), target)])
        .unwrap()
        .with_backoff(Backoff {
            base: Duration::from_millis(20),
            cap: Duration::from_millis(200),
        })
        .with_feedback(Arc::new(move |request, outcome| {
            observer.observe(&request.parsed.labels, outcome);
        }));
    // Reserved requests wait in the worker for room instead of requeueing.
    let spec = QueueSpec {
        pool_name: "gpu".into(),
        labels: [("classification".to_owned(), "reserved".to_owned())].into(),
        ..QueueSpec::new(QUEUE)
    };
    let runtime = Runtime::builder(Arc::new(store.clone()))
        .handler(Arc::new(handler))
        .config(rig::runtime_config(vec![spec]))
        .pool(PoolSpec::new("gpu", 16))
        .pool_gate("gpu", gate.clone() as Arc<dyn DispatchGate>)
        .build()
        .expect("valid runtime settings");
    let (token, handle) = rig::start(runtime);

    let mut windows = Vec::new();
    let bound = tokio::time::Instant::now() + Duration::from_secs(60);
    while store.results(RESULTS).await.unwrap().len() < REQUESTS {
        assert!(
            tokio::time::Instant::now() < bound,
            "every request answered within 60 s: {} answered, {} served, {} refused, band {:?}",
            store.results(RESULTS).await.unwrap().len(),
            counts.served.load(Ordering::SeqCst),
            counts.refused.load(Ordering::SeqCst),
            gate.band("reserved/batch"),
        );
        if let Some(band) = gate.band("reserved/batch") {
            windows.push(band.window);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    token.cancel();
    tokio::time::timeout(Duration::from_secs(20), handle)
        .await
        .expect("the runtime drains")
        .unwrap();

    let (served, refused) = (
        counts.served.load(Ordering::SeqCst),
        counts.refused.load(Ordering::SeqCst),
    );
    assert_eq!(served, REQUESTS, "each request served once");
    assert!(refused > 0, "the window probed past the capacity");
    assert!(
        refused < REQUESTS / 4,
        "{refused} refusals: the window settled rather than hammering"
    );
    // A window above the capacity lets one call too many through, so a
    // refusal finds it above CAPACITY and halves it to above CAPACITY / 2;
    // accepts then grow it about one per window's worth back past CAPACITY.
    let settled = &windows[windows.len() / 2..];
    let (low, high) = (CAPACITY as f64 / 2.0, CAPACITY as f64 + 2.0);
    assert!(
        settled.iter().all(|w| (low..=high).contains(w)),
        "the window stayed within [{low}, {high}] once settled: {settled:?}"
    );
}
