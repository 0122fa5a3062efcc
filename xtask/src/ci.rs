//! `cargo xtask ci`: the whole check a change must pass, in order, stopping
//! at the first failing step.
//!
//! Steps: fmt check, clippy (`-D warnings`, on all targets and then on the
//! conformance targets, which `--all-targets` leaves out), the library's
//! feature matrix (`cargo check -p async-worker` with no default features,
//! then with each feature alone: [`LIBRARY_FEATURES`]; clippy's all-targets
//! build covers the default set), every test but the conformance suite, the
//! conformance suite on every store and layout through `cargo xtask
//! conformance` (per-store summary lines), the usage examples build
//! (`async-worker/examples`), the harness build (`xtask/harness`: the
//! `bench` and `chaos` binaries), the image step (`cargo xtask image`: the
//! Dockerfile's release build run in an empty root, [`crate::image`]), then
//! the short chaos run (`cargo xtask chaos --short`) and the same short run on a Redis Cluster with a primary
//! killed mid-run ([`CLUSTER_CHAOS`]; both skipped without `redis-server`
//! unless `CI` is set), and last cargo-deny's licence, ban and source
//! checks ([`crate::deny`]; its install, when none is found, runs in the
//! background from the start at the lowest CPU priority). `CI` is passed
//! through (tests that need `redis-server` fail instead of skipping when it
//! is set); `PROPTEST_CASES` is removed so tests choose their own case counts.
//!
//! Nothing runs twice: the conformance targets (`tests/conformance*.rs` of
//! claim-memory and claim-redis) are `harness = false` and `test = false`
//! in their crates' manifests, so `cargo test --workspace` neither builds
//! nor runs them, while `cargo test -p claim-memory --test conformance`
//! (an explicit target) still does, for developers. The `conformance` step
//! builds them with `cargo test --workspace --no-run` (the workspace's
//! features, so the test step's artifacts are reused) and runs each
//! store's binary once. Clippy's `--all-targets` skips `test = false`
//! targets, hence its second command with `--test 'conformance*'`.

use std::{
    env,
    path::{Path, PathBuf},
    time::Instant,
};

use crate::{Error, Shown, cargo, chaos, conformance, deny, elapsed, image, run_inherit};

