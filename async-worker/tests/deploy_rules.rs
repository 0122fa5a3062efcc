//! `deploy/`: the alert rules pass `promtool check rules` and their unit tests, every alert has its runbook, and every metric a rule or dashboard panel reads is one a running worker exports.
//!
//! The promtool tests skip locally without `promtool` and fail when `CI`
//! is set (`.ci/run` installs Debian's `prometheus`); the worker test needs
//! a private `redis-server` the same way.

mod common;
#[path = "common/promtool.rs"]
mod promtool;

use async_worker::metrics as m;
use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use async_worker::test_support::metric_sum;
use claim_core::wire::Envelope;
use common::worker::{DRAIN, Worker, has_sample};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const ALERTS: &str = include_str!("../../deploy/prometheus/alerts.yaml");
const DASHBOARD: &str = include_str!("../../deploy/grafana/dashboard.json");
const OPERATIONS: &str = include_str!("../../docs/OPERATIONS.md");

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/prometheus")
}

/// Every `llm_d_async_async_…` name in `text`, as written (`_bucket` kept).
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(m::PREFIX) {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.insert(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}

/// Every PromQL expression of the dashboard: panel targets and variable queries.
fn dashboard_exprs() -> Vec<String> {
    let dashboard: serde_json::Value = serde_json::from_str(DASHBOARD).expect("dashboard JSON");
    let mut exprs = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().expect("a target's expr");
            exprs.push(expr.to_owned());
        }
    }
    let variables = dashboard["templating"]["list"]
        .as_array()
        .expect("variables");
    for variable in variables {
        if let Some(query) = variable["query"]["query"].as_str() {
            exprs.push(query.to_owned());
        }
    }
    exprs
}

/// The alert names of the rules file.
fn alert_names() -> Vec<String> {
    ALERTS
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .map(str::to_owned)
        .collect()
}

/// The metrics the rules and the dashboard read, histogram series by their base name.
fn metrics_read() -> BTreeSet<String> {
    let mut names = metric_names(ALERTS);
    names.extend(dashboard_exprs().iter().flat_map(|e| metric_names(e)));
    names
}

fn base_name(series: &str) -> &str {
    ["_bucket", "_count", "_sum"]
        .iter()
        .find_map(|suffix| series.strip_suffix(suffix))
        .filter(|base| m::METRICS.iter().any(|x| x.name == *base))
        .unwrap_or(series)
}

#[test]
fn the_alert_rules_pass_promtool_check_rules_and_every_unit_test() {
    let Some(path) = promtool::find_or_skip() else {
        return;
    };
    let (ok, output) = promtool::run_in(&path, &deploy_dir(), &["check", "rules", "alerts.yaml"]);
    assert!(ok, "promtool check rules:\n{output}");
    let (ok, output) =
        promtool::run_in(&path, &deploy_dir(), &["test", "rules", "alerts_test.yaml"]);
    assert!(
        ok && output.contains("SUCCESS"),
        "promtool test rules:\n{output}"
    );
}

#[test]
fn every_alert_is_unit_tested_firing_and_quiet() {
    let tests = include_str!("../../deploy/prometheus/alerts_test.yaml");
    for alert in alert_names() {
        let checks: Vec<&str> = tests
            .split("      - eval_time:")
            .filter(|c| c.contains(&format!("alertname: {alert}\n")))
            .collect();
        assert!(
            checks.iter().any(|c| c.contains("exp_labels")),
            "{alert}: no test where it fires"
        );
        let quiet = checks.iter().any(|c| c.contains("exp_alerts: []"));
        assert!(quiet, "{alert}: no test where it stays quiet");
    }
    assert_eq!(alert_names().len(), 12, "{:?}", alert_names());
}

#[test]
fn every_alert_links_to_a_runbook_section_of_the_operations_guide() {
    for alert in alert_names() {
        let anchor = format!("runbook: docs/OPERATIONS.md#{}", alert.to_lowercase());
        assert!(ALERTS.contains(&anchor), "{alert} has no `{anchor}`");
        let heading = format!("### {alert}\n");
        assert!(
            OPERATIONS.contains(&heading),
            "docs/OPERATIONS.md has no runbook section `{}`",
            heading.trim_end()
        );
    }
}

