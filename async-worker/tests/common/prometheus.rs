//! A private Prometheus for the metric-gate tests (prometheus_gates, flow_budget): started on a free port scraping one target every second, killed and its data removed when dropped.
//!
//! Without the `prometheus` binary (Debian package `prometheus`) a test
//! skips locally and fails when `CI` is set; `.ci/run` installs it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A private Prometheus, killed and its data removed when dropped.
pub struct Prometheus {
    child: Child,
    dir: PathBuf,
    pub url: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `prometheus` is on PATH; with `CI` set its absence is a failure.
pub fn installed() -> bool {
    let found = Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
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
    let port = claim_redis::testing::free_port().expect("a free loopback port");
    let dir = std::env::temp_dir().join(format!("prometheus-gates-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: model-server\n    scrape_interval: 1s\n\
             \x20   static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .expect("write the config");
    let log = std::fs::File::create(dir.join("prometheus.log")).expect("a log file");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(log.try_clone().expect("the log file"))
        .stderr(log)
        .spawn()
        .expect("start prometheus");
    Prometheus {
        child,
        dir,
        url: format!("http://127.0.0.1:{port}"),
    }
}
