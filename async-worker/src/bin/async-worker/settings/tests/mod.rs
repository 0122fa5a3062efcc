//! The settings tests (flags, bounds, Go config, Go flags) and their helpers: parse an argv as the binary does, resolve it, and read notes and errors.

#![allow(dead_code)]

use crate::cli::{Cli, Command};
use crate::settings::{ProcessorSettings, SettingsError};

mod bounds;
mod chart;
mod chart_flow;
mod commands;
mod docs;
mod flags;
mod flow;
mod go_config;
mod go_flags;
mod log_level;
mod refusals;

pub use chart::CHART_SINGLE_QUEUE;

pub const REDIS: &str = "redis://10.0.0.1:6380";
pub const GATEWAY: &str = "http://gateway:8000";

/// One queue, enough for a transport config to resolve.
pub const QUEUE: &str = r#"{"queue_name":"q","igw_base_url":"http://gw"}"#;

/// Parses `args` the way the binary does; `redis_url_env` stands in for
/// `REDIS_URL` (the test's own environment is never read).
pub fn cli(args: &[&str], redis_url_env: Option<&'static str>) -> Result<Cli, clap::Error> {
    let argv = std::iter::once("async-worker").chain(args.iter().copied());
    Cli::try_parse_argv(argv, |command| {
        command.mut_arg("redis_url", |a| {
            let a = a.env("ASYNC_WORKER_TEST_NO_SUCH_VAR");
            match redis_url_env {
                Some(url) => a.default_value(url),
                None => a,
            }
        })
    })
}

/// Resolves `args` with `REDIS_URL` set to `redis_url_env`.
pub fn resolve_env(
    args: &[&str],
    redis_url_env: Option<&'static str>,
) -> Result<ProcessorSettings, SettingsError> {
    match cli(args, redis_url_env)
        .expect("the command line parses")
        .into_command()
    {
        Command::Run(run) => run.resolve(),
        other => panic!("expected the run command, got {other:?}"),
    }
}

/// Resolves `args` with `REDIS_URL` set to [`REDIS`].
pub fn resolve(args: &[&str]) -> Result<ProcessorSettings, SettingsError> {
    resolve_env(args, Some(REDIS))
}

/// Resolves `args` (with `REDIS_URL` set), which must succeed.
pub fn ok(args: &[&str]) -> ProcessorSettings {
    resolve(args).unwrap_or_else(|e| panic!("settings resolve: {e}"))
}

/// Resolves `args` plus a transport config of `json`.
pub fn config(json: &str) -> ProcessorSettings {
    ok(&["--transport-config", json])
}

/// The one-line message of refused settings; asserts exit code 2.
pub fn refused(args: &[&str]) -> String {
    let error = resolve(args).expect_err("settings are refused");
    assert_eq!(error.exit_code(), 2, "{error}");
    let message = error.to_string();
    assert!(!message.contains('\n'), "not one line: {message}");
    message
}

/// [`refused`] of a transport config of `json`.
pub fn config_refused(json: &str) -> String {
    refused(&["--transport-config", json])
}

/// Asserts `text` contains every one of `parts`.
pub fn assert_says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "lacks {part:?}: {text}");
    }
}

/// The notes that mention `needle`.
pub fn notes_about<'a>(s: &'a ProcessorSettings, needle: &str) -> Vec<&'a str> {
    s.notes
        .iter()
        .map(String::as_str)
        .filter(|n| n.contains(needle))
        .collect()
}

/// Asserts exactly one note mentions `needle` and that it says every one of `parts`.
pub fn assert_one_note(s: &ProcessorSettings, needle: &str, parts: &[&str]) {
    let found = notes_about(s, needle);
    assert_eq!(found.len(), 1, "notes about {needle}: {:#?}", s.notes);
    assert_says(found[0], parts);
}

/// Asserts `s` runs exactly one queue, `queue_name`, whose requests go to `url`.
pub fn assert_single_queue(s: &ProcessorSettings, queue_name: &str, url: &str) {
    assert_eq!(s.queues.len(), 1);
    assert_eq!(s.queues[0].queue_name, queue_name);
    assert_eq!(s.queues[0].target.url_for(None).as_str(), url);
}

/// Asserts the runtime's and endpoints' defaults: polls of 10 every second,
/// 64 at once, a 2 minute drain, metrics on 9090 and health on 8081.
pub fn assert_runtime_defaults(s: &ProcessorSettings) {
    use std::time::Duration;
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(1000));
    assert_eq!(s.runtime.batch_size, 10);
    assert_eq!(s.runtime.concurrency, 64);
    assert_eq!(s.runtime.drain_timeout, Duration::from_secs(120));
    assert_eq!(s.metrics_addr.map(|a| a.port()), Some(9090));
    assert_eq!(s.health_addr.map(|a| a.port()), Some(8081));
}

/// Builds every queue and pool gate `s` names, as the binary does at start.
pub fn build_gates(s: &ProcessorSettings) -> Result<(), String> {
    let gates = crate::flow::FlowGates::build(s, &crate::flow::gate_env(s))?;
    let store = std::sync::Arc::new(claim_memory::MemoryStore::new(s.store.clone()));
    let builder = async_worker::Runtime::builder(store).config(s.runtime.clone());
    drop(crate::flow::with_flow(builder, s, &gates));
    Ok(())
}
