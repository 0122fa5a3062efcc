//! Starting the binary exactly as the upstream chart does: its rendered argv with only the cluster's addresses, the ports and the ConfigMap's mount directory swapped for the test's, `REDIS_URL` and `LOG_LEVEL` in the environment.

use super::worker::{BINARY, Worker};
use std::process::Command;

/// The chart's `argv` with every `(from, to)` of `swaps` replaced in each
/// argument (whole flags or parts of a JSON value alike), and the health
/// and metrics ports (8081, 9090) replaced by free ones; started with
/// `REDIS_URL` set to `redis_url`.
pub fn start_as_chart(argv: &[&str], swaps: &[(&str, String)], redis_url: &str) -> Worker {
    let (health_port, metrics_port) = (super::free_port(), super::free_port());
    let ports = [
        ("--health-port=8081", format!("--health-port={health_port}")),
        (
            "--metrics-port=9090",
            format!("--metrics-port={metrics_port}"),
        ),
    ];
    let argv = argv.iter().map(|arg| {
        let swap = |arg: String, (from, to): &(&str, String)| arg.replace(from, to);
        let arg = swaps.iter().fold(arg.to_string(), swap);
        ports.iter().fold(arg, swap)
    });
    let mut command = Command::new(BINARY);
    command
        .args(argv)
        .env("REDIS_URL", redis_url)
        .env("LOG_LEVEL", "info")
        .env_remove("RUST_LOG");
    Worker::spawn(command, metrics_port, health_port)
}
