//! `cargo xtask deny` and the `deny` step of `cargo xtask ci`: cargo-deny's licence, ban and source checks against `deny.toml`, installing a pinned cargo-deny under the target directory when none is found.
//!
//! Which cargo-deny runs: `--cargo-deny PATH`, else one on `PATH`, else
//! the copy under `<target>/tools`, installed there first when missing. The
//! install is a debug build (1 min 46 s on the 2-core VM against 5 min 25 s
//! for a release build; its check takes ~9 s instead of ~2 s), and removing
//! the target removes it. In `cargo xtask ci` it runs in the background at
//! `nice -n 19` from the start ([`prefetch`]), on the cores the other steps
//! leave idle, and the `deny` step waits for it. The checks run at
//! `--log-level error`: the duplicate versions `deny.toml` allows (over a
//! thousand lines of warnings) are not printed, a failure's diagnostics
//! are. Advisories (`--advisories`) fetch the RustSec database from
//! GitHub, which a build without network beyond the registries cannot reach.

use crate::{Error, cargo, on_path, project_root, run_inherit, shown, target_dir};
use std::fs::{self, File};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The cargo-deny release installed when none is found.
const PINNED: &str = "0.20.2";

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let (program, advisories) = parse(args)?;
    let program = match program {
        Some(path) if path.is_file() => path,
        Some(path) => {
            return Err(Error::Invalid(format!(
                "--cargo-deny {}: no such file; give the path of a cargo-deny binary",
                path.display()
            )));
        }
        None => found_or_installed(Prefetch(None))?,
    };
    run_checks(program, advisories)
}

/// The `deny` step of `cargo xtask ci`: waits for [`prefetch`]'s install
/// (or installs now), then runs the checks.
pub(crate) fn check(prefetch: Prefetch) -> Result<(), Error> {
    run_checks(found_or_installed(prefetch)?, false)
}

/// A background install started by [`prefetch`]; dropped unawaited (a CI
/// step failed first), it is stopped.
pub(crate) struct Prefetch(Option<Child>);

impl Drop for Prefetch {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts the install under `nice -n 19` unless cargo-deny is found; its
/// output goes to `<target>/tools/install.log`.
pub(crate) fn prefetch() -> Prefetch {
    if found().is_some() {
        return Prefetch(None);
    }
    let log = tools().join("install.log");
    let mut cmd = install(true);
    let started = fs::create_dir_all(tools())
        .and_then(|()| File::create(&log))
        .and_then(|file| cmd.stdout(file.try_clone()?).stderr(file).spawn());
    match started {
        Ok(child) => {
            let log = log.display();
            println!("xtask ci: installing cargo-deny {PINNED} in the background (nice 19; {log})");
            Prefetch(Some(child))
        }
        Err(e) => {
            println!("xtask ci: no background cargo-deny install ({e}); the deny step installs it");
            Prefetch(None)
        }
    }
}

fn run_checks(program: PathBuf, advisories: bool) -> Result<(), Error> {
    let mut cmd = Command::new(program);
    cmd.args("--log-level error check licenses bans sources".split(' '));
    cmd.args(advisories.then_some("advisories"))
        .current_dir(project_root());
    println!("--> {}", shown(&cmd));
    run_inherit(&mut cmd)?;
    println!("deny: ok (`cargo deny check bans` lists the duplicate versions it allows)");
    Ok(())
}

/// cargo-deny on `PATH`, else the copy under the target directory.
fn found() -> Option<PathBuf> {
    let installed = tools().join("bin/cargo-deny");
    on_path("cargo-deny").or_else(|| installed.is_file().then_some(installed))
}

/// [`found`] once the background install (if any) ended, else installed
/// in the foreground (where its errors show).
fn found_or_installed(mut prefetch: Prefetch) -> Result<PathBuf, Error> {
    if let Some(mut child) = prefetch.0.take() {
        println!("--> waiting for the background cargo-deny install");
        let _ = child.wait();
    }
    if let Some(program) = found() {
        return Ok(program);
    }
    let mut cmd = install(false);
    println!("--> {}", shown(&cmd));
    let installed = run_inherit(&mut cmd).ok().and_then(|()| found());
    installed.ok_or_else(|| {
        Error::Failed(
            "cargo-deny is not on PATH and installing it failed: install it with \
             `cargo install --locked cargo-deny` or pass --cargo-deny PATH"
                .into(),
        )
    })
}

/// `cargo install` of [`PINNED`], a locked debug build, into the target
/// directory; in the `background` under `nice -n 19`.
fn install(background: bool) -> Command {
    let (root, build) = (tools(), tools().join("build"));
    let mut cmd = cargo("install --locked --debug --quiet cargo-deny");
    cmd.args(["--version", PINNED, "--root"]).arg(root);
    cmd.arg("--target-dir").arg(build);
    if !background {
        return cmd;
    }
    let mut niced = Command::new("nice");
    niced
        .args(["-n", "19"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    niced.current_dir(project_root()).stdin(Stdio::null());
    niced
}

fn tools() -> PathBuf {
    target_dir().join("tools")
}

/// `--cargo-deny PATH` and `--advisories`.
fn parse(args: Vec<String>) -> Result<(Option<PathBuf>, bool), Error> {
    let (mut program, mut advisories) = (None, false);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--advisories" => advisories = true,
            "--cargo-deny" => match args.next() {
                Some(path) => program = Some(PathBuf::from(path)),
                None => return Err(Error::Usage("--cargo-deny needs a path".to_owned())),
            },
            other => return Err(Error::Usage(format!("deny: unknown option `{other}`"))),
        }
    }
    Ok((program, advisories))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    #[test]
    fn deny_reads_a_cargo_deny_path_and_the_advisories_switch_and_refuses_anything_else() {
        let options = parse(owned_args("--cargo-deny /x/cargo-deny --advisories"));
        assert!(matches!(options, Ok((Some(p), true)) if p.as_os_str() == "/x/cargo-deny"));
        assert!(matches!(parse(vec![]), Ok((None, false))));
        for bad in ["--cargo-deny", "--fast"] {
            let refused = parse(owned_args(bad));
            assert!(matches!(refused, Err(Error::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_cargo_deny_path_that_is_no_file_is_refused_naming_it() {
        let result = run(owned_args("--cargo-deny /no/such/cargo-deny"));
        assert!(matches!(result, Err(Error::Invalid(m)) if m.contains("/no/such/cargo-deny")));
    }

    #[test]
    fn the_install_is_a_locked_debug_build_of_the_pinned_release_under_the_target() {
        let cmd = install(true);
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into()).collect();
        let root = tools().to_string_lossy().into_owned();
        for expected in ["install", "--locked", "--debug", PINNED, root.as_str()] {
            assert!(args.iter().any(|a| a == expected), "{expected} in {args:?}");
        }
        assert!(tools().starts_with(target_dir()));
        assert_eq!(cmd.get_program(), "nice");
        assert_eq!(&args[..2], ["-n", "19"]);
    }
}
