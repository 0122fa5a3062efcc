//! The flow-control settings: the pools file with Go's errors, the merge-policy and transform files, the gate flags, and the gates built at start.

use super::*;
use std::io::Write;
use std::time::Duration;

/// A temporary file holding `text`, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("{}-{name}", std::process::id()));
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const ONE_QUEUE: &str = r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}]}"#;

const TWO_POOLS: &str = r#"{"queues":[
    {"queue_name":"qa","igw_base_url":"http://gw","worker_pool_id":"batch"},
    {"queue_name":"qb","igw_base_url":"http://gw"}]}"#;

/// The arguments of transport config `transport` with the pools file at
/// `pools`.
fn with_pools<'a>(transport: &'a str, pools: &'a str) -> [&'a str; 4] {
    ["--transport-config", transport, "--pool-config-file", pools]
}

#[test]
fn a_pools_file_gives_each_pool_its_workers_and_its_gate() {
    let pools = TempFile::new(
        "pools-ok.json",
        r#"[{"id":"default","workers":3},
            {"id":"batch","workers":2,"gate_type":"local-max-concurrency","gate_params":{"limit":"1"},"extra":1}]"#,
    );
    let s = ok(&with_pools(TWO_POOLS, pools.path()));
    let specs: Vec<_> = s
        .runtime
        .pools
        .iter()
        .map(|p| (p.name.as_str(), p.workers))
        .collect();
    assert_eq!(specs, [("default", 3), ("batch", 2)]);
    assert_eq!(s.flow.pools[1].gate_type, "local-max-concurrency");
    assert_eq!(s.runtime.queues[0].pool_name, "batch");
}

#[test]
fn a_bad_pools_file_is_refused_with_gos_error() {
    let cases = [
        (
            "[{\"id\":\"\",\"workers\":1}]",
            "pool config at index 0 has an empty ID",
        ),
        (
            "[{\"id\":\"p\",\"workers\":0}]",
            "pool \"p\" must have at least 1 worker",
        ),
        (
            "[{\"id\":\"p\",\"workers\":1},{\"id\":\"p\",\"workers\":2}]",
            "duplicate pool ID found: \"p\"",
        ),
        ("{\"id\":\"p\"}", "failed to unmarshal pool config"),
    ];
    for (i, (text, says)) in cases.into_iter().enumerate() {
        let pools = TempFile::new(&format!("pools-bad-{i}.json"), text);
        let m = refused(&with_pools(ONE_QUEUE, pools.path()));
        assert_says(&m, &["--pool-config-file", says]);
    }
    let m = refused(&with_pools(ONE_QUEUE, "/nonexistent/p.json"));
    assert_says(
        &m,
        &["failed to read pool config file", "/nonexistent/p.json"],
    );
}

