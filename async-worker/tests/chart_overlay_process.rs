//! `deploy/helm/values-rust.yaml`, the upstream chart's overlay for our image: the args and environment the chart renders from it start a processor that gets ready, drains a queue and exits 0 on SIGTERM; the overlay keeps replicas, grace period, probes and UID right.
//!
//! The mapping from values to the container, as the upstream chart's
//! Deployment template (charts/llm-d-async, ap-deployments.yaml at 5de949b)
//! and its transport helpers (`llm-d-async.transport`,
//! `llm-d-async.transportConfig` in _helpers.tpl, the `ap.transport` /
//! `ap.transportConfig` surface of its values) render it; [`render`] does the same:
//!
//! | value | container |
//! |---|---|
//! | `ap.transport`, `ap.transportConfig` | args `--transport=<transport>`, `--transport-config`, `<transportConfig without urlSecret, as JSON>` (key order is immaterial to us) |
//! | `ap.transportConfig.urlSecret` | env `REDIS_URL` from that Secret (here: the test's redis-server) |
//! | `ap.prometheusURL`, `ap.prometheusCacheTTL` | `--prometheus-url=…`, `--prometheus-cache-ttl=…` when set |
//! | `ap.concurrency` (64), `ap.drainTimeout` (`2m`), `ap.health.port` (8081), `ap.metrics.secure`, `ap.metrics.port` (9090) | `--concurrency=…`, `--drain-timeout=…`, `--health-port=…`, `--metrics-endpoint-auth=…`, `--metrics-port=…`, in that order |
//! | `ap.logging.level` (`info`) | env `LOG_LEVEL` |
//! | `ap.otel.endpoint` | env `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME` and the rest, when set |
//! | `ap.health.port` | probes: startup and liveness `GET /healthz`, readiness `GET /readyz` |
//! | (constants) | `replicas: 1`, `terminationGracePeriodSeconds: 130` |
//!
//! Values that need ConfigMap or Secret files mounted (`ap.workerPools`,
//! `ap.transformConfig`, `ap.requestMergePolicyConfig`, `ap.tls.*`) make
//! this test fail naming them: it does not render files. The only changes
//! to what the chart renders are the ports (free ones, not 8081/9090) and
//! the queue's `igw_base_url` (the test's stand-in gateway); the
//! environment is exactly the chart's (cleared first).

mod common;

use std::process::Command;
use std::time::Duration;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use claim_redis::testing::RedisServerOptions;
use common::worker::{BINARY, Worker};
use serde_json::{Value, json};

const OVERLAY: &str = include_str!("../../deploy/helm/values-rust.yaml");
/// The upstream chart's constant grace period (ap-deployments.yaml).
const CHART_GRACE_SECONDS: u64 = 130;

/// `ap.<path>` of the overlay, if set.
fn ap<'a>(values: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(&values["ap"], |v, key| v.get(key))
        .filter(|v| !v.is_null())
}

/// A scalar as Go's template prints it (`{{ .Values.x }}`).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the chart renders: the args and the environment (names and values;
/// `REDIS_URL` is the Secret's, given by the caller).
fn render(values: &Value, redis_url: &str) -> (Vec<String>, Vec<(String, String)>) {
    for unsupported in [
        "workerPools",
        "transformConfig",
        "requestMergePolicyConfig",
        "tls.secretName",
        "redis.enabled",
    ] {
        let set = ap(values, unsupported).is_some_and(|v| {
            !matches!(v, Value::Bool(false)) && v != &json!([]) && v != &json!({}) && v != ""
        });
        assert!(
            !set,
            "deploy/helm/values-rust.yaml sets ap.{unsupported}: this test renders no ConfigMap or Secret files and only the ap.transport surface; extend `render` or drop the value"
        );
    }
    let or = |path: &str, default: &str| ap(values, path).map_or(default.to_owned(), text);
    let transport = ap(values, "transport")
        .map(text)
        .expect("deploy/helm/values-rust.yaml: ap.transport must be set (redis-sortedset)");
    let mut config = ap(values, "transportConfig")
        .cloned()
        .expect("deploy/helm/values-rust.yaml: ap.transportConfig must be set");
    let secret = config
        .as_object_mut()
        .expect("ap.transportConfig is a map")
        .remove("urlSecret");
    assert!(
        secret.is_some() && config.get("url").is_none(),
        "deploy/helm/values-rust.yaml: the Redis URL belongs in a Secret (ap.transportConfig.urlSecret), never inline in the args"
    );
    let mut args = vec![
        format!("--transport={transport}"),
        "--transport-config".to_owned(),
        config.to_string(),
    ];
    for (path, flag) in [
        ("prometheusURL", "--prometheus-url"),
        ("prometheusCacheTTL", "--prometheus-cache-ttl"),
    ] {
        if let Some(v) = ap(values, path).map(text).filter(|v| !v.is_empty()) {
            args.push(format!("{flag}={v}"));
        }
    }
    args.extend([
        format!("--concurrency={}", or("concurrency", "64")),
        format!("--drain-timeout={}", or("drainTimeout", "2m")),
        format!("--health-port={}", or("health.port", "8081")),
        format!("--metrics-endpoint-auth={}", or("metrics.secure", "false")),
        format!("--metrics-port={}", or("metrics.port", "9090")),
    ]);
    let mut env = vec![("LOG_LEVEL".to_owned(), or("logging.level", "info"))];
    if let Some(endpoint) = ap(values, "otel.endpoint")
        .map(text)
        .filter(|e| !e.is_empty())
    {
        env.extend([
            ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), endpoint),
            ("OTEL_SERVICE_NAME".to_owned(), "llm-d-async".to_owned()),
        ]);
    }
    env.push(("REDIS_URL".to_owned(), redis_url.to_owned()));
    (args, env)
}

