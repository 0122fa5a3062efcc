//! `cargo xtask image` (and the `image` step of `cargo xtask ci`): the container image's binary, built as the Dockerfile builds it and run in an empty root.
//!
//! There is no container daemon here, so this proves what it can of the
//! image without building it: it builds the release binary with the
//! Dockerfile's cargo command ([`BUILD`] plus `--target <host triple>`; a
//! test below fails when the Dockerfile's command drifts from it), strips
//! its debug info as the Dockerfile does, lays out
//! an empty root directory holding only what the runtime stage adds (the
//! binary at `/llm-d-async`, the upstream chart's `command`, and a symlink
//! at `/usr/local/bin/async-worker`) plus exactly the shared libraries
//! `ldd` reports and the CA bundle (a subset of what the distroless `cc`
//! base ships; the HTTP client does not build without roots), every
//! file and directory read-only, and runs there with `chroot` as UID 65532
//! (the image's `USER`, so nothing in the root is writable, as under
//! `readOnlyRootFilesystem`) and an empty environment:
//!
//! 1. `/llm-d-async --help` and `/usr/local/bin/async-worker --help`;
//! 2. a short memory-store `demo` (300 requests, two replicas, one
//!    hard-stopped), which must print `PASS`;
//! 3. the processor itself against a `redis-server` this step starts
//!    outside the root on a free port (the root holds no redis-server):
//!    `/readyz` on its health port must answer 200 within a bound, and
//!    SIGTERM must end it with exit code 0. The Redis demo cannot run in
//!    the image: it stops its replicas with the `kill` program, which the
//!    distroless image lacks (and it starts them through `/proc/self/exe`,
//!    which this root, without `/proc`, lacks too).
//!
//! Not root: `unshare --map-root-user` makes the chroot possible (as the
//! mapped root, not UID 65532); where that fails too the step is skipped
//! with a message, unless `CI` is set, which makes it a failure. Without
//! `redis-server` the third run is skipped the same way. The root is
//! removed afterwards. The release build is this step's only compile: CI's
//! chaos runs use the debug builds, so there is no release build to share.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod jail;
mod root;

use crate::{Error, Shown, cargo, is_ci, on_path, project_root, run_inherit, target_dir};
use jail::Jail;
use root::Root;

/// The Dockerfile's `cargo` arguments, before its `--target`.
pub(crate) const BUILD: &[&str] = &[
    "build",
    "--release",
    "--locked",
    "-p",
    "async-worker",
    "--bin",
    "async-worker",
];

/// The image's user and group (distroless `nonroot`).
const UID: &str = "65532";
/// How long one run in the root may take before it counts as hung.
const BOUND: Duration = Duration::from_secs(60);

pub(crate) fn run_cli(args: Vec<String>) -> Result<(), Error> {
    if let Some(arg) = args.first() {
        return Err(Error::Usage(format!(
            "image takes no arguments, got `{arg}`"
        )));
    }
    run()
}

/// Builds the binary, then runs it in an empty root (see the module doc).
pub(crate) fn run() -> Result<(), Error> {
    let triple = host_triple()?;
    let mut build = cargo(BUILD);
    build.args(["--target", &triple]);
    println!("== image: {}", Shown(&build));
    run_inherit(&mut build)?;
    let binary = target_dir()
        .join(&triple)
        .join("release")
        .join("async-worker");

    let Some(jail) = Jail::choose()? else {
        return Ok(());
    };
    let root = Root::lay_out(&binary)?;
    println!("== image: the root {} holds:", root.dir.display());
    for (path, bytes) in &root.files {
        println!("   {path} ({bytes} bytes)");
    }

    for exe in ["/llm-d-async", "/usr/local/bin/async-worker"] {
        let out = jail.output(&root.dir, &[exe, "--help"])?;
        expect(&out, "Usage:", &format!("{exe} --help"))?;
        println!("== image: {exe} --help: exit 0, {} lines", lines(&out));
    }

    #[rustfmt::skip]
    let demo = [
        "/llm-d-async", "demo", "--requests", "300", "--replicas", "2",
        "--kill-after", "0.2", "--claim-lease-ttl", "1s", "--concurrency", "16",
    ];
    let out = jail.output(&root.dir, &demo)?;
    expect(&out, "PASS", "the memory demo")?;
    println!("== image: {}:", demo.join(" "));
    print!("{}", String::from_utf8_lossy(&out.stdout));

    if on_path("redis-server").is_some() {
        processor_against_redis(&jail, &root.dir)?;
    } else if is_ci() {
        return Err(Error::Failed(
            "CI is set but `redis-server` is not on PATH: the image step runs the processor against one (install redis-server)".into(),
        ));
    } else {
        println!(
            "image: skipped the processor run: redis-server not on PATH (set CI to make this a failure)"
        );
    }
    Ok(())
}