/// One step: a name for messages and what to run.
enum Step {
    /// Cargo commands, run in order.
    Cargo(&'static str, &'static [&'static [&'static str]]),
    /// `cargo check` of a package without its default features, then with
    /// each of the listed features alone, stopping at the first failure.
    Features(&'static str, &'static str, &'static [&'static str]),
    /// `cargo xtask conformance` over every store, `--locked`.
    Conformance(&'static str),
    /// A chaos run: a name, and the flags of `cargo xtask chaos`.
    Chaos(&'static str, &'static [&'static str]),
    /// `cargo xtask image`: the image's binary run in an empty root.
    Image(&'static str),
    /// `cargo xtask deny`'s checks, with the cargo-deny [`crate::deny::prefetch`] installs.
    Deny(&'static str),
}

/// The cluster chaos step's flags: the short size (2 workers, 1,500
/// requests, one worker kill, the primary kill) takes well under a minute,
/// so CI stays under 15 minutes. Fewer requests would leave the worker
/// kill no room clear of the failover's window, and the plan drops it.
const CLUSTER_CHAOS: &[&str] = &["--short", "--topology", "cluster"];

/// The `features` step: `cargo check -p async-worker --no-default-features`
/// (the library a user gets with `default-features = false`, as the README
/// promises), then the same with each of these features alone. A check
/// reuses the build of the clippy step before it.
const LIBRARY_FEATURES: &[&str] = &[
    "cli",
    "memory",
    "redis",
    "http-handler",
    "metric-gates",
    "serve",
    "test-support",
    "otel",
];

const STEPS: [Step; 11] = [
    Step::Cargo("fmt", &[&["fmt", "--all", "--", "--check"]]),
    Step::Cargo(
        "clippy",
        &[
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
            &[
                "clippy",
                "--workspace",
                "--test",
                "conformance*",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
        ],
    ),
    Step::Features("features", "async-worker", LIBRARY_FEATURES),
    Step::Cargo("test", &[&["test", "--workspace", "--locked"]]),
    Step::Conformance("conformance"),
    Step::Cargo(
        "examples",
        &[&["build", "--workspace", "--examples", "--locked"]],
    ),
    Step::Cargo(
        "harness",
        &[&["build", "-p", "harness", "--bins", "--locked"]],
    ),
    Step::Image("image"),
    Step::Chaos("chaos", &["--short"]),
    Step::Chaos("chaos-cluster", CLUSTER_CHAOS),
    Step::Deny("deny"),
];

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    if let Some(arg) = args.first() {
        return Err(Error::Usage(format!("ci takes no arguments, got `{arg}`")));
    }
    let in_ci = is_ci();
    if in_ci && !on_path("redis-server") {
        return Err(Error::Failed(
            "CI is set but `redis-server` is not on PATH: the Redis tests need it \
             (install redis-server, or unset CI to let them skip locally)"
                .into(),
        ));
    }
    if in_ci {
        println!("xtask ci: CI is set: tests that need redis-server fail without it");
    } else {
        println!("xtask ci: CI is not set: tests that need redis-server skip without it");
    }

    let start = Instant::now();
    let mut prefetch = Some(deny::prefetch());
    let mut timings = Vec::new();
    for (i, step) in STEPS.iter().enumerate() {
        let step_start = Instant::now();
        let (name, result) = match step {
            Step::Cargo(name, commands) => {
                let mut result = Ok(());
                for args in commands.iter() {
                    let mut cmd = cargo(args);
                    cmd.env_remove("PROPTEST_CASES");
                    println!("\n==> [{}/{}] {name}: {}", i + 1, STEPS.len(), Shown(&cmd));
                    result = run_inherit(&mut cmd);
                    if result.is_err() {
                        break;
                    }
                }
                (*name, result)
            }
            Step::Conformance(name) => {
                println!(
                    "\n==> [{}/{}] {name}: cargo xtask conformance",
                    i + 1,
                    STEPS.len()
                );
                let stores = conformance::existing();
                (*name, conformance::run(&stores, &["--locked"], &[]))
            }
            Step::Features(name, package, features) => {
                println!(
                    "\n==> [{}/{}] {name}: cargo check -p {package} --no-default-features, then with each of {}",
                    i + 1,
                    STEPS.len(),
                    features.join(", ")
                );
                (*name, check_features(package, features))
            }
            Step::Image(name) => {
                println!(
                    "\n==> [{}/{}] {name}: cargo xtask image",
                    i + 1,
                    STEPS.len()
                );
                (*name, image::run())
            }
            Step::Deny(name) => {
                println!("\n==> [{}/{}] {name}: cargo xtask deny", i + 1, STEPS.len());
                let prefetch = prefetch.take().expect("one deny step");
                (*name, deny::check(prefetch))
            }
            Step::Chaos(name, flags) => {
                println!(
                    "\n==> [{}/{}] {name}: cargo xtask chaos {}",
                    i + 1,
                    STEPS.len(),
                    flags.join(" ")
                );
                // With CI set a missing redis-server already failed above.
                let result = if on_path("redis-server") {
                    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
                    chaos::run(&flags, &["--locked"], chaos::Profile::Dev)
                } else {
                    println!("skipped: redis-server not on PATH (set CI to make this a failure)");
                    Ok(())
                };
                (*name, result)
            }
        };
        let took = elapsed(step_start.elapsed());
        match result {
            Ok(()) => {
                println!("<== {name} ok ({took})");
                timings.push(format!("{name} {took}"));
            }
            Err(Error::Failed(msg) | Error::Usage(msg) | Error::Invalid(msg)) => {
                return Err(Error::Failed(format!(
                    "ci step `{name}` failed after {took}: {msg}"
                )));
            }
        }
    }
    println!(
        "\nxtask ci: all {} steps passed in {} ({})",
        STEPS.len(),
        elapsed(start.elapsed()),
        timings.join(", ")
    );
    Ok(())
}

/// `cargo check -p package --no-default-features`, then with each feature
/// alone; the first failure names its feature set.
fn check_features(package: &str, features: &[&str]) -> Result<(), Error> {
    let base = ["check", "-p", package, "--locked", "--no-default-features"];
    let sets = std::iter::once(None).chain(features.iter().copied().map(Some));
    for feature in sets {
        let mut args = base.to_vec();
        if let Some(feature) = feature {
            args.extend(["--features", feature]);
        }
        let mut cmd = cargo(&args);
        println!("--> {}", Shown(&cmd));
        if let Err(Error::Failed(msg) | Error::Usage(msg) | Error::Invalid(msg)) =
            run_inherit(&mut cmd)
        {
            let set = feature.map_or("no default features".to_owned(), |f| format!("only `{f}`"));
            return Err(Error::Failed(format!("{package} with {set}: {msg}")));
        }
    }
    Ok(())
}

/// `CI` set to anything but empty, `0` or `false` (any case).
pub(crate) fn is_ci() -> bool {
    env::var("CI").is_ok_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// Whether an executable file named `program` is in a `PATH` directory.
pub(crate) fn on_path(program: &str) -> bool {
    find_on_path(program).is_some()
}

/// The first executable file named `program` in the `PATH` directories.
pub(crate) fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(file: &Path) -> bool {
    file.is_file() || file.with_extension("exe").is_file()
}