/// Seconds of a Go duration made of `h`, `m` and `s` parts (`2m`, `115s`, `1m30s`).
fn go_seconds(duration: &str) -> u64 {
    let (mut total, mut digits) = (0, String::new());
    for c in duration.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => panic!("ap.drainTimeout `{duration}`: write it in h, m and s (such as 115s)"),
        };
        total += unit * digits.parse::<u64>().expect("a number before each unit");
        digits.clear();
    }
    assert!(
        digits.is_empty(),
        "ap.drainTimeout `{duration}` lacks a unit"
    );
    total
}

fn overlay() -> Value {
    serde_norway::from_str(OVERLAY)
        .unwrap_or_else(|e| panic!("deploy/helm/values-rust.yaml is not YAML: {e}"))
}

#[test]
fn the_overlay_asks_for_two_replicas_a_grace_period_past_the_drain_and_a_read_only_uid_65532() {
    let values = overlay();
    let replicas = ap(&values, "replicas").and_then(Value::as_u64);
    assert!(
        replicas.is_some_and(|n| n >= 2),
        "ap.replicas must be at least 2 (one pod's claims go to another): {replicas:?}"
    );
    let drain = go_seconds(&ap(&values, "drainTimeout").map_or("2m".into(), text));
    let asked = ap(&values, "terminationGracePeriodSeconds").and_then(Value::as_u64);
    for (grace, whose) in [
        (Some(CHART_GRACE_SECONDS), "the chart's constant"),
        (asked, "ap.terminationGracePeriodSeconds"),
    ] {
        assert!(
            grace.is_some_and(|g| g >= drain + 15),
            "{whose} ({grace:?} s) must be at least ap.drainTimeout ({drain} s) + 15 s"
        );
    }
    for (path, want) in [
        ("securityContext.runAsUser", json!(65532)),
        ("securityContext.readOnlyRootFilesystem", json!(true)),
        ("securityContext.runAsNonRoot", json!(true)),
        ("transport", json!("redis-sortedset")),
    ] {
        assert_eq!(ap(&values, path), Some(&want), "ap.{path}");
    }
    for path in ["image.repository", "image.tag"] {
        assert!(
            ap(&values, path).is_some_and(|v| !text(v).is_empty()),
            "ap.{path} must name our image"
        );
    }
    let config = ap(&values, "transportConfig").expect("a transport config");
    for ours in ["claim_lease_ttl_seconds", "max_deliveries", "replica_acks"] {
        assert!(
            config.get(ours).is_some(),
            "transportConfig.{ours}: the overlay carries our claim settings"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_args_and_environment_the_chart_renders_from_the_overlay_run_a_ready_processor() {
    // AOF on: the overlay sets require_durability.
    let Some(server) = common::redis_server_with(RedisServerOptions { aof_always: true }) else {
        return;
    };
    let gateway = StandInGateway::start(GatewayBehaviour::default())
        .await
        .expect("start the stand-in gateway");
    let mut values = overlay();
    for queue in values["ap"]["transportConfig"]["queues"]
        .as_array_mut()
        .expect("transportConfig.queues is a list")
    {
        queue["igw_base_url"] = json!(gateway.base_url());
    }
    let (health_port, metrics_port) = (common::free_port(), common::free_port());
    values["ap"]["health"]["port"] = json!(health_port);
    values["ap"]["metrics"]["port"] = json!(metrics_port);
    let (args, env) = render(&values, &server.url());

    let mut command = Command::new(BINARY);
    command.args(&args).env_clear().envs(env);
    let mut worker = Worker::spawn_exact(command, metrics_port, health_port);

    let bound = Duration::from_secs(30);
    for (probe, path) in [("readiness", "/readyz"), ("liveness", "/healthz")] {
        common::eventually(
            &format!("the {probe} probe ({path}) answering 200"),
            bound,
            async || worker.health_status(path).await == 200,
        )
        .await;
    }
    let mut conn = common::connect(&server.url()).await;
    let ids = common::go_submit_numbered(&mut conn, 10).await;
    common::eventually("a record for every request", bound, async || {
        common::depths(&mut conn).await.results >= ids.len()
    })
    .await;
    let counts = common::records_per_id(&common::records(&mut conn).await);
    assert_eq!(counts.len(), ids.len());
    assert!(
        counts.values().all(|n| *n == 1),
        "two records for one request"
    );

    worker.signal("TERM");
    let status = worker.exit_within(bound).await;
    let log = worker.log();
    assert_eq!(status.code(), Some(0), "args {args:?}; log:\n{log}");
    assert!(
        log.contains("\"max_deliveries\":10") && log.contains("\"require_durability\":true"),
        "the start line shows the overlay's claim settings in force; log:\n{log}"
    );
}
