//! Counting what a demo or chaos run produced: records per request, latency, and the verdict.

use claim_core::wire::ResultRecord;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What the run saw, request by request.
#[derive(Debug, Default)]
pub struct Tally {
    submitted: HashMap<String, Instant>,
    records: HashMap<String, usize>,
    latencies: Vec<Duration>,
    unreadable: usize,
}

/// The closing figures of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub accepted: usize,
    pub terminal_records: usize,
    /// Accepted requests without any terminal record.
    pub lost: usize,
    /// Requests with more than one terminal record.
    pub doubled: usize,
    pub p50: Duration,
    pub p99: Duration,
}

impl Summary {
    /// Nothing lost, and every request has exactly one terminal record.
    pub fn passed(&self) -> bool {
        self.lost == 0 && self.doubled == 0 && self.terminal_records == self.accepted
    }
}

impl Tally {
    pub fn submitted(&mut self, id: String, at: Instant) {
        self.submitted.insert(id, at);
    }

    /// Counts one record as it is read from the result list.
    pub fn record(&mut self, raw: &[u8], seen: Instant) {
        let Ok(record) = ResultRecord::from_json(raw) else {
            self.unreadable += 1;
            return;
        };
        let count = self.records.entry(record.id.clone()).or_default();
        *count += 1;
        if *count == 1
            && let Some(at) = self.submitted.get(&record.id)
        {
            self.latencies.push(seen.duration_since(*at));
        }
    }

    /// Requests with at least one record.
    pub fn answered(&self) -> usize {
        self.records.len()
    }

    pub fn summary(&self) -> Summary {
        let mut latencies = self.latencies.clone();
        latencies.sort();
        let pct = |p: f64| {
            latencies
                .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        Summary {
            accepted: self.submitted.len(),
            terminal_records: self.records.values().sum::<usize>() + self.unreadable,
            lost: self
                .submitted
                .keys()
                .filter(|id| !self.records.contains_key(*id))
                .count(),
            doubled: self.records.values().filter(|n| **n > 1).count(),
            p50: pct(0.50),
            p99: pct(0.99),
        }
    }
}

/// Prints the closing table of a run.
pub fn print_table(title: &str, summary: &Summary, extra: &[(&str, String)], elapsed: Duration) {
    let rate = summary.terminal_records as f64 / elapsed.as_secs_f64().max(1e-9);
    println!("\n{title}");
    let mut rows: Vec<(&str, String)> = vec![
        ("accepted", summary.accepted.to_string()),
        ("terminal records", summary.terminal_records.to_string()),
    ];
    rows.extend(extra.iter().cloned());
    rows.extend([
        ("lost", summary.lost.to_string()),
        ("requests with >1 record", summary.doubled.to_string()),
        (
            "throughput",
            format!("{rate:.0} requests/s over {:.1} s", elapsed.as_secs_f64()),
        ),
        (
            "latency p50",
            format!("{:.1} ms", summary.p50.as_secs_f64() * 1000.0),
        ),
        (
            "latency p99",
            format!("{:.1} ms", summary.p99.as_secs_f64() * 1000.0),
        ),
    ]);
    for (name, value) in rows {
        println!("  {name:<24} {value}");
    }
    let verdict = if summary.passed() {
        "PASS: nothing lost, exactly one record per request"
    } else {
        "FAIL"
    };
    println!("  {verdict}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_record_is_lost_and_a_second_one_is_doubled() {
        let now = Instant::now();
        let mut t = Tally::default();
        for id in ["a", "b", "c"] {
            t.submitted(id.into(), now);
        }
        t.record(br#"{"id":"a","payload":""}"#, now);
        t.record(br#"{"id":"b","payload":""}"#, now);
        t.record(br#"{"id":"b","payload":""}"#, now);
        let s = t.summary();
        assert_eq!(
            (s.accepted, s.terminal_records, s.lost, s.doubled),
            (3, 3, 1, 1)
        );
        assert!(!s.passed());
    }
}
