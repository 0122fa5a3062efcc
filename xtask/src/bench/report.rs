//! What a bench prints after its table and writes to disk: payload keys left, the ratios, the cluster rows against the one-node row, the runs at scale against the goals, the JSON figures.
//!
//! Cluster, measured: jobs/s, Redis CPU per job (all primaries), and each
//! primary's CPU per job it served (`a/b/c` in the row; `-` for a primary
//! holding no queue). Derived, and printed as such: the rate at which each
//! primary would saturate one core of its own (1,000,000 µs over its CPU
//! per served job, times the number of queues, as each primary serves an
//! equal share), the lowest of those as the cluster's Redis ceiling, and
//! the worker's own ceiling per core.

use super::Options;
use super::table::{Row, base_name, get};
use crate::{Error, project_root};
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// The cluster runs and their queue counts.
const CLUSTER_RUNS: [(&str, usize); 2] = [("protected-cluster", 3), ("protected-cluster-1q", 1)];

/// The figures of the runs at scale that are not table columns, carried
/// through [`super::table::medians`].
pub(super) const SCALE_KEYS: &str = "backlog fill_s idle_us_per_queue_s idle_calls_per_queue_s \
    idle_us_s_configured idle_us_s_baseline configured_queues busy_queues \
    answered_bytes_per_request waited_s keys_left";

/// Of [`SCALE_KEYS`], those in words, not numbers: a median takes the last round's.
pub(super) const TEXT_KEYS: [&str; 1] = ["keys_left"];

/// The backlog drain ratio the issue asks for (large over small).
const BACKLOG_GOAL: f64 = 0.9;
/// Bytes an answered request may still hold once its dedup window passed.
const ANSWERED_GOAL: f64 = 32.0;

fn figure(row: &Row, key: &str) -> Option<f64> {
    get(row, key).parse().ok()
}

fn find<'a>(rows: &'a [Row], name: &str) -> Option<&'a Row> {
    rows.iter().find(|r| base_name(r) == name)
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "missed" }
}

/// The payload keys each drain by reference left (each ack deletes its own: 0).
pub(super) fn print_payload_keys_left(rows: &[Row]) {
    let left: Vec<&str> = rows.iter().map(|r| get(r, "payload_keys_left")).collect();
    let left: Vec<&str> = left.into_iter().filter(|n| *n != "-").collect();
    if !left.is_empty() {
        let left = left.join(", ");
        println!("payload keys left after each drain by reference: {left}");
    }
}

/// Everything after the table: the ratios, the cluster and scale summaries.
pub(super) fn print_summaries(rows: &[Row]) {
    let (plain, inline, by_ref) = (
        find(rows, "protected"),
        find(rows, "protected-16K"),
        find(rows, "protected-16K-ref"),
    );
    for (key, what) in [
        ("jobs_per_s", "jobs/s"),
        ("redis_cpu_us_per_job", "Redis µs/job"),
    ] {
        let (Some(i), Some(r)) = (
            inline.and_then(|x| figure(x, key)),
            by_ref.and_then(|x| figure(x, key)),
        ) else {
            continue;
        };
        let against = plain.and_then(|x| figure(x, key)).map(|p| {
            format!(
                "; over plain protected: inline {:.2}, by reference {:.2}",
                i / p,
                r / p
            )
        });
        let against = against.unwrap_or_default();
        println!("16 KiB {what}: by reference / inline {:.2}{against}", r / i);
    }
    if let Some(r) = ratio(rows) {
        println!("protected/unprotected jobs/s: {r:.3}");
    }
    let protected = plain.map(|row| {
        (
            figure(row, "jobs_per_s"),
            figure(row, "redis_cpu_us_per_job"),
        )
    });
    if let Some((Some(rate), Some(us))) = protected {
        let share = rate * us / 1e6;
        println!(
            "protected jobs/s over what its Redis CPU allows (1,000,000 / {us} µs): {share:.2}"
        );
    }
    for (name, _) in CLUSTER_RUNS {
        if let Some(row) = find(rows, name) {
            print_cluster(name, row, plain);
        }
    }
    print_backlog(rows);
    print_queues(rows);
    for row in rows {
        let Some(bytes) = figure(row, "answered_bytes_per_request") else {
            continue;
        };
        let (waited, keys) = (get(row, "waited_s"), get(row, "keys_left"));
        let met = verdict(bytes <= ANSWERED_GOAL);
        println!(
            "\nanswered memory: {bytes} B held per answered request after {waited} s (goal <= {ANSWERED_GOAL}: {met}); keys left: {keys}"
        );
    }
}

