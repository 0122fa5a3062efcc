//! How the image step enters its empty root: `chroot` as UID 65532 when root, `unshare --map-root-user` otherwise, or a skip (a failure with `CI` set).

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use super::{BOUND, UID};
use crate::{Error, Shown, is_ci};

/// How a command enters the root.
pub(super) enum Jail {
    /// Root: `chroot --userspec=65532:65532`.
    Chroot,
    /// Not root: `unshare --map-root-user chroot` (as the mapped root).
    Unshare,
}

impl Jail {
    /// The way in, or `None` (after saying why) when there is none outside CI.
    pub(super) fn choose() -> Result<Option<Jail>, Error> {
        if effective_uid() == Some(0) {
            return Ok(Some(Jail::Chroot));
        }
        let probe = Command::new("unshare")
            .args(["--map-root-user", "chroot", "/", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if probe.is_ok_and(|s| s.success()) {
            println!(
                "image: not root: entering the root with `unshare --map-root-user` (as the mapped root, not UID {UID})"
            );
            return Ok(Some(Jail::Unshare));
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
    pub(super) fn command(&self, root: &Path, argv: &[&str]) -> Command {
        let userspec = format!("--userspec={UID}:{UID}");
        let mut cmd = match self {
            Jail::Chroot => {
                let mut cmd = Command::new(located("chroot"));
                cmd.arg(userspec);
                cmd
            }
            Jail::Unshare => {
                let mut cmd = Command::new(located("unshare"));
                cmd.args(["--map-root-user", "chroot"]);
                cmd
            }
        };
        cmd.arg(root).args(argv).env_clear();
        cmd
    }

    /// Runs `argv` in `root` to its end (bounded), collecting its output.
    pub(super) fn output(&self, root: &Path, argv: &[&str]) -> Result<Output, Error> {
        let mut cmd = self.command(root, argv);
        let shown = Shown(&cmd).to_string();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Failed(format!("could not start `{shown}`: {e}")))?;
        let start = Instant::now();
        while child.try_wait().ok().flatten().is_none() {
            if start.elapsed() > BOUND {
                let _ = child.kill();
                return Err(Error::Failed(format!("`{shown}` ran past {BOUND:?}")));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        child
            .wait_with_output()
            .map_err(|e| Error::Failed(format!("`{shown}`: {e}")))
    }
}

/// `program`'s path in a `PATH` directory (the command's environment is
/// cleared, so it cannot be looked up there), else the bare name.
fn located(program: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|file| file.is_file())
        .unwrap_or_else(|| program.into())
}

/// The effective UID, from `/proc/self/status`.
fn effective_uid() -> Option<u32> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}
