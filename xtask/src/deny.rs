//! `cargo xtask deny` and the `deny` step of `cargo xtask ci`: cargo-deny's licence, ban and source checks against `deny.toml`, installing a pinned cargo-deny under the target directory when none is found.
//!
//! Which cargo-deny runs: `--cargo-deny PATH`, else one on `PATH`, else
//! the copy under `<target>/tools` (installed there by an earlier run),
//! else [`PINNED`] is installed there first from crates.io. The install is
//! a debug build (`cargo install --debug`): 1 min 46 s on the 2-core VM
//! against 5 min 25 s for a release build, and its check takes ~9 s
//! instead of ~2 s. It lives with the build output, so removing the target
//! removes it, and nothing outside the checkout is installed.
//!
//! In `cargo xtask ci` the install starts in the background, at the lowest
//! CPU priority (`nice -n 19`), when CI starts ([`prefetch`]): it takes the
//! cores the other steps leave idle (the process tests and chaos runs wait
//! on real processes much of the time), and the `deny` step at the end
//! waits for it ([`check`]).
//!
//! Advisories are left out unless asked for (`--advisories`): that check
//! fetches the RustSec database from GitHub, which a build without network
//! beyond the package registries cannot reach.

use crate::{Error, Shown, cargo, ci, project_root, run_inherit, target_dir};
use std::fs::{self, File};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The checks that need nothing beyond the lock file and the registry index.
const CHECKS: [&str; 3] = ["licenses", "bans", "sources"];

/// The cargo-deny release installed when none is found.
const PINNED: &str = "0.20.2";

/// What to run, from the command line.
#[derive(Debug, PartialEq)]
struct Options {
    /// `--cargo-deny PATH`: the binary, instead of the one found or installed.
    program: Option<PathBuf>,
    /// `--advisories`: the RustSec check too (fetches its database).
    advisories: bool,
}

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let options = parse(args)?;
    let program = match options.program {
        Some(path) if path.is_file() => path,
        Some(path) => {
            return Err(Error::Invalid(format!(
                "--cargo-deny {}: no such file; give the path of a cargo-deny binary",
                path.display()
            )));
        }
        None => found_or_installed(Prefetch(None))?,
    };
    run_checks(program, options.advisories)
}

/// A background install of cargo-deny started by [`prefetch`]; dropping it
/// unawaited (a CI step failed first) stops the install.
pub(crate) struct Prefetch(Option<Child>);

impl Drop for Prefetch {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts installing cargo-deny under the target directory, at the lowest
/// CPU priority, unless one is found; its output goes to `install.log`.
pub(crate) fn prefetch() -> Prefetch {
    if found().is_some() {
        return Prefetch(None);
    }
    let started = fs::create_dir_all(tools_root())
        .and_then(|()| File::create(install_log()))
        .and_then(|log| {
            let mut cmd = niced(install_command());
            cmd.stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log);
            cmd.spawn()
        });
    match started {
        Ok(child) => {
            println!(
                "xtask ci: installing cargo-deny {PINNED} in the background (nice 19; {})",
                install_log().display()
            );
            Prefetch(Some(child))
        }
        Err(e) => {
            println!(
                "xtask ci: could not start the cargo-deny install in the background ({e}); the deny step installs it"
            );
            Prefetch(None)
        }
    }
}

/// The `deny` step of `cargo xtask ci`: waits for `prefetch`'s install
/// (or installs now), then runs the checks.
pub(crate) fn check(prefetch: Prefetch) -> Result<(), Error> {
    let program = found_or_installed(prefetch)?;
    run_checks(program, false)
}

fn run_checks(program: PathBuf, advisories: bool) -> Result<(), Error> {
    let mut cmd = Command::new(program);
    cmd.arg("check").args(CHECKS).current_dir(project_root());
    if advisories {
        cmd.arg("advisories");
    }
    println!("--> {}", Shown(&cmd));
    run_inherit(&mut cmd)
}

/// cargo-deny on `PATH`, else the copy under the target directory.
fn found() -> Option<PathBuf> {
    ci::find_on_path("cargo-deny").or_else(|| Some(installed()).filter(|p| p.is_file()))
}

