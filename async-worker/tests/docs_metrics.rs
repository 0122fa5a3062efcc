//! docs/OPERATIONS.md's metric catalogue is generated from `metrics::METRICS`: this test fails when the table and the code disagree, and rewrites the table when run with `UPDATE_DOCS=1`.

use async_worker::metrics::{Kind, METRICS, MetricInfo};
use std::path::{Path, PathBuf};

const BEGIN: &str = "<!-- generated: metrics -->\n";
const END: &str = "<!-- end -->\n";

fn guide_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/OPERATIONS.md")
}

/// `Q, reason` becomes ``Q, `reason` ``: the shorthand `Q` and `none` stay plain.
fn labels(m: &MetricInfo) -> String {
    let label = |l: &str| match l {
        "Q" | "none" => l.to_owned(),
        _ => format!("`{l}`"),
    };
    m.labels
        .split(", ")
        .map(label)
        .collect::<Vec<_>>()
        .join(", ")
}

fn kind(m: &MetricInfo) -> &'static str {
    match m.kind {
        Kind::Counter => "counter",
        Kind::Gauge => "gauge",
        Kind::Histogram => "histogram",
    }
}

/// The table as the code declares it, in `METRICS` order.
fn rendered_table() -> String {
    let mut table = String::from("| Metric | Type | Labels | Meaning |\n|---|---|---|---|\n");
    for m in METRICS {
        let row = format!(
            "| `{}` | {} | {} | {} |\n",
            m.name,
            kind(m),
            labels(m),
            m.help
        );
        table.push_str(&row);
    }
    table
}

/// The byte range of the generated table inside the guide (between the markers).
fn table_range(guide: &str) -> std::ops::Range<usize> {
    let start = guide
        .find(BEGIN)
        .expect("docs/OPERATIONS.md has no `<!-- generated: metrics -->`");
    let start = start + BEGIN.len();
    let len = guide[start..]
        .find(END)
        .expect("the metric table has no `<!-- end -->` after it");
    start..start + len
}

/// Every backquoted metric name at the start of a row of `table`.
fn row_names(table: &str) -> Vec<&str> {
    let names = table.lines().filter_map(|l| l.strip_prefix("| `"));
    names.filter_map(|l| l.split('`').next()).collect()
}

#[test]
fn the_operations_guide_lists_exactly_the_metrics_the_code_exports_with_their_type() {
    let path = guide_path();
    let guide = std::fs::read_to_string(&path).expect("docs/OPERATIONS.md is readable");
    let range = table_range(&guide);
    let expected = rendered_table();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{expected}{}", &guide[..range.start], &guide[range.end..]);
        std::fs::write(&path, updated).expect("docs/OPERATIONS.md is writable");
        return;
    }
    let documented = row_names(&guide[range.clone()]);
    let missing: Vec<&str> = METRICS
        .iter()
        .map(|m| m.name)
        .filter(|n| !documented.contains(n))
        .collect();
    let extra: Vec<&str> = documented
        .iter()
        .copied()
        .filter(|n| !METRICS.iter().any(|m| m.name == *n))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/OPERATIONS.md's metric table disagrees with metrics::METRICS: missing {missing:?}, \
         not exported {extra:?}; run `UPDATE_DOCS=1 cargo test -p async-worker --test docs_metrics`"
    );
    assert!(
        guide[range] == expected,
        "docs/OPERATIONS.md's metric table differs from metrics::METRICS (a type, label or \
         meaning); run `UPDATE_DOCS=1 cargo test -p async-worker --test docs_metrics`"
    );
}

#[test]
fn no_metric_name_outside_the_table_is_one_the_code_does_not_export() {
    let guide = std::fs::read_to_string(guide_path()).expect("docs/OPERATIONS.md is readable");
    let prefix = async_worker::metrics::PREFIX;
    let mut unknown: Vec<&str> = Vec::new();
    for (at, _) in guide.match_indices(prefix) {
        let name = &guide[at..];
        let end = name
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(name.len());
        let name = &name[..end];
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        // A stem such as `…_gate_metric_*` names the metrics it starts.
        let stem = name.ends_with('_') && METRICS.iter().any(|m| m.name.starts_with(name));
        if !stem && !METRICS.iter().any(|m| m.name == base) {
            unknown.push(name);
        }
    }
    assert!(
        unknown.is_empty(),
        "docs/OPERATIONS.md names metrics the code does not export: {unknown:?}"
    );
}
