//! The metric gates against stand-in servers: every startup error, each gate's formula, the cascade's order, fallbacks and the cache.

mod config_errors;
mod prometheus_gates;
mod scrape_gates;

use crate::gate::contract::{DispatchGate, GateEnv, GateOwner, GateParams, Verdict};
use crate::gate::factory::build;
use crate::test_support::gate_probe::{params, verdict};
use crate::test_support::http_stub::{HttpStub, Responder, StubRequest};
use reqwest::Url;
use std::sync::Arc;
use std::time::Duration;

/// The process settings with this Prometheus URL and cache TTL.
fn env(prometheus_url: &str, ttl: Duration) -> GateEnv {
    GateEnv {
        prometheus_url: Some(prometheus_url.to_owned()),
        prometheus_cache_ttl: ttl,
        ..GateEnv::default()
    }
}

fn gate(gate_type: &str, params: GateParams, env: &GateEnv) -> Arc<dyn DispatchGate> {
    let owner = GateOwner::queue("q", "q-set", "default");
    let gate =
        build(gate_type, &params, &owner, env).unwrap_or_else(|e| panic!("{gate_type}: {e}"));
    gate.expect("a metric gate, not \"none\"")
}

/// The `query` (and `time`) a stand-in Prometheus was sent, from the form
/// body of a POST or the query string of a GET.
fn sent(request: &StubRequest, key: &str) -> Option<String> {
    let encoded = if request.method == "POST" {
        request.body.clone()
    } else {
        request.target.split_once('?').map(|(_, q)| q.to_owned())?
    };
    let url = Url::parse(&format!("http://stub.invalid/?{encoded}")).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// An instant-vector answer with one sample per value.
fn vector(values: &[f64]) -> String {
    let samples: Vec<String> = values
        .iter()
        .map(|v| {
            format!(
                r#"{{"metric":{{}},"value":[1700000000.0,"{}"]}}"#,
                go_text(*v)
            )
        })
        .collect();
    format!(
        r#"{{"status":"success","data":{{"resultType":"vector","result":[{}]}}}}"#,
        samples.join(",")
    )
}

/// A float as Prometheus writes a sample value.
fn go_text(value: f64) -> String {
    match value {
        v if v.is_nan() => "NaN".to_owned(),
        v if v.is_infinite() && v > 0.0 => "+Inf".to_owned(),
        v => v.to_string(),
    }
}

/// A stand-in Prometheus answering each query with `answer(query)`: a
/// status and body.
async fn prometheus(answer: impl Fn(&str) -> (u16, String) + Send + Sync + 'static) -> HttpStub {
    let responder: Responder = Arc::new(move |request: &StubRequest| {
        let query = sent(request, "query").unwrap_or_default();
        answer(&query)
    });
    HttpStub::start(responder)
        .await
        .expect("start the stand-in")
}

/// A stand-in endpoint serving `body` at every path with `status`.
async fn endpoint(status: u16, body: &str) -> HttpStub {
    let body = body.to_owned();
    let responder: Responder = Arc::new(move |_: &StubRequest| (status, body.clone()));
    HttpStub::start(responder)
        .await
        .expect("start the stand-in")
}

/// The verdict of a budget-only gate, which never fails.
async fn apply(gate: &dyn DispatchGate) -> Verdict {
    verdict(gate).await.expect("a budget-only gate never fails")
}

fn assert_near(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "expected {expected}, got {actual}"
    );
}