pub(super) fn ratio(rows: &[Row]) -> Option<f64> {
    let rate = |name: &str| figure(find(rows, name)?, "jobs_per_s");
    Some(rate("protected")? / rate("unprotected")?)
}

/// The bench binary's `--queues` for cluster run `name`.
pub(super) fn queues_arg(name: &str) -> Vec<String> {
    let queues = CLUSTER_RUNS.iter().find(|(run, _)| *run == name);
    vec![
        "--queues".to_owned(),
        queues.map_or(3, |(_, q)| *q).to_string(),
    ]
}

/// Each primary's CPU per job it served, `None` for one holding no queue.
fn per_primary(row: &[(String, String)]) -> Vec<Option<f64>> {
    match get(row, "redis_cpu_us_per_served_job_by_primary") {
        "-" => Vec::new(),
        cell => cell.split('/').map(|v| v.parse().ok()).collect(),
    }
}

fn print_cluster(name: &str, row: &Row, one: Option<&Row>) {
    println!("\n{name} (measured, this run):");
    for (key, what) in [
        ("jobs_per_s", "jobs/s"),
        ("redis_cpu_us_per_job", "Redis µs/job (all nodes)"),
        ("worker_cpu_us_per_job", "worker µs/job"),
    ] {
        if let (Some(c), Some(p)) = (figure(row, key), one.and_then(|one| figure(one, key))) {
            println!(
                "  {what}: {c} against {p} on one server, ratio {:.2}",
                c / p
            );
        }
    }
    if let Some(busy) = figure(row, "machine_busy") {
        println!("  machine busy during the drain: {:.0}%", busy * 100.0);
    }
    let primaries = per_primary(row);
    let served: Vec<f64> = primaries.iter().flatten().copied().collect();
    if served.is_empty() {
        return;
    }
    println!("  derived, with a core per primary:");
    for (i, us) in primaries.iter().enumerate() {
        match us {
            Some(us) => println!(
                "    primary {i}: {us} µs per job it served: saturates its core at {:.0} jobs/s of its queue",
                1e6 / us
            ),
            None => println!("    primary {i}: holds no queue (serves per-request keys only)"),
        }
    }
    let slowest = served.iter().copied().fold(0.0, f64::max);
    let (queues, each) = (served.len(), 1e6 / slowest);
    let whole = queues as f64 * 1e6 / slowest;
    println!(
        "    Redis ceiling of the whole: {queues} queue(s) × {each:.0} = {whole:.0} jobs/s (the slowest primary bounds its share)"
    );
    if let Some(worker) = figure(row, "worker_cpu_us_per_job") {
        let ceiling = 1e6 / worker;
        println!(
            "    worker ceiling: {ceiling:.0} jobs/s per core it gets (1,000,000 / {worker} µs)"
        );
    }
}

/// The smallest and the largest backlog's rates, and their ratio.
fn print_backlog(rows: &[Row]) {
    let mut sized: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((figure(r, "backlog")?, figure(r, "jobs_per_s")?)))
        .collect();
    sized.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (Some(&(small, small_rate)), Some(&(large, large_rate))) = (sized.first(), sized.last())
    else {
        return;
    };
    if small != large {
        let ratio = large_rate / small_rate;
        let met = verdict(ratio >= BACKLOG_GOAL);
        println!(
            "\nbacklog: {large} pending drain {large_rate} jobs/s, {small} pending {small_rate} jobs/s: ratio {ratio:.3} (goal >= {BACKLOG_GOAL}: {met})"
        );
    }
}