/// [`found`], after the background install if one runs, installing in the
/// foreground when neither gave one.
fn found_or_installed(mut prefetch: Prefetch) -> Result<PathBuf, Error> {
    if let Some(mut child) = prefetch.0.take() {
        println!("--> waiting for the background cargo-deny install");
        match child.wait() {
            Ok(status) if status.success() => {}
            outcome => {
                let log = fs::read_to_string(install_log()).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(20).collect();
                for line in tail.iter().rev() {
                    println!("    {line}");
                }
                println!("--> the background install ended with {outcome:?}: installing again");
            }
        }
    }
    if let Some(program) = found() {
        return Ok(program);
    }
    let mut cmd = install_command();
    println!("--> {}", Shown(&cmd));
    run_inherit(&mut cmd).map_err(|e| match e {
        Error::Failed(msg) => Error::Failed(format!(
            "cargo-deny is not on PATH and installing it failed ({msg}): \
             install it with `cargo install --locked cargo-deny` or pass --cargo-deny PATH"
        )),
        other => other,
    })?;
    Ok(installed())
}

/// `cargo install` of [`PINNED`], debug build, into the target directory.
fn install_command() -> Command {
    let root = tools_root();
    let build = root.join("build");
    let (root, build) = (root.to_string_lossy(), build.to_string_lossy());
    cargo(&[
        "install",
        "--locked",
        "--debug",
        "--quiet",
        "cargo-deny",
        "--version",
        PINNED,
        "--root",
        &root,
        "--target-dir",
        &build,
    ])
}

/// `cmd` under `nice -n 19` where `nice` exists.
fn niced(cmd: Command) -> Command {
    if ci::find_on_path("nice").is_none() {
        return cmd;
    }
    let mut niced = Command::new("nice");
    niced
        .args(["-n", "19"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        niced.current_dir(dir);
    }
    niced
}

fn tools_root() -> PathBuf {
    target_dir().join("tools")
}

fn installed() -> PathBuf {
    tools_root().join("bin").join("cargo-deny")
}

fn install_log() -> PathBuf {
    tools_root().join("install.log")
}

fn parse(args: Vec<String>) -> Result<Options, Error> {
    let mut options = Options {
        program: None,
        advisories: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--advisories" => options.advisories = true,
            "--cargo-deny" => match args.next() {
                Some(path) => options.program = Some(PathBuf::from(path)),
                None => return Err(Error::Usage("--cargo-deny needs a path".to_owned())),
            },
            other => return Err(Error::Usage(format!("deny: unknown option `{other}`"))),
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;
    use std::path::Path;

    #[test]
    fn deny_reads_a_cargo_deny_path_and_the_advisories_switch_and_refuses_anything_else() {
        let options = parse(owned_args(&[
            "--cargo-deny",
            "/x/cargo-deny",
            "--advisories",
        ]));
        assert!(matches!(
            options,
            Ok(Options { program: Some(ref p), advisories: true }) if p == Path::new("/x/cargo-deny")
        ));
        assert!(matches!(
            parse(vec![]),
            Ok(Options {
                program: None,
                advisories: false
            })
        ));
        for bad in [&["--cargo-deny"][..], &["--fast"]] {
            let refused = parse(owned_args(bad));
            assert!(matches!(refused, Err(Error::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_cargo_deny_path_that_is_no_file_is_refused_naming_it() {
        let result = run(owned_args(&["--cargo-deny", "/no/such/cargo-deny"]));
        let Err(Error::Invalid(message)) = result else {
            panic!("refused");
        };
        assert!(message.contains("/no/such/cargo-deny"), "{message}");
    }

    #[test]
    fn the_install_is_a_locked_debug_build_of_the_pinned_release_under_the_target() {
        let cmd = niced(install_command());
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let root = tools_root().to_string_lossy().into_owned();
        for expected in ["install", "--locked", "--debug", PINNED, root.as_str()] {
            assert!(args.iter().any(|a| a == expected), "{expected} in {args:?}");
        }
        assert!(tools_root().starts_with(target_dir()));
        if ci::find_on_path("nice").is_some() {
            assert_eq!(cmd.get_program(), "nice");
            assert_eq!(&args[..2], ["-n", "19"]);
        }
    }
}
