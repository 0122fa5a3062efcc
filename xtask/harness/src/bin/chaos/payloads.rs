//! Judging payloads stored apart and record tokens: each answered generation's payload key is gone, each missing payload ended `PAYLOAD_UNAVAILABLE`, each record names its generation.

use crate::producer::Ledger;
use crate::raw::Raw;
use crate::results::Records;
use claim_core::ClaimStore;
use claim_core::wire::{ErrorCode, payload_key};
use claim_redis::RedisStore;

/// Payload keys looked up per call.
const PAGE: usize = 500;

/// What became of the submissions by reference, and of the records' tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayloadCheck {
    /// Generations submitted by reference, and those of them with no payload stored.
    pub by_reference: usize,
    pub missing: usize,
    /// Records with `PAYLOAD_UNAVAILABLE`.
    pub unavailable_records: usize,
    /// Missing-payload generations answered, but neither
    /// `PAYLOAD_UNAVAILABLE` nor `CANCELLED` (a cancel seen before the
    /// fetch ends it without one).
    pub missing_otherwise: usize,
    /// Generations with a stored payload answered `PAYLOAD_UNAVAILABLE`.
    pub unavailable_with_payload: usize,
    /// Payload keys still stored for answered generations.
    pub keys_left: usize,
    /// Of those, after a failover (cluster, Sentinel): keys that carry an
    /// expiry. A failover can undo a delete the old primary acknowledged
    /// (asynchronous replication): the key then waits for its own expiry,
    /// ten minutes after the deadline. Counted and explained, not failed
    /// on; a left key without an expiry is a leak and fails either way.
    pub keys_left_to_expire: usize,
    /// Records without a `request_token`, and with one that is none of
    /// their id's generations.
    pub tokenless: usize,
    pub foreign_tokens: usize,
    /// A few of the generations whose payload key was left, with their
    /// records' codes, to start a diagnosis from.
    pub examples: Vec<String>,
}

impl PayloadCheck {
    /// Compares what was submitted with the records read and, for every
    /// answered generation submitted by reference, looks its payload key up.
    /// With `raw` (a run with a failover), left keys that carry an expiry
    /// are counted apart ([`PayloadCheck::keys_left_to_expire`]).
    pub async fn judge(
        ledger: &Ledger,
        records: &Records,
        store: &RedisStore,
        mut raw: Option<&mut Raw>,
    ) -> Result<PayloadCheck, String> {
        let unavailable = ErrorCode::PayloadUnavailable.as_str();
        let cancelled = ErrorCode::Cancelled.as_str();
        let mut check = PayloadCheck {
            by_reference: ledger.refs.len(),
            missing: ledger.refs.values().filter(|stored| !**stored).count(),
            unavailable_records: records.codes.get(unavailable).copied().unwrap_or(0),
            tokenless: records.tokenless,
            ..PayloadCheck::default()
        };
        check.foreign_tokens = records
            .by_generation
            .iter()
            .filter(|(g, _)| {
                let known = ledger.generations.get(&g.id);
                !known.is_some_and(|tokens| tokens.contains(&g.token))
            })
            .map(|(_, codes)| codes.len())
            .sum();
        let mut answered = Vec::new();
        let mut codes_of = Vec::new();
        for (generation, stored) in &ledger.refs {
            let Some(codes) = records.by_generation.get(generation) else {
                continue;
            };
            let has = |code: &str| codes.iter().any(|c| c == code);
            if *stored && has(unavailable) {
                check.unavailable_with_payload += 1;
            }
            if !*stored && !has(unavailable) && !has(cancelled) {
                check.missing_otherwise += 1;
            }
            answered.push(payload_key(&generation.id, &generation.token));
            codes_of.push(codes);
        }
        for (n, page) in answered.chunks(PAGE).enumerate() {
            let found = store
                .fetch_payloads(page)
                .await
                .map_err(|e| format!("looking up payload keys: {e}"))?;
            for (i, _) in found.iter().enumerate().filter(|(_, p)| p.is_some()) {
                if let Some(raw) = raw.as_deref_mut() {
                    let ttl: i64 = raw
                        .query(redis::cmd("PTTL").arg(&page[i]))
                        .await
                        .map_err(|e| format!("PTTL {}: {e}", page[i]))?;
                    if ttl > 0 {
                        check.keys_left_to_expire += 1;
                        continue;
                    }
                }
                check.keys_left += 1;
                if check.examples.len() < 5 {
                    let codes = codes_of[n * PAGE + i].join("+");
                    check.examples.push(format!("{} ({codes})", page[i]));
                }
            }
        }
        Ok(check)
    }

    /// Why the check failed; empty when it passed.
    pub fn failures(&self) -> Vec<String> {
        let counts = [
            (self.keys_left, "payload keys left for answered generations"),
            (
                self.missing_otherwise,
                "missing payloads answered neither PAYLOAD_UNAVAILABLE nor CANCELLED",
            ),
            (
                self.unavailable_with_payload,
                "generations with a stored payload answered PAYLOAD_UNAVAILABLE",
            ),
            (self.tokenless, "records without request_token"),
            (
                self.foreign_tokens,
                "records whose request_token is none of their id's generations",
            ),
        ];
        counts
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .chain(
                (!self.examples.is_empty())
                    .then(|| format!("payload keys left, e.g. {}", self.examples.join(", "))),
            )
            .collect()
    }

    /// The report's row.
    pub fn row(&self) -> String {
        format!(
            "{} generations ({} with no payload stored; {} PAYLOAD_UNAVAILABLE records); {} payload keys left for answered generations{}; {} records without their request_token",
            self.by_reference,
            self.missing,
            self.unavailable_records,
            self.keys_left,
            if self.keys_left_to_expire > 0 {
                format!(
                    " (and {} left to their own expiry: a delete the failover undid)",
                    self.keys_left_to_expire
                )
            } else {
                String::new()
            },
            self.tokenless + self.foreign_tokens
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_payload_or_token_fault_is_a_failure_of_its_own() {
        assert!(PayloadCheck::default().failures().is_empty());
        let check = PayloadCheck {
            keys_left: 1,
            missing_otherwise: 2,
            unavailable_with_payload: 3,
            tokenless: 4,
            foreign_tokens: 5,
            ..PayloadCheck::default()
        };
        let failures = check.failures();
        assert_eq!(failures.len(), 5, "{failures:?}");
        assert!(failures[0].starts_with("1 payload keys left"));
    }

    #[test]
    fn payload_keys_a_failover_left_to_their_own_expiry_are_counted_not_failed_on() {
        let check = PayloadCheck {
            keys_left_to_expire: 2,
            ..PayloadCheck::default()
        };
        assert!(check.failures().is_empty());
        assert!(check.row().contains("and 2 left to their own expiry"));
    }
}
