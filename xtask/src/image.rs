//! `cargo xtask image` (and the `image` step of `cargo xtask ci`): the container image's binary, built as the Dockerfile builds it and run in an empty root.
//!
//! No container daemon here, so this proves what it can of the image
//! without building it. It builds the release binary with the Dockerfile's
//! cargo command ([`BUILD`]; the Dockerfile's `--target`, there to
//! cross-compile, is left out: on the host's own architecture it would
//! build the same binary again in another directory, where the plain one is
//! the `target/release` build `cargo run --release`, chaos and the demo
//! share), strips its debug info as the Dockerfile does, and lays out a
//! read-only root holding only what the runtime stage adds (`/llm-d-async`,
//! the chart's `command`, and `/usr/local/bin/async-worker`), the shared
//! libraries `ldd` reports and the CA bundle (a subset of the distroless
//! `cc` base). There, with `chroot` as UID 65532 (the image's `USER`) and an
//! empty environment, it runs `--help` by both names, a short memory-store
//! `demo` (must print `PASS`), and the processor against a `redis-server`
//! outside the root (`/readyz` must answer 200 and SIGTERM end it with exit
//! code 0; the Redis demo cannot run there: it stops replicas with the
//! `kill` program, which distroless lacks). Not root, `unshare
//! --map-root-user` makes the chroot possible (as the mapped root); where
//! that fails, or `redis-server` is missing, that part is skipped with a
//! message, unless `CI` is set, which makes it a failure.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::server::Server;
use crate::{Error, cargo, is_ci, on_path, run_inherit, shown, target_dir};

/// The Dockerfile's `cargo` arguments, before its `--target`.
pub(crate) const BUILD: &str = "build --release --locked -p async-worker --bin async-worker";

/// The image's user and group (distroless `nonroot`).
const UID: &str = "65532";
/// How long one run in the root may take before it counts as hung.
const BOUND: Duration = Duration::from_secs(60);
/// Where Debian, and so the distroless base, keeps the CA certificates
/// (the HTTP client does not build without roots).
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Builds the binary, then runs it in an empty root (see the module doc).
pub(crate) fn run() -> Result<(), Error> {
    let mut build = cargo(BUILD);
    println!("== image: {}", shown(&build));
    run_inherit(&mut build)?;
    let Some(jail) = Jail::choose()? else {
        return Ok(());
    };
    let root = Root::lay_out(&target_dir().join("release/async-worker"))?;
    println!("== image: the root {} holds:", root.dir.display());
    for (path, bytes) in &root.files {
        println!("   {path} ({bytes} bytes)");
    }
    for exe in ["/llm-d-async", "/usr/local/bin/async-worker"] {
        let out = jail.output(&root.dir, &[exe, "--help"])?;
        let help = expect(&out, "Usage:", &format!("{exe} --help"))?;
        println!(
            "== image: {exe} --help: exit 0, {} lines",
            help.lines().count()
        );
    }
    #[rustfmt::skip]
    let demo = [
        "/llm-d-async", "demo", "--requests", "300", "--replicas", "2",
        "--kill-after", "0.2", "--claim-lease-ttl", "1s", "--concurrency", "16",
    ];
    let out = jail.output(&root.dir, &demo)?;
    let stdout = expect(&out, "PASS", "the memory demo")?;
    println!("== image: {}:\n{stdout}", demo.join(" "));
    if on_path("redis-server").is_some() {
        return processor_against_redis(&jail, &root.dir);
    }
    let why = "redis-server is not on PATH: the image step runs the processor against one";
    if is_ci() {
        return Err(Error::Failed(format!(
            "CI is set but {why} (install redis-server)"
        )));
    }
    println!("image: skipped the processor run: {why} (set CI to make this a failure)");
    Ok(())
}

