//! `cargo xtask`: repository automation, one module per subcommand.
//!
//! Dependency-free on purpose (std only). Run `cargo xtask help` for usage.

mod bench;
mod chaos;
mod ci;
mod conformance;
mod demo;
mod deny;
mod image;
mod server;
#[cfg(test)]
mod tidy;

use std::{
    env,
    ffi::OsString,
    path::{Path, PathBuf},
    process::{Command, ExitCode},
    time::Duration,
};

const USAGE: &str = "\
usage: cargo xtask <subcommand> [options]

subcommands:
  ci                                   everything CI checks: fmt, clippy, the library's feature matrix,
                                       tests, conformance, examples, harness, image, short chaos (one server, cluster), deny
  conformance [--store memory|redis|redis-tagged|redis-cluster|all] [-- <test args>]
                                       run the ClaimStore conformance suite (default: all)
  bench [--runs a,b] [--requests N] [--repeat N] [--program P] …
                                       throughput, Redis and worker CPU, RSS per run on private
                                       redis-servers (runs: protected, memory, protected-cluster, flow, …;
                                       --program: another build's bench, interleaved)
  chaos [--workers N] [--requests M] [--seed S] [--short] [--topology standalone|cluster|sentinel] [--kill …]
                                       SIGKILLed workers, a Redis restart, a cut link, a killed primary on real processes
  demo [--redis URL] [--requests N] …  the run command: replicas, a stand-in gateway, one replica hard-stopped
  deny [--cargo-deny PATH] [--advisories]
                                       cargo-deny's licence, ban and source checks (deny.toml);
                                       --advisories adds RustSec's (fetched from GitHub)
  image                                the container image's binary (the Dockerfile's release build) run in an
                                       empty root as UID 65532: --help, a short demo, ready against Redis, SIGTERM
  help                                 print this message";

/// Why a subcommand stopped.
pub(crate) enum Error {
    /// The command line was wrong: exit 2, with the usage text.
    Usage(String),
    /// The command line asked for something that does not exist (yet): exit 2.
    Invalid(String),
    /// A step ran and failed: exit 1.
    Failed(String),
}

fn main() -> ExitCode {
    let mut args = env::args().skip(1);
    let result = match args.next().as_deref() {
        Some(cmd @ ("ci" | "image")) if args.len() > 0 => Err(Error::Usage(format!(
            "{cmd} takes no arguments, got `{}`",
            args.next().unwrap_or_default()
        ))),
        Some("ci") => ci::run(),
        Some("conformance") => conformance::run_cli(args.collect()),
        Some("bench") => bench::run(args.collect()),
        Some("chaos") => chaos::run_cli(args.collect()),
        Some("demo") => demo::run(args.collect()),
        Some("deny") => deny::run(args.collect()),
        Some("image") => image::run(),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(Error::Usage(format!("unknown subcommand `{other}`"))),
        None => Err(Error::Usage("no subcommand given".to_owned())),
    };
    let (msg, code) = match result {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Error::Usage(msg)) => (format!("{msg}\n\n{USAGE}"), 2),
        Err(Error::Invalid(msg)) => (msg, 2),
        Err(Error::Failed(msg)) => (msg, 1),
    };
    eprintln!("xtask: error: {msg}");
    ExitCode::from(code)
}

impl Error {
    /// What went wrong, whatever the kind.
    pub(crate) fn message(self) -> String {
        match self {
            Error::Usage(msg) | Error::Invalid(msg) | Error::Failed(msg) => msg,
        }
    }
}

/// The workspace root (the parent of this crate's directory).
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Where cargo builds (`CARGO_TARGET_DIR`, else the workspace's `target`).
pub(crate) fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => project_root().join(dir),
        None => project_root().join("target"),
    }
}

/// A `cargo` command run from the workspace root, with the cargo that runs
/// us; `args` split at spaces.
pub(crate) fn cargo(args: &str) -> Command {
    let program = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(program);
    cmd.args(args.split_whitespace())
        .current_dir(project_root());
    cmd
}

/// A command as `cargo fmt --all -- --check` (program by file name).
pub(crate) fn shown(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program());
    let name = program.file_name().unwrap_or(program.as_os_str());
    let words = std::iter::once(name).chain(cmd.get_args());
    words
        .map(|w| w.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `cmd` with inherited stdio; a spawn failure or non-zero exit is an error.
pub(crate) fn run_inherit(cmd: &mut Command) -> Result<(), Error> {
    let status = cmd.status();
    let status =
        status.map_err(|e| Error::Failed(format!("could not start `{}`: {e}", shown(cmd))))?;
    match status.success() {
        true => Ok(()),
        false => Err(Error::Failed(format!("`{}` failed ({status})", shown(cmd)))),
    }
}

/// `CI` set to anything but empty, `0` or `false` (any case).
pub(crate) fn is_ci() -> bool {
    env::var("CI").is_ok_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// The first file named `program` in a `PATH` directory.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|file| file.is_file())
}

/// `1.2s`, `2m03s`.
pub(crate) fn elapsed(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

/// A command line's words (split at spaces) as the owned strings the
/// subcommands' parsers take.
#[cfg(test)]
pub(crate) fn owned_args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}