/// The `admin …` commands the runbook quotes (code spans), as words.
fn runbook_admin_commands() -> Vec<Vec<String>> {
    let start = OPERATIONS
        .find("## Alerts and runbook")
        .expect("the runbook section");
    let runbook = &OPERATIONS[start..];
    let runbook = &runbook[..runbook[3..].find("\n## ").map_or(runbook.len(), |e| e + 3)];
    let spans = runbook.split('`').skip(1).step_by(2);
    spans
        .map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .filter(|words| words.first().is_some_and(|w| w == "admin"))
        .collect()
}

#[test]
fn every_admin_command_and_flag_the_runbook_quotes_exists() {
    let commands = runbook_admin_commands();
    assert!(commands.len() >= 10, "{commands:?}");
    for words in commands {
        // The subcommand path: the lowercase words before a flag or placeholder.
        let path: Vec<&str> = words
            .iter()
            .map(String::as_str)
            .take_while(|w| !w.starts_with('-') && w.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        let output = Command::new(common::worker::BINARY)
            .args(&path)
            .arg("--help")
            .output()
            .expect("run async-worker");
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "`{}` is no command: {help}",
            path.join(" ")
        );
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            assert!(
                help.contains(flag.as_str()),
                "`{}` has no {flag}:\n{help}",
                path.join(" ")
            );
        }
    }
}

#[test]
fn every_metric_a_rule_or_panel_reads_is_one_the_worker_declares() {
    let read = metrics_read();
    assert!(read.len() >= 20, "{read:?}");
    for name in &read {
        let base = base_name(name);
        let declared = m::METRICS.iter().find(|x| x.name == base);
        let declared = declared.unwrap_or_else(|| panic!("{name} is not in metrics::METRICS"));
        if base != name {
            assert_eq!(declared.kind, m::Kind::Histogram, "{name}");
        }
    }
}

#[test]
fn the_dashboard_has_a_title_uid_and_every_target_an_expression() {
    let dashboard: serde_json::Value = serde_json::from_str(DASHBOARD).expect("dashboard JSON");
    assert_eq!(dashboard["uid"], "llm-d-async-claims");
    let panels = dashboard["panels"].as_array().expect("panels");
    let charts: Vec<_> = panels.iter().filter(|p| p["type"] != "row").collect();
    assert!(charts.len() >= 12, "{} panels", charts.len());
    let mut ids = BTreeSet::new();
    for panel in panels {
        assert!(ids.insert(panel["id"].as_u64().expect("an id")), "{panel}");
        assert!(panel["title"].as_str().is_some_and(|t| !t.is_empty()));
    }
    for chart in charts {
        let targets = chart["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{} has no target", chart["title"]);
    }
}

/// The namespace and pod labels a Kubernetes scrape adds.
const KUBE: &str = r#"namespace="deploy-test",pod="ap-0",job="ap",instance="10.0.0.7:9090""#;

/// A dashboard expression as Grafana sends it (namespace picked, every
/// queue, a 30 s scrape's rate interval), as a promtool "returns a series" test.
fn dashboard_test(expr: &str) -> promtool::ExprTest {
    let expr = expr
        .replace("$namespace", "deploy-test")
        .replace("$queue", ".*")
        .replace("$__rate_interval", "2m");
    let expr = match expr
        .strip_prefix("label_values(")
        .and_then(|e| e.strip_suffix(')'))
        .and_then(|e| e.rsplit_once(", "))
    {
        Some((metric, label)) => format!("group by ({label}) ({metric})"),
        None => expr,
    };
    promtool::ExprTest::finds_series(&expr)
}

