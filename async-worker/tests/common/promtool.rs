//! Real PromQL for the chart and deploy tests: the chart's queries from `chart_queries.txt`, scraped `/metrics` pages as promtool `input_series`, and `promtool test rules` with one `promql_expr_test` per query.
//!
//! Each scraped page becomes one sample per series, pages `interval` apart,
//! with the labels Kubernetes scraping attaches (`namespace`, `pod`, …). A
//! query passes when it returns at least one finite, non-negative sample:
//! promtool checks `count((<query>) >= 0) > bool 0` equals `{} 1`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One chart expression: its kind (`alert`, `panel`, `variable`), title and text.
#[derive(Debug, Clone)]
pub struct Query {
    pub kind: String,
    pub title: String,
    pub expr: String,
}

/// Reads the `[kind] title` / expression pairs of `chart_queries.txt`.
pub fn load_queries(text: &str) -> Vec<Query> {
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let mut queries = Vec::new();
    while let Some(header) = lines.next() {
        let (kind, title) = header
            .strip_prefix('[')
            .and_then(|h| h.split_once("] "))
            .unwrap_or_else(|| panic!("not a `[kind] title` line: {header}"));
        let expr = lines
            .next()
            .unwrap_or_else(|| panic!("{title} has no expression line"));
        queries.push(Query {
            kind: kind.to_owned(),
            title: title.to_owned(),
            expr: expr.to_owned(),
        });
    }
    queries
}

/// The samples of a Prometheus text page, each series with `extra` labels
/// appended (`a="b",c="d"`), as promtool series selectors.
pub fn samples(page: &str, extra: &str) -> Vec<(String, f64)> {
    let body = page.split_once("\r\n\r\n").map_or(page, |(_, body)| body);
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("not a sample line: {line}"));
            let value: f64 = value
                .parse()
                .unwrap_or_else(|e| panic!("bad value in {line}: {e}"));
            let series = match series.split_once('{') {
                Some((name, labels)) => {
                    let labels = labels.trim_end_matches('}');
                    format!("{name}{{{labels},{extra}}}")
                }
                None => format!("{series}{{{extra}}}"),
            };
            (series, value)
        })
        .collect()
}

/// promtool, or `None` (after saying why) locally; with `CI` set a missing
/// one fails the test (Debian package `prometheus`; `.ci/run` installs it).
pub fn find_or_skip() -> Option<PathBuf> {
    let found = claim_redis::testing::require_program(&["promtool"], "prometheus");
    if found.is_none() {
        eprintln!("skipped: promtool not on PATH (set CI to make this a failure)");
    }
    found
}

/// One `promql_expr_test`: the expression, and the labels of the one
/// sample it must return with value 1.
#[derive(Debug, Clone)]
pub struct ExprTest {
    pub expr: String,
    pub labels: String,
}

impl ExprTest {
    /// Passes when `expr` returns a finite, non-negative sample.
    pub fn finds_series(expr: &str) -> Self {
        ExprTest {
            expr: format!("count(({expr}) >= 0) > bool 0"),
            labels: "{}".to_owned(),
        }
    }
}

/// Single-quoted YAML.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A promtool unit-test file: the pages as `input_series` (one sample per
/// page, `interval` apart, `_` where a page lacks the series), every test
/// evaluated at the last page.
pub fn test_file(pages: &[Vec<(String, f64)>], interval: &str, tests: &[ExprTest]) -> String {
    let mut series: BTreeMap<&str, Vec<Option<f64>>> = BTreeMap::new();
    for (i, page) in pages.iter().enumerate() {
        for (name, value) in page {
            series
                .entry(name)
                .or_insert_with(|| vec![None; pages.len()])[i] = Some(*value);
        }
    }
    let eval_time = interval_times(interval, pages.len() - 1);
    let mut out = format!(
        "rule_files: []\nevaluation_interval: {interval}\ntests:\n  - interval: {interval}\n    input_series:\n"
    );
    for (name, values) in &series {
        let values: Vec<String> = values
            .iter()
            .map(|v| v.map_or("_".to_owned(), |v| v.to_string()))
            .collect();
        out += &format!(
            "      - series: {}\n        values: {}\n",
            quoted(name),
            quoted(&values.join(" "))
        );
    }
    out += "    promql_expr_test:\n";
    for test in tests {
        out += &format!(
            "      - expr: {}\n        eval_time: {eval_time}\n        exp_samples:\n          - labels: {}\n            value: 1\n",
            quoted(&test.expr),
            quoted(&test.labels)
        );
    }
    out
}

/// `interval` (like `30s`) times `n`, in promtool's duration syntax.
fn interval_times(interval: &str, n: usize) -> String {
    let secs: usize = interval
        .strip_suffix('s')
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("give the interval in whole seconds, not {interval}"));
    format!("{}s", secs * n)
}

/// `promtool <args>` in `dir`: whether it passed, and what it printed.
pub fn run_in(promtool: &Path, dir: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new(promtool)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run promtool");
    (output.status.success(), crate::common::printed(&output, ""))
}

/// Writes `file` into `dir` and runs `promtool test rules` on it: Ok with
/// promtool's output when every test passed, Err with it otherwise.
pub fn run(promtool: &Path, dir: &Path, file: &str) -> Result<String, String> {
    std::fs::create_dir_all(dir).expect("create the promtool test dir");
    let path = dir.join("chart_queries_test.yml");
    std::fs::write(&path, file).expect("write the promtool test file");
    let (passed, text) = run_in(promtool, dir, &["test", "rules", "chart_queries_test.yml"]);
    if passed {
        Ok(text)
    } else {
        Err(format!("{text}\n(test file: {})", path.display()))
    }
}
