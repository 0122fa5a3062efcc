//! The bench's tables: one row per run as it came, and per-run medians when runs repeat.

/// A run's figures, as the bench binary printed them (`key=value`).
pub(super) type Row = Vec<(String, String)>;

/// Table columns: header, row key.
pub(super) const COLUMNS: [(&str, &str); 15] = [
    ("jobs/s", "jobs_per_s"),
    ("p50 ms", "p50_ms"),
    ("p99 ms", "p99_ms"),
    ("Redis µs/job", "redis_cpu_us_per_job"),
    (
        "µs/job by primary",
        "redis_cpu_us_per_served_job_by_primary",
    ),
    ("calls/job", "redis_calls_per_job"),
    ("RT/job", "round_trips_per_job"),
    ("B/claim", "claim_bytes"),
    ("member B", "member_bytes"),
    ("payload B", "payload_bytes"),
    ("RSS MiB", "rss_mib"),
    ("worker µs/job", "worker_cpu_us_per_job"),
    ("lost", "lost_claims"),
    ("wasted RT", "wasted_round_trips"),
    ("busy", "machine_busy"),
];

pub(super) fn pairs(row: &str) -> Row {
    row.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

pub(super) fn get<'a>(row: &'a [(String, String)], key: &str) -> &'a str {
    row.iter()
        .find(|(k, _)| k == key)
        .map_or("-", |(_, v)| v.as_str())
}

/// The run's name without a `(median of N)` note.
pub(super) fn base_name(row: &[(String, String)]) -> &str {
    let name = get(row, "name");
    name.split(" (median").next().unwrap_or(name)
}

/// One row per run name, in first-seen order: the median of each numeric
/// column (and of each figure the runs at scale summarize) over that
/// name's rows (the lower middle of an even count, so every figure is one
/// a run measured), `-` where none was numeric; the name carries `(median
/// of N)` when it ran more than once.
pub(super) fn medians(rows: &[Row]) -> Vec<Row> {
    let mut names: Vec<&str> = Vec::new();
    for name in rows.iter().map(|r| get(r, "name")) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let keys = COLUMNS.iter().map(|(_, key)| *key);
    let keys: Vec<&str> = keys
        .chain(super::report::SCALE_KEYS.split_whitespace())
        .collect();
    let one = |name: &str| {
        let same: Vec<&Row> = rows.iter().filter(|r| get(r, "name") == name).collect();
        let label = match same.len() {
            1 => name.to_owned(),
            n => format!("{name} (median of {n})"),
        };
        let cell = |key: &str| {
            let cells: Vec<&str> = same.iter().map(|r| get(r, key)).collect();
            match median(&cells) {
                // A figure in words (keys left): the last round's.
                None if super::report::TEXT_KEYS.contains(&key) => {
                    cells.last().unwrap_or(&"-").to_string()
                }
                None => per_part_median(&cells),
                Some(m) => m,
            }
        };
        let cells = keys.iter().map(|key| (key.to_string(), cell(key)));
        std::iter::once(("name".to_owned(), label))
            .chain(cells)
            .collect()
    };
    names.into_iter().map(one).collect()
}

/// The lower middle of the numeric cells, if any is numeric.
fn median(cells: &[&str]) -> Option<String> {
    let mut values: Vec<f64> = cells.iter().filter_map(|c| c.parse().ok()).collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (n > 0).then(|| values[(n - 1) / 2].to_string())
}

/// For cells of `/`-separated figures (one per cluster primary): the
/// median of each part, `-` for a part none had; `-` when no cell has parts.
fn per_part_median(cells: &[&str]) -> String {
    let parts: Vec<Vec<&str>> = cells
        .iter()
        .filter(|c| c.contains('/'))
        .map(|c| c.split('/').collect())
        .collect();
    let width = parts.iter().map(Vec::len).max().unwrap_or(0);
    let part = |i: usize| {
        let column: Vec<&str> = parts.iter().filter_map(|p| p.get(i).copied()).collect();
        median(&column).unwrap_or_else(|| "-".to_owned())
    };
    match width {
        0 => "-".to_owned(),
        _ => (0..width).map(part).collect::<Vec<_>>().join("/"),
    }
}

/// The `flow` run's columns: one row per scenario.
pub(super) const FLOW_COLUMNS: [(&str, &str); 8] = [
    ("gate", "gate"),
    ("utilization", "utilization"),
    ("wait p50 ms", "wait_p50_ms"),
    ("wait p99 ms", "wait_p99_ms"),
    ("batch/s", "batch_per_s"),
    ("interactive/s", "interactive_per_s"),
    ("goal", "goal"),
    ("note", "note"),
];

/// A `flow` scenario's row (it has a gate column, no drain).
pub(super) fn is_flow(row: &[(String, String)]) -> bool {
    row.iter().any(|(k, _)| k == "gate")
}

pub(super) fn print_table(rows: &[Row]) {
    print_columns(&COLUMNS, rows);
}

pub(super) fn print_columns(columns: &[(&str, &str)], rows: &[Row]) {
    let header = columns.iter().map(|(h, _)| h.to_string());
    let mut table = vec![
        std::iter::once("run".to_owned())
            .chain(header)
            .collect::<Vec<_>>(),
    ];
    for row in rows {
        let cells = columns.iter().map(|(_, k)| get(row, k).to_owned());
        table.push(
            std::iter::once(get(row, "name").to_owned())
                .chain(cells)
                .collect(),
        );
    }
    let width = |i: usize| {
        table
            .iter()
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..table[0].len()).map(width).collect();
    println!();
    for (n, row) in table.iter().enumerate() {
        let cells = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| match i {
                0 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            });
        println!("| {} |", cells.collect::<Vec<_>>().join(" | "));
        if n == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            println!("|-{}-|", rule.join("-|-"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_take_the_middle_run_per_name_and_skip_missing_figures() {
        let rows: Vec<Row> = [
            "name=a jobs_per_s=30 p50_ms=-",
            "name=b jobs_per_s=7",
            "name=a jobs_per_s=10 p50_ms=2",
            "name=a jobs_per_s=20 p50_ms=4",
        ]
        .iter()
        .map(|r| pairs(r))
        .collect();
        let m = medians(&rows);
        assert_eq!(get(&m[0], "name"), "a (median of 3)");
        assert_eq!(get(&m[0], "jobs_per_s"), "20");
        // Two numeric values: the lower one, a figure a run measured.
        assert_eq!(get(&m[0], "p50_ms"), "2");
        assert_eq!(get(&m[1], "name"), "b");
        assert_eq!(get(&m[1], "p99_ms"), "-");
    }

    #[test]
    fn medians_of_per_primary_cells_are_taken_part_by_part() {
        let key = "redis_cpu_us_per_served_job_by_primary";
        let rows: Vec<Row> = [
            format!("name=c {key}=10/20/-"),
            format!("name=c {key}=30/10/-"),
            format!("name=c {key}=20/30/-"),
        ]
        .iter()
        .map(|r| pairs(r))
        .collect();
        assert_eq!(get(&medians(&rows)[0], key), "20/20/-");
    }
}