#[test]
fn a_pools_file_needs_a_queue_config_and_every_queue_pool_listed() {
    let pools = TempFile::new("pools-default.json", r#"[{"id":"default","workers":1}]"#);
    let m = refused(&[
        "--igw-base-url",
        "http://gw",
        "--pool-config-file",
        pools.path(),
    ]);
    assert_says(
        &m,
        &[
            "pool-config-file can only be specified when a transport/queues config is also specified",
        ],
    );
    let m = refused(&with_pools(TWO_POOLS, pools.path()));
    assert_says(
        &m,
        &["worker pool \"batch\" specified in queue config not found in pool configuration"],
    );
}

#[test]
fn the_merge_policy_and_transform_files_are_read_and_their_errors_are_gos() {
    let policy = TempFile::new("policy.json", r#"{"type":"tier-priority","parameters":{}}"#);
    let transforms = TempFile::new(
        "transforms.json",
        r#"{"requestTransforms":[{"name":"g","type":"gcs_uri_multipart","parameters":{"providers":["gcs"]}}]}"#,
    );
    let s = ok(&[
        "--transport-config",
        ONE_QUEUE,
        "--request-merge-policy-config-file",
        policy.path(),
        "--transform-config-file",
        transforms.path(),
    ]);
    assert!(s.flow.merge_policy.is_some());
    assert!(!s.flow.transforms.is_empty());
    let unknown = TempFile::new("policy-bad.json", r#"{"type":"fifo"}"#);
    let m = refused(&[
        "--igw-base-url",
        "http://gw",
        "--request-merge-policy-config",
        unknown.path(),
    ]);
    assert_says(&m, &["unknown request merge policy type: fifo"]);
}

#[test]
fn the_gate_flags_set_the_wait_bound_and_the_prometheus_source() {
    let s = ok(&[
        "--igw-base-url",
        "http://gw",
        "--gate-wait-timeout=90s",
        "--prometheus-url=http://prometheus:9090",
        "--prometheus-cache-ttl=0",
    ]);
    assert_eq!(s.runtime.gate_wait_timeout, Duration::from_secs(90));
    assert_eq!(
        s.flow.prometheus_url.as_deref(),
        Some("http://prometheus:9090")
    );
    assert_eq!(s.flow.prometheus_cache_ttl, Duration::ZERO);
    let s = ok(&["--igw-base-url", "http://gw"]);
    assert_eq!(s.runtime.gate_wait_timeout, Duration::from_secs(300));
    assert_eq!(s.flow.prometheus_cache_ttl, Duration::from_secs(5));
    let m = refused(&["--igw-base-url", "http://gw", "--gate-wait-timeout=soon"]);
    assert_says(&m, &["--gate-wait-timeout \"soon\" is not usable"]);
}

/// What building the gates of `json`'s queues answers.
fn gates_of(json: &str) -> Result<(), String> {
    build_gates(&config(json))
}

#[test]
fn a_gate_that_cannot_be_built_stops_the_start_naming_the_queue_and_type() {
    let error = gates_of(
        r#"{"queues":[{"id":"jobs","queue_name":"q","igw_base_url":"http://gw","gate_type":"constnat"}]}"#,
    )
    .unwrap_err();
    assert_says(
        &error,
        &[
            "failed to create gate for queue \"jobs\" (gate_type=\"constnat\")",
            "constant",
        ],
    );
    let error = gates_of(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_type":"local-max-concurrency","gate_params":{"limit":"0"}}]}"#,
    )
    .unwrap_err();
    assert_says(
        &error,
        &["local-max-concurrency limit must be greater than 0, got 0"],
    );
    gates_of(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_type":"constant"}]}"#,
    )
    .expect("a known gate builds");
}

/// A request of queue `queue_id`, unclassified.
fn request_of(queue_id: &str) -> async_worker::Request {
    let member = r#"{"internal":{"request_token":"t"},"request_kind":"redis","data":{"id":"r","deadline":4000000000,"payload":{}}}"#;
    async_worker::Request {
        queue_id: queue_id.to_owned(),
        queue_name: queue_id.to_owned(),
        generation: claim_core::Generation::new("r", "t"),
        member: claim_core::Member::new(member.as_bytes().to_vec()),
        score: claim_core::Score(4e9),
        parsed: claim_core::wire::parse_member(member.as_bytes()).unwrap(),
        deadline: claim_core::Millis(4_000_000_000_000),
        redeliveries: 0,
    }
}

#[tokio::test]
async fn each_gateway_call_is_reported_to_the_gate_of_its_queues_pool() {
    let pools = TempFile::new(
        "pools-aimd.json",
        r#"[{"id":"default","workers":2},{"id":"batch","workers":2,"gate_type":"aimd"}]"#,
    );
    let s = ok(&with_pools(TWO_POOLS, pools.path()));
    let gates = crate::flow::FlowGates::build(&s, &crate::flow::gate_env(&s)).unwrap();
    let feedback = gates.feedback(&s).expect("a queue has a gate to tell");
    let pool_gate = gates.pool("batch").expect("the batch pool's gate");
    assert_eq!(pool_gate.budget().await, 1.0, "no band seen yet");
    let refused = async_worker::gate::GatewayOutcome {
        retry_after: Some(Duration::from_secs(30)),
        ..async_worker::gate::GatewayOutcome::answered(
            tokio::time::Instant::now(),
            429,
            |name| (name == "x-llm-d-request-dropped-reason").then_some("rejected-saturated"),
            None,
        )
    };
    feedback(&request_of("qb"), &refused);
    assert_eq!(pool_gate.budget().await, 1.0, "qb is in the default pool");
    feedback(&request_of("qa"), &refused);
    assert_eq!(pool_gate.budget().await, 0.0, "closed for the Retry-After");
    let ungated = ok(&["--transport-config", ONE_QUEUE]);
    let none = crate::flow::FlowGates::build(&ungated, &crate::flow::gate_env(&ungated)).unwrap();
    assert!(
        none.feedback(&ungated).is_none(),
        "no gate, nothing to tell"
    );
}
