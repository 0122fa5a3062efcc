//! The argv the upstream chart renders for its flow-control values resolves to what those values mean: the pools file's pools and pool gate, the merge policy, the Prometheus flags, the queues' gates and labels, and a single-queue gate; every gate builds.

use super::chart::*;
use super::*;
use async_worker::merge_policy::MergePolicy;
use std::time::Duration;

/// The flow-control argv with its ConfigMap written to a private directory
/// standing in for the chart's mount; resolved, then the directory removed.
fn flow_control_settings() -> ProcessorSettings {
    let dir = std::env::temp_dir().join(format!("chart-flow-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in [CHART_WORKER_POOLS, CHART_MERGE_POLICY] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mount = dir.to_str().unwrap();
    let argv: Vec<String> = CHART_FLOW_CONTROL
        .iter()
        .map(|arg| arg.replace(CHART_CONFIG_DIR, mount))
        .collect();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let settings = resolve(&argv);
    let _ = std::fs::remove_dir_all(&dir);
    settings.unwrap_or_else(|e| panic!("the chart's flow-control argv: {e}"))
}

#[test]
fn the_charts_worker_pools_merge_policy_and_prometheus_values_resolve_as_go_reads_them() {
    let s = flow_control_settings();
    let pools: Vec<_> = (s.flow.pools.iter())
        .map(|p| (p.id.as_str(), p.workers, p.gate_type.as_str()))
        .collect();
    assert_eq!(
        pools,
        [("default", 2, ""), ("batch-pool", 4, "wait-on-refuse")]
    );
    let inner = s.flow.pools[1].gate_params["gate"].as_str().unwrap();
    assert_says(inner, &["prometheus-saturation", "local-max-concurrency"]);
    let Some(MergePolicy::TierPriority(tiers)) = &s.flow.merge_policy else {
        panic!("not tier-priority: {:?}", s.flow.merge_policy);
    };
    assert_eq!(tiers.priority_header.as_deref(), Some("x-gateway-priority"));
    assert_eq!(tiers.tier_label, "tier");
    assert_eq!(
        s.flow.prometheus_url.as_deref(),
        Some("http://prometheus:9090")
    );
    assert_eq!(s.flow.prometheus_cache_ttl, Duration::ZERO);
    assert_eq!(s.runtime.batch_size, 10);
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(1000));
    build_gates(&s).unwrap_or_else(|e| panic!("the chart's gates: {e}"));
}

#[test]
fn the_charts_queues_config_keeps_each_queues_pool_labels_and_gate() {
    let s = flow_control_settings();
    let queues: Vec<_> = (s.queues.iter())
        .map(|q| {
            let tier = q.labels.get("tier").map(String::as_str);
            (
                q.queue_name.as_str(),
                q.worker_pool_id.as_str(),
                tier,
                q.gate_type.as_str(),
            )
        })
        .collect();
    assert_eq!(
        queues,
        [
            (
                "interactive-sortedset",
                "default",
                Some("interactive"),
                "redis-quota"
            ),
            ("batch-sortedset", "batch-pool", Some("batch"), ""),
        ]
    );
    let params = serde_json::Value::Object(s.queues[0].gate_params.clone());
    let expected = serde_json::json!({
        "address": "redis:6379", "attribute": "team", "gating_mode": "classifying",
        "limit": "1", "mode": "concurrency",
    });
    assert_eq!(params, expected);
    let pools: Vec<_> = (s.runtime.queues.iter())
        .map(|q| q.pool_name.as_str())
        .collect();
    assert_eq!(pools, ["default", "batch-pool"]);
}

#[test]
fn the_charts_single_queue_gate_values_give_the_one_queue_its_stringified_gate() {
    let s = ok(CHART_SINGLE_QUEUE_GATE);
    assert_single_queue(&s, "query-request-sortedset", "http://igw/v1/completions");
    assert_eq!(s.queues[0].gate_type, "prometheus-query");
    let params = serde_json::Value::Object(s.queues[0].gate_params.clone());
    let query =
        r#"1 - inference_extension_flow_control_pool_saturation{inference_pool="e2e-pool"}"#;
    assert_eq!(
        params,
        serde_json::json!({"fallback": "0.0", "query": query})
    );
    assert_eq!(s.runtime.concurrency, 1);
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(500));
    assert_eq!(s.flow.prometheus_cache_ttl, Duration::ZERO);
    assert!(s.flow.pools.is_empty(), "one default pool");
    build_gates(&s).unwrap_or_else(|e| panic!("the chart's gates: {e}"));
}
