//! `endpoint-scrape` against a stand-in endpoint: fixed and pod-scaled maxima, label filters, non-200 answers and the fallback.

use super::*;
use serde_json::json;

const METRICS: &str = "# TYPE vllm:num_requests_waiting gauge\n\
    vllm:num_requests_waiting{inference_pool=\"other\"} 9\n\
    vllm:num_requests_waiting{inference_pool=\"p\"} 3\n\
    # TYPE inference_pool_ready_pods gauge\n\
    inference_pool_ready_pods{name=\"p\"} 2\n";

fn scrape_gate(stub: &HttpStub, extra: serde_json::Value) -> Arc<dyn DispatchGate> {
    let mut value = json!({
        "url": format!("{}/metrics", stub.url()),
        "metric": "vllm:num_requests_waiting",
        "labels": {"inference_pool": "p"},
    });
    for (key, v) in extra.as_object().unwrap() {
        value[key] = v.clone();
    }
    gate("endpoint-scrape", params(value), &GateEnv::default())
}

#[tokio::test]
async fn a_fixed_max_count_scales_the_sample_and_the_baseline_is_the_threshold() {
    let stub = endpoint(200, METRICS).await;
    // s = 3 / 10, D = 0.7, T = 0.2.
    let gate = scrape_gate(&stub, json!({"max_count_per_pod": "10", "baseline": "0.2"}));
    assert_near(gate.budget().await, 0.5);
    let request = &stub.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.target.as_str()),
        ("GET", "/metrics")
    );
}

#[tokio::test]
async fn without_a_max_count_the_sample_is_the_share_clamped_to_one() {
    let stub = endpoint(200, METRICS).await;
    // s = min(1, 3), D = 0: closed.
    assert_eq!(scrape_gate(&stub, json!({})).budget().await, 0.0);
    let labels = json!({"labels": "{\"inference_pool\":\"other\"}", "max_count_per_pod": 10});
    assert_near(scrape_gate(&stub, labels).budget().await, 0.1);
}

#[tokio::test]
async fn pods_scaling_multiplies_the_max_count_by_the_ready_pods() {
    let stub = endpoint(200, METRICS).await;
    let pods = json!({
        "max_count_per_pod": "5",
        "pods_url": format!("{}/metrics", stub.url()),
        "pods_metric": "inference_pool_ready_pods",
        "pods_labels": {"name": "p"},
    });
    // max = 2 pods x 5 = 10: s = 0.3, D = 0.7.
    assert_near(scrape_gate(&stub, pods).budget().await, 0.7);
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn a_missing_or_zero_pods_metric_gives_the_fallback() {
    let stub = endpoint(200, METRICS).await;
    let missing = json!({
        "max_count_per_pod": "5",
        "fallback": "0.6",
        "pods_url": format!("{}/metrics", stub.url()),
        "pods_metric": "inference_pool_ready_pods",
        "pods_labels": {"name": "absent"},
    });
    assert_near(scrape_gate(&stub, missing).budget().await, 0.6);
    let zero = endpoint(200, "m 1\ninference_pool_ready_pods 0\n").await;
    let value = json!({
        "url": format!("{}/metrics", zero.url()),
        "metric": "m",
        "max_count_per_pod": "5",
        "fallback": "0.6",
        "pods_url": format!("{}/metrics", zero.url()),
        "pods_metric": "inference_pool_ready_pods",
    });
    let gate = gate("endpoint-scrape", params(value), &GateEnv::default());
    assert_near(gate.budget().await, 0.6);
}

#[tokio::test]
async fn a_non_200_answer_an_unparsable_body_or_no_series_give_the_fallback() {
    for stub in [
        endpoint(503, METRICS).await,
        endpoint(200, "not the text format {").await,
        endpoint(200, "other_metric 1\n").await,
    ] {
        let gate = scrape_gate(&stub, json!({"fallback": "0.35", "max_count_per_pod": 10}));
        assert_near(gate.budget().await, 0.35);
    }
}

#[tokio::test]
async fn a_scrape_is_cached_for_the_ttl() {
    let stub = endpoint(200, METRICS).await;
    let value = json!({
        "url": format!("{}/metrics", stub.url()),
        "metric": "vllm:num_requests_waiting",
        "max_count_per_pod": 10,
    });
    let env = GateEnv {
        prometheus_cache_ttl: Duration::from_secs(3600),
        ..GateEnv::default()
    };
    let gate = gate("endpoint-scrape", params(value), &env);
    for _ in 0..3 {
        // The first series in file order: 9 of 10.
        assert_near(gate.budget().await, 0.1);
    }
    assert_eq!(stub.requests().len(), 1);
}
