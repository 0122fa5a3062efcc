//! A private Prometheus server for the metric-gate tests and the `flow` bench: started on a free loopback port with its own data dir, scraping one target every second, killed and its data removed when dropped.
//!
//! It needs the `prometheus` binary on PATH (Debian package `prometheus`,
//! which `.ci/run` installs).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A running Prometheus, killed and its data dir removed when dropped.
#[derive(Debug)]
pub struct Prometheus {
    child: Child,
    dir: PathBuf,
    /// Its base URL, `http://127.0.0.1:<port>`.
    pub url: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a `prometheus` binary answers on PATH.
pub fn on_path() -> bool {
    Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Prometheus {
    /// Starts Prometheus scraping `target` (`host:port`, path `/metrics`)
    /// every second under job `job`; it answers queries once it has
    /// scraped (poll for the series you need).
    pub fn start(target: &str, job: &str) -> std::io::Result<Prometheus> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let dir = std::env::temp_dir().join(format!("prometheus-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: {job}\n    scrape_interval: 1s\n\
                 \x20   static_configs:\n      - targets: ['{target}']\n"
            ),
        )?;
        let spawned = std::fs::File::create(dir.join("prometheus.log")).and_then(|log| {
            Command::new("prometheus")
                .arg(format!("--config.file={}", config.display()))
                .arg(format!(
                    "--storage.tsdb.path={}",
                    dir.join("data").display()
                ))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
        });
        let child = spawned.inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&dir);
        })?;
        Ok(Prometheus {
            child,
            dir,
            url: format!("http://127.0.0.1:{port}"),
        })
    }
}
