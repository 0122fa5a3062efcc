//! The admin command line as an operator types it: connection flags on either side of the command, and the generated shell completions and man page.

mod common;

use common::worker::BINARY;
use std::process::{Command, Output};

/// Runs the binary with `args` and no inherited Redis URL or log filter.
fn run(args: &[&str]) -> Output {
    Command::new(BINARY)
        .args(args)
        .env_remove("REDIS_URL")
        .env_remove("RUST_LOG")
        .output()
        .expect("run async-worker")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What the binary printed on stdout with `args`, which must succeed.
fn printed(args: &[&str]) -> String {
    let out = run(args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    text(&out.stdout)
}

#[test]
fn dead_list_reads_the_transport_config_file_given_before_or_after_the_command() {
    let Some(server) = common::redis_server() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("admin-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("transport.json");
    let config = serde_json::json!({
        "url": server.url(),
        "queues": [{"queue_name": common::QUEUE, "igw_base_url": "http://gateway.invalid"}],
    });
    std::fs::write(&file, config.to_string()).expect("write the transport config");
    let file = file.to_str().expect("a UTF-8 path");
    for args in [
        &[
            "admin",
            "dead",
            "list",
            "--json",
            "--transport-config-file",
            file,
        ][..],
        &[
            "--transport-config-file",
            file,
            "admin",
            "dead",
            "list",
            "--json",
        ][..],
        &["admin", "--transport-config-file", file, "stats", "--json"][..],
        &["--transport-config-file", file, "admin", "stats", "--json"][..],
    ] {
        let stdout = printed(args);
        let printed: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {stdout}"));
        assert!(
            printed.is_array() || printed.is_object(),
            "{args:?}: {printed}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_and_the_man_page_are_generated_from_the_command_line() {
    for (args, says) in [
        (&["completions", "bash"][..], "--transport-config-file"),
        (&["completions", "zsh"][..], "--claim-lease-ttl"),
        (&["completions", "fish"][..], "admin"),
        (&["man"][..], ".TH async-worker"),
    ] {
        let stdout = printed(args);
        assert!(stdout.contains(says), "{args:?} lacks {says:?}: {stdout}");
    }
    let out = run(&["completions", "no-such-shell"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no-such-shell"),
        "{}",
        text(&out.stderr)
    );
}
