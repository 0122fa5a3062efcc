//! The cluster rows beside the one-node `protected` row: the ratios measured in the same run, and the ceilings derived from each primary's CPU per job.
//!
//! Measured: jobs/s, Redis CPU per job (all primaries), and each primary's
//! CPU per job it served (`a/b/c` in the row; `-` for a primary holding
//! no queue). Derived, and printed as such: the rate at which each
//! primary would saturate one core of its own (1,000,000 µs over its CPU
//! per served job, times the number of queues, as each primary serves an
//! equal share), the lowest of those as the cluster's Redis ceiling, and
//! the worker's own ceiling per core (1,000,000 over its CPU per job).

use super::table::{Row, base_name, get};

/// The cluster runs and their queue counts.
const RUNS: [(&str, usize); 2] = [("protected-cluster", 3), ("protected-cluster-1q", 1)];

/// The bench binary's `--queues` for cluster run `name`.
pub(super) fn queues_arg(name: &str) -> Vec<String> {
    let queues = RUNS
        .iter()
        .find(|(run, _)| *run == name)
        .map_or(3, |(_, q)| *q);
    vec!["--queues".to_owned(), queues.to_string()]
}

/// Each primary's CPU per job it served, `None` for one holding no queue.
fn per_primary(row: &[(String, String)]) -> Vec<Option<f64>> {
    let cell = get(row, "redis_cpu_us_per_served_job_by_primary");
    if cell == "-" {
        return Vec::new();
    }
    cell.split('/').map(|v| v.parse().ok()).collect()
}

pub(super) fn print_summary(rows: &[Row]) {
    let find = |name: &str| rows.iter().find(|r| base_name(r) == name);
    let figure = |row: &Row, key: &str| -> Option<f64> { get(row, key).parse().ok() };
    let one = find("protected");
    for (name, _) in RUNS {
        let Some(row) = find(name) else {
            continue;
        };
        println!("\n{name} (measured, this run):");
        if let Some(one) = one {
            for (key, what) in [
                ("jobs_per_s", "jobs/s"),
                ("redis_cpu_us_per_job", "Redis µs/job (all nodes)"),
                ("worker_cpu_us_per_job", "worker µs/job"),
            ] {
                if let (Some(c), Some(p)) = (figure(row, key), figure(one, key)) {
                    println!(
                        "  {what}: {c} against {p} on one server, ratio {:.2}",
                        c / p
                    );
                }
            }
        }
        if let Some(busy) = figure(row, "machine_busy") {
            println!("  machine busy during the drain: {:.0}%", busy * 100.0);
        }
        let primaries = per_primary(row);
        let served: Vec<f64> = primaries.iter().flatten().copied().collect();
        if served.is_empty() {
            continue;
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
        println!(
            "    Redis ceiling of the whole: {} queue(s) × {:.0} = {:.0} jobs/s (the slowest primary bounds its share)",
            served.len(),
            1e6 / slowest,
            served.len() as f64 * 1e6 / slowest
        );
        if let Some(worker) = figure(row, "worker_cpu_us_per_job") {
            println!(
                "    worker ceiling: {:.0} jobs/s per core it gets (1,000,000 / {worker} µs)",
                1e6 / worker
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::table::pairs;

    #[test]
    fn a_primary_without_a_queue_reads_as_none_and_a_standalone_row_as_no_primaries() {
        let row = pairs("name=c redis_cpu_us_per_served_job_by_primary=12.5/-/-");
        assert_eq!(per_primary(&row), vec![Some(12.5), None, None]);
        assert!(per_primary(&pairs("name=p redis_cpu_us_per_served_job_by_primary=-")).is_empty());
        assert_eq!(queues_arg("protected-cluster-1q"), ["--queues", "1"]);
        assert_eq!(queues_arg("protected-cluster"), ["--queues", "3"]);
    }
}