/// Run 3: the processor in the root, ready on `/readyz` within [`BOUND`],
/// then exit code 0 within [`BOUND`] of SIGTERM.
fn processor_against_redis(jail: &Jail, root: &Path) -> Result<(), Error> {
    let redis = Server::start(&std::env::temp_dir(), false)?;
    let (health, metrics) = (Server::free_port()?, Server::free_port()?);
    let (url, health_flag, metrics_flag) = (redis.url(), health.to_string(), metrics.to_string());
    #[rustfmt::skip]
    let argv = [
        "/llm-d-async", "--redis-url", &url, "--igw-base-url", "http://127.0.0.1:9",
        "--health-port", &health_flag, "--metrics-port", &metrics_flag,
        "--drain-timeout", "5s", "--zap-encoder", "console",
    ];
    let log = std::env::temp_dir().join(format!("xtask-image-{}.log", std::process::id()));
    let file = fs::File::create(&log).and_then(|f| Ok((f.try_clone()?, f)));
    let (stdout, stderr) = file.map_err(|e| failed(&log, "create", e))?;
    let mut cmd = jail.command(root, &argv);
    cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    let shown = argv.join(" ");
    println!("== image: {shown} (redis-server outside the root)");
    let start = |e| Error::Failed(format!("could not start `{shown}`: {e}"));
    let mut child = cmd.env("LOG_LEVEL", "info").spawn().map_err(start)?;
    let (ready, mut signalled) = (Instant::now(), None);
    let verdict = loop {
        let exited = child
            .try_wait()
            .map_err(|e| format!("waiting for the processor: {e}"));
        let waited = signalled.unwrap_or(ready).elapsed();
        match (exited, signalled) {
            (Err(e), _) => break Err(e),
            (Ok(Some(status)), None) => {
                break Err(format!(
                    "the processor exited ({status}) before it was ready"
                ));
            }
            (Ok(Some(status)), Some(_)) if status.success() => break Ok(waited),
            (Ok(Some(status)), Some(_)) => {
                break Err(format!("SIGTERM ended the processor with {status}"));
            }
            (Ok(None), None) if waited > BOUND => {
                break Err(format!("/readyz did not answer 200 within {BOUND:?}"));
            }
            (Ok(None), Some(_)) if waited > BOUND => {
                break Err(format!(
                    "the processor did not exit within {BOUND:?} of SIGTERM"
                ));
            }
            (Ok(None), None) if http_status(health, "/readyz") == Some(200) => {
                let pid = child.id().to_string();
                if !Command::new("kill")
                    .args(["-TERM", &pid])
                    .status()
                    .is_ok_and(|s| s.success())
                {
                    break Err(format!("could not send SIGTERM to {pid}"));
                }
                signalled = Some(Instant::now());
            }
            (Ok(None), _) => sleep(Duration::from_millis(50)),
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let text = fs::read_to_string(&log).unwrap_or_default();
    let _ = fs::remove_file(&log);
    let took = verdict.map_err(|msg| Error::Failed(format!("{msg}; its log:\n{text}")))?;
    println!("== image: /readyz 200, then SIGTERM: exit 0 ({took:?} after the signal)");
    Ok(())
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

/// How a command enters the root: the program and arguments before the
/// root's path (each program located on `PATH` now, as the command's own
/// environment is cleared).
struct Jail(Vec<PathBuf>);

impl Jail {
    /// As root `chroot --userspec=65532:65532`; else `unshare
    /// --map-root-user chroot` (as the mapped root); else `None` (after
    /// saying why) outside CI.
    fn choose() -> Result<Option<Jail>, Error> {
        let located = |program: &str| on_path(program).unwrap_or_else(|| program.into());
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let uid = status.lines().find_map(|l| l.strip_prefix("Uid:"));
        if uid.and_then(|ids| ids.split_whitespace().nth(1)) == Some("0") {
            let userspec = format!("--userspec={UID}:{UID}").into();
            return Ok(Some(Jail(vec![located("chroot"), userspec])));
        }
        let unshare = ["--map-root-user", "chroot"].map(PathBuf::from);
        let unshare = Jail([located("unshare")].into_iter().chain(unshare).collect());
        let mut probe = unshare.command(Path::new("/"), &["true"]);
        if probe
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            println!(
                "image: not root: entering the root with `unshare --map-root-user` (as the mapped root, not UID {UID})"
            );
            return Ok(Some(unshare));
        }
        let why =
            "not root, and `unshare --map-root-user chroot / true` failed (no user namespaces)";
        if is_ci() {
            return Err(Error::Failed(format!(
                "{why}: the image step cannot run the binary in an empty root; run CI as root"
            )));
        }
        println!(
            "image: skipped the runs in an empty root: {why} (set CI to make this a failure; run as root to try it)"
        );
        Ok(None)
    }

    /// `argv` run in `root` with an empty environment.
    fn command(&self, root: &Path, argv: &[&str]) -> Command {
        let mut cmd = Command::new(&self.0[0]);
        cmd.args(&self.0[1..]).arg(root).args(argv).env_clear();
        cmd
    }

    /// Runs `argv` in `root` to its end under `timeout` ([`BOUND`]),
    /// collecting its output.
    fn output(&self, root: &Path, argv: &[&str]) -> Result<Output, Error> {
        let inner = self.command(root, argv);
        let mut cmd = Command::new(on_path("timeout").unwrap_or_else(|| "timeout".into()));
        cmd.arg(BOUND.as_secs().to_string())
            .arg(inner.get_program())
            .args(inner.get_args());
        let shown = shown(&inner);
        let out = cmd.env_clear().stdin(Stdio::null()).output();
        match out.map_err(|e| Error::Failed(format!("could not start `{shown}`: {e}")))? {
            out if out.status.code() == Some(124) => {
                Err(Error::Failed(format!("`{shown}` ran past {BOUND:?}")))
            }
            out => Ok(out),
        }
    }
}

/// The temporary root; made writable again and removed on drop.
struct Root {
    dir: PathBuf,
    /// Each file's path in the root and its size.
    files: Vec<(String, u64)>,
}

impl Root {
    /// The binary (debug info stripped), its symlink, its libraries and the
    /// CA bundle, all read-only.
    fn lay_out(binary: &Path) -> Result<Root, Error> {
        let dir = std::env::temp_dir().join(format!("xtask-image-root-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut root = Root { dir, files: vec![] };
        let exe = root.copy(binary, "/llm-d-async")?;
        run_inherit(Command::new("strip").arg("--strip-debug").arg(&exe))?;
        let stripped = fs::metadata(&exe).map_err(|e| failed(&exe, "stat", e))?;
        root.files[0].1 = stripped.len();
        let link = root.dir.join("usr/local/bin/async-worker");
        fs::create_dir_all(link.parent().expect("a parent"))
            .map_err(|e| failed(&link, "create", e))?;
        symlink("/llm-d-async", &link).map_err(|e| failed(&link, "symlink", e))?;
        root.files
            .push(("/usr/local/bin/async-worker -> /llm-d-async".into(), 0));
        if !Path::new(CA_BUNDLE).is_file() {
            return Err(Error::Failed(format!(
                "{CA_BUNDLE} is missing: the image ships a CA bundle there and the binary needs one (install ca-certificates)"
            )));
        }
        root.copy(Path::new(CA_BUNDLE), CA_BUNDLE)?;
        for library in libraries(binary)? {
            root.copy(Path::new(&library), &library)?;
        }
        chmod(&root.dir, "555")?;
        Ok(root)
    }

    /// Copies `from` (symlinks followed) to `to` inside the root.
    fn copy(&mut self, from: &Path, to: &str) -> Result<PathBuf, Error> {
        let dest = self.dir.join(to.trim_start_matches('/'));
        fs::create_dir_all(dest.parent().expect("a parent"))
            .map_err(|e| failed(&dest, "create", e))?;
        let bytes = fs::copy(from, &dest).map_err(|e| failed(from, "copy", e))?;
        self.files.push((to.to_owned(), bytes));
        Ok(dest)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = chmod(&self.dir, "755");
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `chmod -R mode dir`: read-only (555) in use, writable (755) to remove.
fn chmod(dir: &Path, mode: &str) -> Result<(), Error> {
    run_inherit(Command::new("chmod").args(["-R", mode]).arg(dir))
}

/// The absolute paths of the shared libraries `ldd` lists for `binary`
/// (none for a static one; the vDSO has no file).
fn libraries(binary: &Path) -> Result<Vec<String>, Error> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(|e| Error::Failed(format!("could not run `ldd` (install libc-bin): {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match out.status.success() {
        true => parse_ldd(&text),
        false if text.contains("not a dynamic executable") => Ok(Vec::new()),
        false => Err(Error::Failed(format!(
            "`ldd {}` failed: {}",
            binary.display(),
            String::from_utf8_lossy(&out.stderr)
        ))),
    }
}

/// `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` and
/// `/lib64/ld-linux-x86-64.so.2 (0x…)` give their paths.
fn parse_ldd(text: &str) -> Result<Vec<String>, Error> {
    let mut paths = Vec::new();
    for line in text.lines().map(str::trim) {
        let path = line.split_once("=>").map_or(line, |(_, rest)| rest.trim());
        let path = path.split(" (").next().unwrap_or_default().trim();
        if path == "not found" {
            let why = format!("ldd cannot find a library the binary needs: `{line}`");
            return Err(Error::Failed(why));
        }
        if path.starts_with('/') {
            paths.push(path.to_owned());
        }
    }
    Ok(paths)
}

/// Exit code 0 and `needle` in stdout (returned), else an error naming `what`.
fn expect(out: &Output, needle: &str, what: &str) -> Result<String, Error> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stdout.contains(needle) {
        return Ok(stdout.into_owned());
    }
    Err(Error::Failed(format!(
        "{what} in the empty root: {} (expected exit 0 and `{needle}`); stdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    )))
}

fn failed(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::Failed(format!("{what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project_root;

    #[test]
    fn the_dockerfile_builds_with_the_flags_this_step_builds_with() {
        let dockerfile = fs::read_to_string(project_root().join("Dockerfile")).expect("Dockerfile");
        let command = format!("cargo {BUILD} --target ");
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

    #[test]
    fn ldd_lines_give_the_library_paths_and_a_missing_one_is_an_error() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f01)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f02)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f03)\n";
        assert_eq!(
            parse_ldd(text).ok(),
            Some(vec![
                "/lib/x86_64-linux-gnu/libgcc_s.so.1".to_owned(),
                "/lib/x86_64-linux-gnu/libc.so.6".to_owned(),
                "/lib64/ld-linux-x86-64.so.2".to_owned(),
            ])
        );
        assert!(matches!(
            parse_ldd("\tlibssl.so.3 => not found\n"),
            Err(Error::Failed(_))
        ));
    }
}
