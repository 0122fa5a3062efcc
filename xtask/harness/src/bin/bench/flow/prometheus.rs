//! The `flow` run's private Prometheus: `/usr/bin/prometheus` (or whatever `prometheus` is on PATH) on a free port with its own data dir, scraping the stand-in pool every second.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long Prometheus may take to start and hold a first sample.
const READY_BOUND: Duration = Duration::from_secs(60);

/// A running Prometheus, killed and its data dir removed when dropped.
#[derive(Debug)]
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

/// Why there is no Prometheus for the run (the row says it).
pub fn missing() -> Option<String> {
    let found = Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!found).then(|| "prometheus-not-on-PATH".to_owned())
}

impl Prometheus {
    /// Starts Prometheus scraping `target` (`host:port`) every second, and
    /// waits until a query answers with the target's running count.
    pub async fn start(target: &str) -> Result<Prometheus, String> {
        let port = claim_redis::testing::free_port().map_err(|e| e.to_string())?;
        let dir = std::env::temp_dir().join(format!("bench-flow-prometheus-{port}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let config = dir.join("prometheus.yml");
        let text = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: pool\n    scrape_interval: 1s\n\
             \x20   static_configs:\n      - targets: ['{target}']\n"
        );
        std::fs::write(&config, text).map_err(|e| e.to_string())?;
        let log = std::fs::File::create(dir.join("prometheus.log")).map_err(|e| e.to_string())?;
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start prometheus: {e}"))?;
        let prometheus = Prometheus {
            child,
            dir,
            url: format!("http://127.0.0.1:{port}"),
        };
        prometheus.until_scraped().await?;
        Ok(prometheus)
    }

    /// Polls an instant query until the pool's series is there.
    async fn until_scraped(&self) -> Result<(), String> {
        async_worker::http_handler::install_crypto_provider();
        let client = reqwest::Client::new();
        let query = format!("{}/api/v1/query?query=vllm:num_requests_running", self.url);
        let started = Instant::now();
        while started.elapsed() < READY_BOUND {
            let answer = client.get(&query).send().await;
            if let Ok(answer) = answer
                && let Ok(body) = answer.text().await
                && body.contains("\"value\"")
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(format!("prometheus held no sample within {READY_BOUND:?}"))
    }
}