/// Idle Redis CPU per idle queue, and the busy queues' rate beside the
/// idle ones against their rate alone.
fn print_queues(rows: &[Row]) {
    let Some(beside) = rows
        .iter()
        .find(|r| figure(r, "idle_us_per_queue_s").is_some())
    else {
        return;
    };
    let g = |key| get(beside, key);
    let (busy, configured) = (g("busy_queues"), g("configured_queues"));
    println!(
        "\nqueues: idle Redis CPU per idle queue {} µs/s ({} calls/s each; {configured} configured idle {} µs/s, 1 configured {} µs/s)",
        g("idle_us_per_queue_s"),
        g("idle_calls_per_queue_s"),
        g("idle_us_s_configured"),
        g("idle_us_s_baseline"),
    );
    let alone = rows.iter().find(|r| {
        get(r, "busy_queues") == busy
            && get(r, "configured_queues") == busy
            && figure(r, "idle_us_per_queue_s").is_none()
    });
    let rate = |r: &Row| figure(r, "jobs_per_s");
    if let (Some(with_idle), Some(only)) = (rate(beside), alone.and_then(rate)) {
        let share = with_idle / only;
        println!(
            "queues: {busy} busy of {configured} drain {with_idle} jobs/s, {share:.3} of the {only} jobs/s with only them configured"
        );
    }
}

pub(super) fn write_json(
    dir: &Path,
    options: &Options,
    program: &Path,
    runs: &[String],
    ratio: Option<f64>,
) -> Result<(), Error> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let mut describe = Command::new("git");
    describe
        .args(["describe", "--always", "--dirty"])
        .current_dir(project_root());
    let commit = describe
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let args: Vec<String> = options.pass.iter().map(|a| format!("{a:?}")).collect();
    let text = format!(
        "{{\"unix_time\":{secs},\"commit\":\"{}\",\"program\":{:?},\"args\":[{}],\
         \"protected_over_unprotected\":{},\"runs\":[\n{}\n]}}\n",
        commit.unwrap_or_default(),
        program.display().to_string(),
        args.join(","),
        ratio.map_or("null".to_owned(), |r| format!("{r:.4}")),
        runs.join(",\n")
    );
    for name in ["latest.json".to_owned(), format!("bench-{secs}.json")] {
        let path = dir.join(&name);
        std::fs::write(&path, &text)
            .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    println!("\nfigures: target/bench/latest.json, target/bench/bench-{secs}.json");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::table::{medians, pairs};
    use super::*;

    #[test]
    fn a_primary_without_a_queue_reads_as_none_and_a_standalone_row_as_no_primaries() {
        let row = pairs("name=c redis_cpu_us_per_served_job_by_primary=12.5/-/-");
        assert_eq!(per_primary(&row), vec![Some(12.5), None, None]);
        assert!(per_primary(&pairs("name=p redis_cpu_us_per_served_job_by_primary=-")).is_empty());
        assert_eq!(queues_arg("protected-cluster-1q"), ["--queues", "1"]);
        assert_eq!(queues_arg("protected-cluster"), ["--queues", "3"]);
    }

    #[test]
    fn the_figures_at_scale_survive_medians_and_words_take_the_last_round() {
        let round = |jobs: u32, keys: &str| {
            pairs(&format!(
                "name=a jobs_per_s={jobs} backlog=1000000 keys_left={keys}"
            ))
        };
        let m = medians(&[
            round(9, "x:*=1/9B"),
            round(7, "y:*=2/8B"),
            round(8, "z:*=3/7B"),
        ]);
        assert_eq!(get(&m[0], "backlog"), "1000000");
        assert_eq!(get(&m[0], "jobs_per_s"), "8");
        assert_eq!(get(&m[0], "keys_left"), "z:*=3/7B");
    }
}