/// Submits as the Go producer does, created a second ago (so the message
/// latency is observed).
async fn submit_created(conn: &mut redis::aio::MultiplexedConnection, id: &str, deadline: i64) {
    let payload = serde_json::json!({"model": "m", "prompt": "p"});
    let mut envelope = Envelope::new(id, common::token(id), deadline, payload);
    envelope.data.created = common::unix_now() - 1;
    common::go_submit_envelope(conn, &envelope).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_paused_and_resumed_that_lost_redis_under_an_ack_reports_both_and_exports_every_metric_a_rule_or_panel_reads()
 {
    let Some(mut server) = common::redis_server() else {
        return;
    };
    // Each call takes 1.5 s: long enough to stop Redis under one.
    let gateway = StandInGateway::start(GatewayBehaviour::answering_after(Duration::from_millis(
        1500,
    )))
    .await
    .expect("start the gateway");
    // Gated, so the flow-control panels have their series too: an always
    // open queue gate (its dispatch budget) and an aimd gate on the
    // default pool (its windows), neither of which holds anything back.
    let files = common::flow::ConfigDir::new("deploy-rules");
    let pools = files.write(
        "pools.json",
        r#"[{"id": "default", "workers": 16, "gate_type": "aimd"}]"#,
    );
    #[rustfmt::skip]
    let gated = ["--redis.ss.gate-type", "constant", "--pool-config-file", &pools];
    let drain = format!("{}s", DRAIN.as_secs());
    let mut worker = Worker::start_with(&server.url(), &gateway.base_url(), "5s", &drain, &gated);
    worker.metrics_when_up().await;
    let mut first = String::new();
    common::eventually("store_up 1 at start", Duration::from_secs(10), async || {
        first = worker.metrics().await;
        metric_sum(&first, m::STORE_UP) == 1.0
    })
    .await;
    assert_eq!(metric_sum(&first, m::WRITER_FAILING), 0.0, "{first}");

    let mut conn = common::connect(&server.url()).await;
    let deadline = common::unix_now() + 600;
    for i in 0..5 {
        submit_created(&mut conn, &format!("r-{i}"), deadline).await;
    }
    common::eventually("every record", Duration::from_secs(30), async || {
        common::depths(&mut conn).await.results == 5
    })
    .await;
    let served = worker.metrics().await;

    // `admin pause` shows as queue_paused 1 within a poll interval; `resume` as 0.
    for (command, value) in [("pause", 1.0), ("resume", 0.0)] {
        let status = Command::new(common::worker::BINARY)
            .args([
                "admin",
                "--redis-url",
                &server.url(),
                command,
                common::QUEUE,
            ])
            .status()
            .expect("run async-worker admin");
        assert!(status.success(), "admin {command}: {status}");
        common::eventually(command, Duration::from_secs(10), async || {
            metric_sum(&worker.metrics().await, m::QUEUE_PAUSED) == value
        })
        .await;
    }

    // One more request; Redis goes away while the gateway works on it. Its
    // ack fails (writer_failing_seconds rises) and store_up drops to 0
    // within a ping interval or two; both recover once Redis is back.
    submit_created(&mut conn, "late", deadline).await;
    let claims = format!("{}:claimed", common::QUEUE);
    common::eventually(
        "the late request claimed",
        Duration::from_secs(10),
        async || {
            redis::AsyncCommands::hlen::<_, usize>(&mut conn, &claims)
                .await
                .expect("HLEN")
                == 1
        },
    )
    .await;
    drop(conn);
    server.kill();
    common::eventually(
        "store_up 0 and the writer failing",
        Duration::from_secs(15),
        async || {
            let page = worker.metrics().await;
            metric_sum(&page, m::STORE_UP) == 0.0 && metric_sum(&page, m::WRITER_FAILING) > 0.0
        },
    )
    .await;
    server.restart().expect("restart redis-server");
    common::eventually(
        "store_up 1 and the writer landing again",
        Duration::from_secs(30),
        async || {
            let page = worker.metrics().await;
            metric_sum(&page, m::STORE_UP) == 1.0 && metric_sum(&page, m::WRITER_FAILING) == 0.0
        },
    )
    .await;

    let back = worker.metrics().await;
    for name in metrics_read() {
        assert!(
            has_sample(&back, &name),
            "{name} is not on /metrics:\n{back}"
        );
    }
    // Every dashboard query returns a series on the four scrapes, 30 s apart
    // (the last two both after Redis came back, so the error counters the
    // outage created have two samples).
    if let Some(path) = promtool::find_or_skip() {
        let last = worker.metrics().await;
        let pages: Vec<_> = [&first, &served, &back, &last]
            .iter()
            .map(|page| promtool::samples(page, KUBE))
            .collect();
        let exprs = dashboard_exprs();
        let tests: Vec<_> = exprs.iter().map(|e| dashboard_test(e)).collect();
        let file = promtool::test_file(&pages, "30s", &tests);
        let dir = std::env::temp_dir().join(format!("deploy-rules-{}", std::process::id()));
        match promtool::run(&path, &dir, &file) {
            Ok(_) => {
                let _ = std::fs::remove_dir_all(&dir);
            }
            Err(output) => panic!("a dashboard query found no series:\n{output}\n{exprs:#?}"),
        }
    }
    worker.signal("TERM");
    let status = worker.exit_within(DRAIN + Duration::from_secs(5)).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log_tail());
}
