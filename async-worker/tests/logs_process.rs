//! The processor's log lines as a collector reads them: `--zap-encoder json` (the default off a terminal) writes one JSON object per line, each request's lines carry its queue, id and generation but never its payload, and `console` writes text.

mod common;

use common::stage::Stage;
use common::worker::{BINARY, Worker};
use std::process::Command;
use std::time::Duration;

/// Long enough for a process on a busy machine to start, serve one request and drain.
const BOUND: Duration = Duration::from_secs(20);

/// A payload no log line may carry.
const SECRET: &str = "payload-never-logged-7f3a";

/// The worker on `redis_url`, with `LOG_LEVEL=debug` and `encoder`,
/// metrics and health off, and `extra` flags.
fn start(redis_url: &str, gateway: &str, encoder: &str, extra: &[&str]) -> Worker {
    let mut command = Command::new(BINARY);
    command
        .args(["--redis-url", redis_url, "--igw-base-url", gateway])
        .args(["--metrics-port", "0", "--health-port", "0"])
        .args(["--drain-timeout", "5s", "--zap-encoder", encoder])
        .args(extra)
        .env_remove("REDIS_URL")
        .env_remove("RUST_LOG")
        .env("LOG_LEVEL", "debug");
    Worker::spawn(command, 0, 0)
}

/// Every line of `log` as a JSON object; fails naming the first line that is not one.
fn json_lines(log: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    log.lines()
        .map(|line| match serde_json::from_str(line) {
            Ok(serde_json::Value::Object(object)) => object,
            _ => panic!("a log line is not a JSON object: {line}"),
        })
        .collect()
}

#[tokio::test]
async fn json_lines_carry_timestamp_level_target_message_and_the_requests_queue_id_and_generation_but_not_its_payload()
 {
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(1)).await else {
        return;
    };
    let mut worker = start(&stage.url, &stage.gateway.base_url(), "json", &[]);
    let deadline = common::unix_now() + 600;
    let payload = serde_json::json!({"model": "m", "prompt": SECRET});
    common::go_submit(&mut stage.conn, "logged-1", deadline, payload).await;
    let record = common::brpop(&stage.url, BOUND).await;
    assert!(record.is_some(), "no record; log:\n{}", worker.log_tail());
    worker.stop_within(BOUND).await;

    let log = worker.log();
    assert!(!log.contains(SECRET), "a line carries the payload:\n{log}");
    let lines = json_lines(&log);
    for line in &lines {
        for key in ["timestamp", "level", "target", "message"] {
            assert!(line.contains_key(key), "a line lacks {key}: {line:?}");
        }
    }
    let start = lines
        .iter()
        .find(|l| l["message"] == "starting the processor")
        .expect("the start line");
    assert_eq!(start["level"], "INFO");
    assert!(
        start.contains_key("queues"),
        "fields beside message: {start:?}"
    );
    let in_request: Vec<_> = lines
        .iter()
        .filter(|l| l.get("span").is_some_and(|s| s["id"] == "logged-1"))
        .collect();
    assert!(
        !in_request.is_empty(),
        "no line in the request's span:\n{log}"
    );
    for line in in_request {
        let span = &line["span"];
        assert_eq!(span["name"], "request");
        assert_eq!(span["queue"], common::QUEUE);
        assert_eq!(span["generation"], common::token("logged-1"));
    }
}

#[tokio::test]
async fn console_lines_are_text_and_a_bad_encoder_is_refused_naming_the_accepted_ones() {
    // Nothing listens there: the processor logs its start, then exits 1.
    let unreachable = format!("redis://127.0.0.1:{}", common::free_port());
    let mut worker = start(&unreachable, "http://gateway.invalid", "console", &[]);
    let status = worker.exit_within(BOUND).await;
    assert_eq!(status.code(), Some(1), "{}", worker.log());
    let log = worker.log();
    assert!(log.contains("starting the processor"), "{log}");
    for line in log.lines() {
        let parsed = serde_json::from_str::<serde_json::Value>(line);
        assert!(parsed.is_err(), "a console line is JSON: {line}");
    }

    let mut refused = start(&unreachable, "http://gateway.invalid", "xml", &[]);
    let status = refused.exit_within(BOUND).await;
    let log = refused.log();
    assert_eq!(status.code(), Some(2), "{log}");
    for says in ["--zap-encoder", "\"xml\"", "json, console"] {
        assert!(log.contains(says), "the refusal lacks {says}: {log}");
    }
}

#[tokio::test]
async fn zap_log_level_wins_over_the_log_level_the_chart_sets_and_a_bad_one_is_refused() {
    // Nothing listens there: the processor logs its start (info), then the
    // connection error (error), and exits 1.
    let unreachable = format!("redis://127.0.0.1:{}", common::free_port());
    let at = |level: &str| {
        start(
            &unreachable,
            "http://gw",
            "json",
            &["--zap-log-level", level],
        )
    };
    let mut quiet = at("error");
    assert_eq!(quiet.exit_within(BOUND).await.code(), Some(1));
    let lines = json_lines(&quiet.log());
    assert!(!lines.is_empty(), "the connection error is logged");
    for line in &lines {
        assert_eq!(line["level"], "ERROR", "LOG_LEVEL=debug lost: {line:?}");
    }

    let mut refused = at("loud");
    let status = refused.exit_within(BOUND).await;
    let log = refused.log();
    assert_eq!(status.code(), Some(2), "{log}");
    assert!(
        log.contains("--zap-log-level: \"loud\" is not a log level"),
        "{log}"
    );
}
