//! Where the processor listens by default: `[::]`, so its health and metrics ports answer on IPv6 and IPv4 loopback alike (a dual-stack pod), with no `--bind-address`.

mod common;

use common::worker::{BINARY, Worker};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::process::Command;
use std::time::Duration;

#[tokio::test]
async fn without_a_bind_address_the_health_port_answers_on_ipv6_and_ipv4_loopback() {
    let Some(server) = common::redis_server() else {
        return;
    };
    let metrics_port = common::free_port();
    let health_port = common::free_port();
    let mut command = Command::new(BINARY);
    command
        .args(["--redis-url", &server.url()])
        .args(["--igw-base-url", "http://127.0.0.1:9"])
        .args(["--metrics-port", &metrics_port.to_string()])
        .args(["--health-port", &health_port.to_string()])
        .env_remove("REDIS_URL");
    let mut worker = Worker::spawn(command, metrics_port, health_port);
    let v6 = IpAddr::V6(Ipv6Addr::LOCALHOST);
    let v4 = IpAddr::V4(Ipv4Addr::LOCALHOST);
    common::eventually("/healthz on [::1]", Duration::from_secs(15), async || {
        worker.health_status_at(v6, "/healthz").await == 200
    })
    .await;
    assert_eq!(worker.health_status_at(v4, "/healthz").await, 200);
    assert!(
        !worker.log().contains("no IPv6 here"),
        "this host has IPv6, so no fallback to IPv4 only:\n{}",
        worker.log_tail()
    );
    worker.signal("TERM");
    let status = worker.exit_within(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log_tail());
}
