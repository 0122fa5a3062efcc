//! The `flow` run's report: one `row` per scenario (utilization, interactive waits, batch rate, the goal) and one `json` line with every figure.

use super::{
    BACKLOG, BATCH, CACHE_TTL, CONCURRENCY, Measured, Outcome, POLL, SERVICE, SINGLE, SLOTS,
    WARMUP, WINDOW,
};
use crate::report::{field, percentile, print_row};
use crate::server::round;
use serde_json::{Value, json};

/// Utilization the goal asks for.
const UTILIZATION_GOAL: f64 = 0.9;
/// Interactive p99 wait allowed, over `no-batch`'s.
const WAIT_GOAL: f64 = 1.2;

fn utilization(m: &Measured) -> f64 {
    m.figures.busy.as_secs_f64() / (SLOTS as f64 * WINDOW.as_secs_f64())
}

fn p99(m: &Measured) -> Option<f64> {
    percentile(&m.figures.interactive_waits, 0.99)
}

/// `met`, or how far each part of the goal is (`util-0.12`, `p99x3.4`).
fn goal(m: &Measured, base_p99: Option<f64>) -> String {
    let mut missed = Vec::new();
    let u = utilization(m);
    if u < UTILIZATION_GOAL {
        missed.push(format!("util{:+.2}", u - UTILIZATION_GOAL));
    }
    match (p99(m), base_p99) {
        (Some(p), Some(base)) if p > WAIT_GOAL * base => {
            missed.push(format!("p99x{:.1}", p / base.max(1e-3)));
        }
        (Some(_), Some(_)) => {}
        _ => missed.push("p99-unknown".to_owned()),
    }
    if missed.is_empty() {
        "met".to_owned()
    } else {
        format!("missed:{}", missed.join(","))
    }
}

fn row(name: &str, outcome: &Outcome, base_p99: Option<f64>) -> Value {
    let mut row = json!({
        "name": format!("{name}/{}", outcome.name),
        "gate": outcome.gate,
    });
    match &outcome.measured {
        Err(why) => row["note"] = why.clone().into(),
        Ok(m) => {
            let window = WINDOW.as_secs_f64();
            row["utilization"] = round(utilization(m), 3).into();
            row["wait_p50_ms"] = field(percentile(&m.figures.interactive_waits, 0.5), 2);
            row["wait_p99_ms"] = field(p99(m), 2);
            row["batch_per_s"] = round(m.figures.batch_completed as f64 / window, 1).into();
            row["interactive_per_s"] =
                round(m.figures.interactive_waits.len() as f64 / window, 1).into();
            row["goal"] = match outcome.name {
                "no-batch" => "baseline".into(),
                _ => goal(m, base_p99).into(),
            };
        }
    }
    row
}

/// Prints every scenario's row and the run's json line.
pub fn emit(name: &str, outcomes: &[Outcome]) {
    let base_p99 = outcomes
        .iter()
        .find(|o| o.name == "no-batch")
        .and_then(|o| o.measured.as_ref().ok())
        .and_then(p99);
    let mut scenarios = Vec::new();
    for outcome in outcomes {
        let row = row(name, outcome, base_p99);
        print_row(&row);
        let mut full = row;
        if let Ok(m) = &outcome.measured {
            full["busy_slot_s"] = round(m.figures.busy.as_secs_f64(), 3).into();
            full["interactive_samples"] = m.figures.interactive_waits.len().into();
            full["interactive_sent"] = m.interactive_sent.into();
            full["interactive_failed"] = m.interactive_failed.into();
            full["batch_completed"] = m.figures.batch_completed.into();
            full["backlog_left"] = m.backlog_left.into();
        }
        scenarios.push(full);
    }
    let settings = json!({
        "slots": SLOTS,
        "service_ms": SERVICE.as_millis() as u64,
        "interactive_rate_per_s": SLOTS as f64 / SERVICE.as_secs_f64() / 2.0,
        "backlog": BACKLOG,
        "concurrency": CONCURRENCY,
        "batch": BATCH,
        "batch_all_or_nothing_gates": SINGLE,
        "poll_ms": POLL.as_millis() as u64,
        "cache_ttl_ms": CACHE_TTL.as_millis() as u64,
        "warmup_s": WARMUP.as_secs_f64(),
        "window_s": WINDOW.as_secs_f64(),
        "prometheus_scrape_interval_s": 1,
        "goal": format!("utilization >= {UTILIZATION_GOAL} and interactive p99 wait <= {WAIT_GOAL}x no-batch"),
    });
    let json = json!({ "name": name, "settings": settings, "scenarios": scenarios });
    println!("json {json}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::pool::WindowFigures;
    use std::time::Duration;

    fn measured(utilization: f64, waits_us: Vec<u32>) -> Measured {
        let busy = SLOTS as f64 * WINDOW.as_secs_f64() * utilization;
        Measured {
            figures: WindowFigures {
                busy: Duration::from_secs_f64(busy),
                interactive_waits: waits_us,
                batch_completed: 0,
            },
            interactive_sent: 0,
            interactive_failed: 0,
            backlog_left: None,
        }
    }

    #[test]
    fn a_full_pool_whose_interactive_p99_stays_within_the_allowance_meets_the_goal() {
        let m = measured(0.95, vec![11_000; 100]);
        assert_eq!(goal(&m, Some(10.0)), "met");
    }

    #[test]
    fn a_missed_goal_says_how_far_each_half_is() {
        let m = measured(0.8, vec![30_000; 100]);
        assert_eq!(goal(&m, Some(10.0)), "missed:util-0.10,p99x3.0");
        let no_samples = measured(0.95, Vec::new());
        assert_eq!(goal(&no_samples, Some(10.0)), "missed:p99-unknown");
    }
}
