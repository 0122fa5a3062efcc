//! The metric-gate tests' Prometheus (prometheus_gates, flow_budget): test support's private server, and the rule that CI never skips a test that needs it.

pub use async_worker::test_support::prometheus::Prometheus;

/// `prometheus` is on PATH; with `CI` set its absence is a failure.
pub fn installed() -> bool {
    let found = async_worker::test_support::prometheus::on_path();
    assert!(
        found || std::env::var_os("CI").is_none(),
        "CI is set but the prometheus binary (Debian package prometheus) is not on PATH"
    );
    if !found {
        eprintln!("skipped: prometheus not on PATH (set CI to make this a failure)");
    }
    found
}

/// Starts Prometheus scraping `target` (`host:port`, path `/metrics`)
/// every second.
pub fn start(target: &str) -> Prometheus {
    Prometheus::start(target, "model-server").expect("start prometheus")
}
