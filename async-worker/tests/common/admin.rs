//! Runs `async-worker admin …` as an operator does (the real binary, connecting with `--redis-url`) and reads what it printed.

use super::worker::BINARY;
use std::process::{Command, Output};

/// What one admin command did.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Its stdout as JSON (after `--json`); fails naming the output otherwise.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, 0, "admin failed: {}", self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("admin printed no JSON ({e}): {}", self.stdout))
    }

    /// Asserts exit 0 and returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "admin failed: {}{}", self.stdout, self.stderr);
        &self.stdout
    }
}

/// `async-worker admin --redis-url <url> <args>`, waited for (an admin
/// command ends on its own; Redis answers or refuses at once).
pub fn admin(redis_url: &str, args: &[&str]) -> Ran {
    let output: Output = Command::new(BINARY)
        .arg("admin")
        .args(["--redis-url", redis_url])
        .args(args)
        .env_remove("REDIS_URL")
        .env_remove("RUST_LOG")
        .output()
        .expect("run async-worker admin");
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
