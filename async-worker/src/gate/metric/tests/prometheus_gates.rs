//! The three Prometheus gates against a stand-in Prometheus: formulas, fallbacks, the cascade's order, the wire format and the cache.

use super::*;
use serde_json::json;

const BAD_QUERY: &str = r#"{"status":"error","errorType":"bad_data","error":"no"}"#;

fn ok(values: &[f64]) -> (u16, String) {
    (200, vector(values))
}

#[tokio::test]
async fn saturation_budget_is_threshold_minus_saturation_and_fails_open_by_default() {
    let stub = prometheus(|_| ok(&[0.5])).await;
    let open = env(&stub.url(), Duration::ZERO);
    // D = 1 - saturation = 0.5; T = 1 - 0.8 = 0.2.
    let gate = gate("prometheus-saturation", params(json!({"pool": "p"})), &open);
    assert_near(gate.budget().await, 0.3);
    let down = env("http://127.0.0.1:9", Duration::ZERO);
    let gate = gate_for_fallback(&down, json!({"pool": "p"}));
    assert_near(gate.budget().await, 1.0);
    let gate = gate_for_fallback(&down, json!({"pool": "p", "fallback": "0.75"}));
    assert_near(gate.budget().await, 0.25);
}

fn gate_for_fallback(env: &GateEnv, value: serde_json::Value) -> Arc<dyn DispatchGate> {
    gate("prometheus-saturation", params(value), env)
}

#[tokio::test]
async fn saturation_at_or_above_the_threshold_closes_and_apply_refuses() {
    let stub = prometheus(|_| ok(&[0.15])).await;
    let gate = gate(
        "prometheus-saturation",
        params(json!({"pool": "p", "namespace": "ns"})),
        &env(&stub.url(), Duration::ZERO),
    );
    assert_eq!(gate.budget().await, 0.0);
    assert_eq!(apply(gate.as_ref()).await, Verdict::Refuse);
    let query = sent(&stub.requests()[0], "query").unwrap();
    assert_eq!(
        query,
        r#"1 - inference_extension_flow_control_pool_saturation{inference_pool="p",namespace="ns"}"#
    );
}

/// A stand-in answering the budget cascade's sources by their position.
async fn cascade(answers: [(u16, String); 3]) -> HttpStub {
    let queries = crate::gate::metric::promql::budget_cascade("p", "", 10.0);
    prometheus(move |query| {
        let index = queries
            .iter()
            .position(|q| q == query)
            .expect("a cascade query");
        answers[index].clone()
    })
    .await
}

fn budget_gate(stub: &HttpStub, fallback: &str) -> Arc<dyn DispatchGate> {
    let value =
        json!({"pool": "p", "max_concurrency": "10", "baseline": "0.05", "fallback": fallback});
    gate(
        "prometheus-budget",
        params(value),
        &env(&stub.url(), Duration::ZERO),
    )
}

fn queries_sent(stub: &HttpStub) -> usize {
    stub.requests().len()
}

#[tokio::test]
async fn the_first_budget_source_with_a_sample_wins_and_later_ones_are_not_asked() {
    let stub = cascade([ok(&[0.6]), ok(&[0.1]), ok(&[0.1])]).await;
    assert_near(budget_gate(&stub, "0").budget().await, 0.55);
    assert_eq!(queries_sent(&stub), 1);
}

#[tokio::test]
async fn an_error_or_an_empty_vector_falls_through_to_the_next_source() {
    let stub = cascade([ok(&[]), (400, BAD_QUERY.to_owned()), ok(&[0.25])]).await;
    assert_near(budget_gate(&stub, "0").budget().await, 0.2);
    assert_eq!(queries_sent(&stub), 3);
}

#[tokio::test]
async fn a_nan_winner_gives_the_fallback_without_asking_further() {
    let stub = cascade([ok(&[f64::NAN]), ok(&[0.9]), ok(&[0.9])]).await;
    assert_near(budget_gate(&stub, "0.4").budget().await, 0.4);
    assert_eq!(queries_sent(&stub), 1);
}

#[tokio::test]
async fn when_every_source_fails_the_budget_is_the_fallback() {
    let stub = cascade([ok(&[]), (500, "down".to_owned()), ok(&[])]).await;
    assert_near(budget_gate(&stub, "0.3").budget().await, 0.3);
    assert_eq!(queries_sent(&stub), 3);
}

#[tokio::test]
async fn prometheus_query_sends_its_query_verbatim_as_a_form_post_with_time() {
    let stub = prometheus(|_| ok(&[0.4, 0.9])).await;
    let env = env(&stub.url(), Duration::ZERO);
    let gate = gate(
        "prometheus-query",
        params(json!({"query": "1 - max(x{a=\"b\"})"})),
        &env,
    );
    // The first sample, T = 0.
    assert_near(gate.budget().await, 0.4);
    let request = &stub.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.target.as_str()),
        ("POST", "/api/v1/query")
    );
    assert_eq!(
        request.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(sent(request, "query").unwrap(), "1 - max(x{a=\"b\"})");
    let time: f64 = sent(request, "time").unwrap().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    assert!((now.as_secs_f64() - time).abs() < 60.0, "time {time}");
}

#[tokio::test]
async fn a_server_refusing_post_is_asked_again_with_get_and_userinfo_is_basic_auth() {
    let responder: Responder = Arc::new(|request: &StubRequest| match request.method.as_str() {
        "POST" => (405, "method not allowed".to_owned()),
        _ => (200, vector(&[0.7])),
    });
    let stub = HttpStub::start(responder).await.unwrap();
    let url = format!("http://reader:secret@{}", stub.addr);
    let gate = gate(
        "prometheus-query",
        params(json!({"query": "up"})),
        &env(&url, Duration::ZERO),
    );
    assert_near(gate.budget().await, 0.7);
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].method, "GET");
    assert_eq!(sent(&requests[1], "query").unwrap(), "up");
    // base64("reader:secret")
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some("Basic cmVhZGVyOnNlY3JldA==")
        );
    }
}

#[tokio::test]
async fn a_non_vector_answer_gives_the_fallback() {
    let scalar = r#"{"status":"success","data":{"resultType":"scalar","result":[1,"0.9"]}}"#;
    let stub = prometheus(move |_| (200, scalar.to_owned())).await;
    let env = env(&stub.url(), Duration::ZERO);
    let gate = gate(
        "prometheus-query",
        params(json!({"query": "up", "fallback": 0.2})),
        &env,
    );
    assert_near(gate.budget().await, 0.2);
}

#[tokio::test]
async fn each_source_is_read_once_per_ttl() {
    let stub = prometheus(|_| ok(&[0.5])).await;
    let env = env(&stub.url(), Duration::from_secs(3600));
    let gate = gate("prometheus-query", params(json!({"query": "up"})), &env);
    for _ in 0..3 {
        assert_near(gate.budget().await, 0.5);
        assert_eq!(apply(gate.as_ref()).await, Verdict::Continue);
    }
    assert_eq!(queries_sent(&stub), 1);
}
