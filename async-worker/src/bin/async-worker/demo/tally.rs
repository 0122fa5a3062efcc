//! Counting what a demo run produced: records per request, latency, payloads stored apart, and the verdict.

use claim_core::wire::{ErrorCode, ResultRecord};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// What the run saw, request by request.
#[derive(Debug, Default)]
pub struct Tally {
    submitted: HashMap<String, Instant>,
    records: HashMap<String, usize>,
    latencies: Vec<Duration>,
    unreadable: usize,
    /// Payload keys of the requests submitted by reference, by id.
    refs: HashMap<String, String>,
    /// Requests submitted by reference without a stored payload.
    missing: HashSet<String>,
    /// Requests answered `PAYLOAD_UNAVAILABLE`.
    unavailable: HashSet<String>,
    /// Records without a `request_token`.
    tokenless: usize,
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
    /// Requests submitted by reference, and those of them without a payload.
    pub by_reference: usize,
    pub missing_payloads: usize,
    /// Requests answered `PAYLOAD_UNAVAILABLE`; those of them whose payload
    /// was stored; missing payloads answered otherwise.
    pub payload_unavailable: usize,
    pub unavailable_with_payload: usize,
    pub missing_answered_otherwise: usize,
    /// Records without a `request_token`.
    pub tokenless: usize,
    /// Payload keys still stored for answered requests (the caller looks
    /// them up, see [`Tally::answered_refs`]).
    pub payload_keys_left: usize,
}

impl Summary {
    /// Nothing lost, and every request has exactly one terminal record.
    pub fn passed(&self) -> bool {
        self.lost == 0 && self.doubled == 0 && self.terminal_records == self.accepted
    }

    /// Why the payload references did not end as they must; empty when they did.
    pub fn payload_failures(&self) -> Vec<String> {
        let counted = [
            (
                self.missing_answered_otherwise,
                "missing payloads not answered PAYLOAD_UNAVAILABLE",
            ),
            (
                self.unavailable_with_payload,
                "requests with a stored payload answered PAYLOAD_UNAVAILABLE",
            ),
            (
                self.payload_keys_left,
                "payload keys left for answered requests",
            ),
            (self.tokenless, "records without request_token"),
        ];
        counted
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect()
    }
}

impl Tally {
    pub fn submitted(&mut self, id: String, at: Instant) {
        self.submitted.insert(id, at);
    }

    /// Notes that `id` was submitted by reference, its payload at `key`
    /// (`stored`: false when it was deliberately left out).
    pub fn by_reference(&mut self, id: &str, key: String, stored: bool) {
        self.refs.insert(id.to_owned(), key);
        if !stored {
            self.missing.insert(id.to_owned());
        }
    }

    /// Requests submitted by reference, and those of them without a payload.
    pub fn references(&self) -> (usize, usize) {
        (self.refs.len(), self.missing.len())
    }

    /// Payload keys of the answered requests submitted by reference: each
    /// must be gone (the owner's ack deletes it; a missing one never existed).
    pub fn answered_refs(&self) -> Vec<String> {
        let answered = self
            .refs
            .iter()
            .filter(|(id, _)| self.records.contains_key(*id));
        answered.map(|(_, key)| key.clone()).collect()
    }

    /// Counts one record as it is read from the result list.
    pub fn record(&mut self, raw: &[u8], seen: Instant) {
        let Ok(record) = ResultRecord::from_json(raw) else {
            self.unreadable += 1;
            return;
        };
        if record.error_code == Some(ErrorCode::PayloadUnavailable) {
            self.unavailable.insert(record.id.clone());
        }
        if record.request_token.as_deref().is_none_or(str::is_empty) {
            self.tokenless += 1;
        }
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
            by_reference: self.refs.len(),
            missing_payloads: self.missing.len(),
            payload_unavailable: self.unavailable.len(),
            unavailable_with_payload: self.unavailable.difference(&self.missing).count(),
            missing_answered_otherwise: self
                .missing
                .iter()
                .filter(|id| self.records.contains_key(*id) && !self.unavailable.contains(*id))
                .count(),
            tokenless: self.tokenless,
            payload_keys_left: 0,
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
    if summary.by_reference > 0 {
        rows.push((
            "by reference",
            format!(
                "{} ({} without a payload: {} PAYLOAD_UNAVAILABLE records); {} payload keys left for answered requests",
                summary.by_reference,
                summary.missing_payloads,
                summary.payload_unavailable,
                summary.payload_keys_left
            ),
        ));
    }
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
    let payloads = summary.payload_failures();
    if summary.passed() && payloads.is_empty() {
        let refs = if summary.by_reference > 0 {
            "; every missing payload answered PAYLOAD_UNAVAILABLE, no payload key left"
        } else {
            ""
        };
        println!("  PASS: nothing lost, exactly one record per request{refs}");
    } else if summary.passed() {
        println!("  FAIL: {}", payloads.join("; "));
    } else {
        println!("  FAIL");
    }
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

    #[test]
    fn a_missing_payload_must_end_payload_unavailable_and_no_other_request_may() {
        let now = Instant::now();
        let mut t = Tally::default();
        for id in ["a", "b", "c", "d"] {
            t.submitted(id.into(), now);
        }
        t.by_reference("a", "request-payload:a:t".into(), false);
        t.by_reference("b", "request-payload:b:t".into(), false);
        t.by_reference("c", "request-payload:c:t".into(), true);
        let unavailable =
            br#"{"payload":"","error_code":"PAYLOAD_UNAVAILABLE","request_token":"t"}"#;
        let with_id = |id: &str| {
            let text = String::from_utf8_lossy(unavailable).replacen(
                '{',
                &format!(r#"{{"id":"{id}","#),
                1,
            );
            text.into_bytes()
        };
        t.record(&with_id("a"), now);
        t.record(
            br#"{"id":"b","payload":"{}","status_code":200,"request_token":"t"}"#,
            now,
        );
        t.record(&with_id("c"), now);
        t.record(br#"{"id":"d","payload":"{}","status_code":200}"#, now);
        let s = t.summary();
        assert!(s.passed(), "one record each: {s:?}");
        assert_eq!(
            (s.by_reference, s.missing_payloads, s.payload_unavailable),
            (3, 2, 2)
        );
        assert_eq!(
            (
                s.missing_answered_otherwise,
                s.unavailable_with_payload,
                s.tokenless
            ),
            (1, 1, 1)
        );
        assert_eq!(s.payload_failures().len(), 3);
        let mut refs = t.answered_refs();
        refs.sort();
        assert_eq!(refs.len(), 3);
    }
}
