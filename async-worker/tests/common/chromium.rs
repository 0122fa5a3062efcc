//! Headless Chromium for the page tests: find Debian's `chromium`, load a URL and return its DOM after the page ran (`--dump-dom`), or save a screenshot; every run bounded.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Chromium run may take (a cold start on a loaded 2-core machine included).
pub const BOUND: Duration = Duration::from_secs(90);

/// Chromium, or `None` (after saying why) locally; with `CI` set a missing
/// one fails the test (Debian package `chromium`; `.ci/run` installs it).
pub fn find_or_skip() -> Option<PathBuf> {
    let found =
        claim_redis::testing::require_program(&["chromium", "chromium-browser"], "chromium");
    if found.is_none() {
        eprintln!("skipped: chromium not on PATH (set CI to make this a failure)");
    }
    found
}

/// A headless run with a profile of its own under `scratch`; `--no-sandbox`
/// because CI runs as root.
fn headless(chromium: &Path, scratch: &Path) -> Command {
    let mut command = Command::new(chromium);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1280,900",
    ]);
    command.arg(format!(
        "--user-data-dir={}",
        scratch.join("profile").display()
    ));
    command
}

/// Runs `command`, polling until it exits; kills it and fails after [`BOUND`].
/// Returns stdout; fails with stderr when it exits unsuccessfully.
fn run_bounded(mut command: Command, what: &str, scratch: &Path) -> String {
    std::fs::create_dir_all(scratch).expect("create the chromium scratch dir");
    let out_path = scratch.join("stdout");
    let err_path = scratch.join("stderr");
    let out = std::fs::File::create(&out_path).expect("chromium stdout file");
    let err = std::fs::File::create(&err_path).expect("chromium stderr file");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait chromium") {
            break status;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium ({what}) did not finish within {BOUND:?}; stderr:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(
        status.success(),
        "chromium ({what}) failed: {status}\n{stderr}"
    );
    std::fs::read_to_string(&out_path).expect("read chromium's stdout")
}

/// The DOM of `url` once loaded, as Chromium serializes it.
pub fn dump_dom(chromium: &Path, url: &str, scratch: &Path) -> String {
    let mut command = headless(chromium, scratch);
    command.arg("--dump-dom").arg(url);
    run_bounded(command, "dump-dom", scratch)
}

/// Saves a PNG screenshot of `url` at `png`.
pub fn screenshot(chromium: &Path, url: &str, png: &Path, scratch: &Path) {
    let mut command = headless(chromium, scratch);
    command
        .arg(format!("--screenshot={}", png.display()))
        .arg(url);
    run_bounded(command, "screenshot", scratch);
    let bytes = std::fs::read(png).expect("chromium wrote the screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 1000,
        "not a PNG screenshot: {} bytes",
        bytes.len()
    );
}
