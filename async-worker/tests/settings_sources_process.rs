//! Where the processor takes each of our settings from, as a deployment sets them: the transport config, else the flag, else its environment variable, else the default; read back from the start line it logs.

mod common;

use common::worker::{BINARY, Worker};
use std::process::Command;
use std::time::Duration;

/// Long enough for a process on a busy machine to start and give up on Redis.
const BOUND: Duration = Duration::from_secs(20);

/// The fields of the `starting the processor` line of a worker started with
/// `flags` and `env` (Redis unreachable: it logs the line, then exits 1).
async fn start_line(flags: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let unreachable = format!("redis://127.0.0.1:{}", common::free_port());
    let config = serde_json::json!({
        "url": unreachable,
        "queues": [{"queue_name": "q", "igw_base_url": "http://gateway.invalid"}],
        "claim_lease_ttl_seconds": 100,
        "max_deliveries": 4,
    });
    let mut command = Command::new(BINARY);
    command
        .args([
            "--transport-config",
            &config.to_string(),
            "--zap-encoder=json",
        ])
        .args(["--metrics-port", "0", "--health-port", "0"])
        .args(flags)
        .env_remove("RUST_LOG")
        .env_remove("LOG_LEVEL")
        .envs(env.iter().copied());
    let mut worker = Worker::spawn(command, 0, 0);
    let status = worker.exit_within(BOUND).await;
    let log = worker.log();
    assert_eq!(status.code(), Some(1), "{log}");
    log.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["message"] == "starting the processor")
        .unwrap_or_else(|| panic!("no start line:\n{log}"))
}

#[tokio::test]
async fn the_transport_config_wins_over_a_flag_which_wins_over_its_environment_variable() {
    let config_only = start_line(&[], &[]).await;
    assert_eq!(config_only["claim_lease_ttl_ms"], 100_000);
    assert_eq!(config_only["max_deliveries"], 4);
    assert_eq!(config_only["require_durability"], false);

    // The config sets the lease and the delivery limit, not durability:
    // the variables fill only what it leaves unset.
    let env = [
        ("ASYNC_WORKER_CLAIM_LEASE_TTL", "200s"),
        ("ASYNC_WORKER_MAX_DELIVERIES", "7"),
        ("ASYNC_WORKER_REQUIRE_DURABILITY", "true"),
    ];
    let from_env = start_line(&[], &env).await;
    assert_eq!(from_env["claim_lease_ttl_ms"], 100_000);
    assert_eq!(from_env["max_deliveries"], 4);
    assert_eq!(from_env["require_durability"], true);

    let flags = ["--claim-lease-ttl", "250s", "--require-durability=false"];
    let from_flags = start_line(&flags, &env).await;
    assert_eq!(from_flags["claim_lease_ttl_ms"], 100_000);
    assert_eq!(from_flags["max_deliveries"], 4);
    assert_eq!(from_flags["require_durability"], false);
}

#[tokio::test]
async fn a_bad_environment_value_is_refused_naming_the_variable() {
    let unreachable = format!("redis://127.0.0.1:{}", common::free_port());
    let out = Command::new(BINARY)
        .args(["--redis-url", &unreachable, "--igw-base-url", "http://gw"])
        .env("ASYNC_WORKER_MAX_DELIVERIES", "many")
        .output()
        .expect("run async-worker");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for says in ["many", "--max-deliveries", "ASYNC_WORKER_MAX_DELIVERIES"] {
        assert!(stderr.contains(says), "the refusal lacks {says}: {stderr}");
    }
}
