//! `cargo xtask ci`: the whole check a change must pass, the [`STEPS`] in order, stopping at the first failing one.
//!
//! The chaos steps skip without `redis-server` unless `CI` is set. `CI` is
//! passed through (tests that need `redis-server` fail instead of skipping
//! when it is set); `PROPTEST_CASES` is removed so tests choose their own
//! case counts.
//!
//! Nothing runs twice: the conformance targets (`tests/conformance*.rs` of
//! claim-memory and claim-redis) are `harness = false` and `test = false`,
//! so `cargo test --workspace` neither builds nor runs them; the
//! `conformance` step runs each store's once ([`crate::conformance`], with
//! the workspace's features, so the test step's artifacts are reused).

use std::time::Instant;

use crate::{
    Error, cargo, chaos, conformance, deny, elapsed, image, is_ci, on_path, run_inherit, shown,
};

/// What one step runs.
enum Step {
    /// Cargo commands, run in order.
    Cargo(&'static [&'static str]),
    /// `cargo check` of a package without its default features, then with
    /// each of the listed features alone, stopping at the first failure.
    Features(&'static str, &'static str),
    /// `cargo xtask conformance` over every store, `--locked`.
    Conformance,
    /// A chaos run: the flags of `cargo xtask chaos`.
    Chaos(&'static str),
    /// `cargo xtask image`: the image's binary run in an empty root.
    Image,
    /// `cargo xtask deny`'s checks.
    Deny,
}

/// The cluster chaos step's flags: the short size (2 workers, 1,500
/// requests, one worker kill, the primary kill) takes well under a minute,
/// so CI stays under 15 minutes. Fewer requests would leave the worker
/// kill no room clear of the failover's window, and the plan drops it.
const CLUSTER_CHAOS: &str = "--short --topology cluster";

/// The `features` step: `cargo check -p async-worker --no-default-features`
/// (the library a user gets with `default-features = false`, as the README
/// promises), then the same with each of these features alone. A check
/// reuses the build of the clippy step before it.
const LIBRARY_FEATURES: &str = "cli memory redis http-handler metric-gates serve test-support otel";

/// Clippy's `--all-targets` leaves out the `test = false` conformance
/// targets: a second command takes them.
const CLIPPY: &[&str] = &[
    "clippy --workspace --all-targets --locked -- -D warnings",
    "clippy --workspace --test conformance* --locked -- -D warnings",
];

const STEPS: [(&str, Step); 11] = [
    ("fmt", Step::Cargo(&["fmt --all -- --check"])),
    ("clippy", Step::Cargo(CLIPPY)),
    ("features", Step::Features("async-worker", LIBRARY_FEATURES)),
    ("test", Step::Cargo(&["test --workspace --locked"])),
    ("conformance", Step::Conformance),
    (
        "examples",
        Step::Cargo(&["build --workspace --examples --locked"]),
    ),
    (
        "harness",
        Step::Cargo(&["build -p harness --bins --locked"]),
    ),
    ("image", Step::Image),
    ("chaos", Step::Chaos("--short")),
    ("chaos-cluster", Step::Chaos(CLUSTER_CHAOS)),
    ("deny", Step::Deny),
];

pub(crate) fn run() -> Result<(), Error> {
    let redis = on_path("redis-server").is_some();
    if is_ci() && !redis {
        return Err(Error::Failed(
            "CI is set but `redis-server` is not on PATH: the Redis tests need it \
             (install redis-server, or unset CI to let them skip locally)"
                .into(),
        ));
    }
    let (ci, tests) = if is_ci() {
        ("set", "fail")
    } else {
        ("not set", "skip")
    };
    println!("xtask ci: CI is {ci}: tests that need redis-server {tests} without it");

    let start = Instant::now();
    let mut timings = Vec::new();
    for (i, (name, step)) in STEPS.iter().enumerate() {
        let step_start = Instant::now();
        println!("\n==> [{}/{}] {name}: {}", i + 1, STEPS.len(), step.shown());
        let result = match step {
            Step::Cargo(commands) => commands.iter().try_for_each(|args| {
                let mut cmd = cargo(args);
                cmd.env_remove("PROPTEST_CASES");
                println!("--> {}", shown(&cmd));
                run_inherit(&mut cmd)
            }),
            Step::Features(package, features) => check_features(package, features),
            Step::Conformance => conformance::run(&conformance::STORES, &["--locked"], &[]),
            Step::Image => image::run(),
            Step::Deny => deny::check(),
            // With CI set a missing redis-server already failed above.
            Step::Chaos(_) if !redis => {
                println!("skipped: redis-server not on PATH (set CI to make this a failure)");
                Ok(())
            }
            Step::Chaos(flags) => {
                let flags: Vec<String> = flags.split(' ').map(str::to_owned).collect();
                chaos::run(&flags, &["--locked"], chaos::Profile::Dev)
            }
        };
        let took = elapsed(step_start.elapsed());
        if let Err(e) = result {
            let msg = e.message();
            return Err(Error::Failed(format!(
                "ci step `{name}` failed after {took}: {msg}"
            )));
        }
        println!("<== {name} ok ({took})");
        timings.push(format!("{name} {took}"));
    }
    println!(
        "\nxtask ci: all {} steps passed in {} ({})",
        STEPS.len(),
        elapsed(start.elapsed()),
        timings.join(", ")
    );
    Ok(())
}

impl Step {
    /// What the step runs, for its header line.
    fn shown(&self) -> String {
        match self {
            Step::Cargo(commands) => {
                let commands: Vec<String> = commands.iter().map(|c| format!("cargo {c}")).collect();
                commands.join(", then ")
            }
            Step::Features(package, features) => format!(
                "cargo check -p {package} --no-default-features, then with each of {}",
                features.replace(' ', ", ")
            ),
            Step::Conformance => "cargo xtask conformance".into(),
            Step::Image => "cargo xtask image".into(),
            Step::Deny => "cargo xtask deny".into(),
            Step::Chaos(flags) => format!("cargo xtask chaos {flags}"),
        }
    }
}

/// `cargo check -p package --no-default-features`, then with each feature
/// alone; the first failure names its feature set.
fn check_features(package: &str, features: &str) -> Result<(), Error> {
    let sets = std::iter::once(None).chain(features.split(' ').map(Some));
    for feature in sets {
        let only = feature
            .map(|f| format!("--features {f}"))
            .unwrap_or_default();
        let mut cmd = cargo(&format!(
            "check -p {package} --locked --no-default-features {only}"
        ));
        println!("--> {}", shown(&cmd));
        if let Err(e) = run_inherit(&mut cmd) {
            let msg = e.message();
            let set = feature.map_or("no default features".to_owned(), |f| format!("only `{f}`"));
            return Err(Error::Failed(format!("{package} with {set}: {msg}")));
        }
    }
    Ok(())
}