/// Run 3: the processor in the root, ready on `/readyz`, exit 0 on SIGTERM.
fn processor_against_redis(jail: &Jail, root: &Path) -> Result<(), Error> {
    let redis = Redis::start()?;
    let (health, metrics) = (free_port()?, free_port()?);
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let (health_flag, metrics_flag) = (health.to_string(), metrics.to_string());
    #[rustfmt::skip]
    let argv = [
        "/llm-d-async", "--redis-url", &url, "--igw-base-url", "http://127.0.0.1:9",
        "--health-port", &health_flag, "--metrics-port", &metrics_flag,
        "--drain-timeout", "5s", "--zap-encoder", "console",
    ];
    let log = std::env::temp_dir().join(format!("xtask-image-{}.log", std::process::id()));
    let file = fs::File::create(&log).map_err(|e| failed(&log, "create", e))?;
    let mut cmd = jail.command(root, &argv);
    cmd.stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|e| failed(&log, "clone", e))?)
        .stderr(file)
        .env("LOG_LEVEL", "info");
    println!(
        "== image: {} (redis-server outside the root)",
        argv.join(" ")
    );
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Failed(format!("could not start `{}`: {e}", Shown(&cmd))))?;
    let verdict = ready_then_term(&mut child, health);
    if verdict.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let text = fs::read_to_string(&log).unwrap_or_default();
    let _ = fs::remove_file(&log);
    match verdict {
        Ok(took) => {
            println!("== image: /readyz 200, then SIGTERM: exit 0 ({took:?} after the signal)");
            Ok(())
        }
        Err(msg) => Err(Error::Failed(format!("{msg}; its log:\n{text}"))),
    }
}

/// Polls `/readyz` until 200, sends SIGTERM, waits for exit code 0.
fn ready_then_term(child: &mut Child, health: u16) -> Result<Duration, String> {
    let start = Instant::now();
    while http_status(health, "/readyz") != Some(200) {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the processor exited ({status}) before it was ready"
            ));
        }
        if start.elapsed() > BOUND {
            return Err(format!("/readyz did not answer 200 within {BOUND:?}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    if !killed.is_ok_and(|s| s.success()) {
        return Err(format!("could not send SIGTERM to {pid}"));
    }
    let signalled = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(signalled.elapsed()),
            Ok(Some(status)) => return Err(format!("SIGTERM ended the processor with {status}")),
            Ok(None) if signalled.elapsed() > BOUND => {
                return Err(format!(
                    "the processor did not exit within {BOUND:?} of SIGTERM"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for the processor: {e}")),
        }
    }
}

/// A private `redis-server` on a free loopback port; stopped on drop.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Result<Redis, Error> {
        let port = free_port()?;
        #[rustfmt::skip]
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::Failed(format!("could not start redis-server: {e}")))?;
        let redis = Redis { child, port };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                return Err(Error::Failed(format!(
                    "redis-server did not listen on 127.0.0.1:{port} within 10 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(redis)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTP status of `GET path` on 127.0.0.1:`port`, if it answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split(' ').nth(1)?.parse().ok()
}

fn free_port() -> Result<u16, Error> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::Failed(format!("no free loopback port: {e}")))
}

/// The host's target triple, from `rustc -vV`.
fn host_triple() -> Result<String, Error> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(&rustc)
        .arg("-vV")
        .current_dir(project_root())
        .output()
        .map_err(|e| Error::Failed(format!("could not run `rustc -vV`: {e}")))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| Error::Failed("`rustc -vV` printed no `host:` line".into()))
}

/// Exit code 0 and `needle` in stdout, else an error naming `what`.
fn expect(out: &Output, needle: &str, what: &str) -> Result<(), Error> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stdout.contains(needle) {
        return Ok(());
    }
    Err(Error::Failed(format!(
        "{what} in the empty root: {} (expected exit 0 and `{needle}`); stdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    )))
}

fn lines(out: &Output) -> usize {
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn failed(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::Failed(format!("{what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dockerfile_builds_with_the_flags_this_step_builds_with() {
        let dockerfile = fs::read_to_string(project_root().join("Dockerfile")).expect("Dockerfile");
        let command = format!("cargo {} --target ", BUILD.join(" "));
        assert_eq!(
            dockerfile.matches("cargo build").count(),
            1,
            "the Dockerfile should run one `cargo build`"
        );
        assert!(
            dockerfile.contains(&command),
            "the Dockerfile's `cargo build` differs from xtask/src/image.rs's BUILD; make them the same: expected `{command}`"
        );
        for needle in [
            "--strip-debug /out/llm-d-async",
            "USER 65532:65532",
            "/llm-d-async",
            "/usr/local/bin/async-worker",
            "TARGETARCH",
        ] {
            assert!(
                dockerfile.contains(needle),
                "the Dockerfile lacks `{needle}`"
            );
        }
    }
}
