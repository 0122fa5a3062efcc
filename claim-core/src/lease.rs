//! Lease arithmetic: when a claim expires and how often its holder renews it.

use crate::stored::Member;
use crate::types::Millis;
use crate::wire::MAX_DEADLINE_SECS;
use std::time::Duration;

/// A claim never outlives its request's deadline by more than this.
pub const DEADLINE_GRACE_MS: u64 = 30_000;
/// Heartbeats are never more frequent than this...
pub const MIN_HEARTBEAT: Duration = Duration::from_secs(1);
/// ...nor rarer than this.
pub const MAX_HEARTBEAT: Duration = Duration::from_secs(30);

/// The last moment any claim of a request due at `deadline` (Unix seconds,
/// [`crate::wire::member_deadline`]) may last: deadline + [`DEADLINE_GRACE_MS`];
/// `None` for a member whose deadline cannot be read. A deadline beyond
/// [`MAX_DEADLINE_SECS`] or below 1 counts as unreadable (the member is
/// answered `INVALID_REQUEST`), so the result stays far below 2^53 ms.
fn lease_cap(deadline: Option<i64>) -> Option<Millis> {
    let secs = deadline.filter(|d| (1..=MAX_DEADLINE_SECS).contains(d))?;
    Some(Millis(secs as u64 * 1000).plus(DEADLINE_GRACE_MS))
}

/// Lease expiry of a claim taken or renewed at `now`:
/// `min(now + ttl, deadline + 30 s)`, the deadline being the member's
/// `data.deadline` ([`crate::wire::member_deadline`]), never its pending
/// score: a score far below the deadline (0, -inf, a producer scoring by
/// creation time) changes the order, not the lease. A member whose deadline
/// cannot be read gets `now + ttl` (it is answered `INVALID_REQUEST` right
/// after its claim; the TTL is bounded by the configuration).
///
/// The deadline cap means a claim of a request nobody can still serve in time
/// does not hold it hostage for a whole TTL after its owner dies.
pub fn lease_expiry(now: Millis, ttl_ms: u64, deadline: Option<i64>) -> Millis {
    let by_ttl = now.plus(ttl_ms);
    lease_cap(deadline).map_or(by_ttl, |cap| by_ttl.min(cap))
}

/// [`lease_expiry`] of a claim of `member`, its deadline read by
/// [`crate::wire::member_deadline`] ([`Member::deadline`]).
pub fn member_lease_expiry(now: Millis, ttl_ms: u64, member: &Member) -> Millis {
    lease_expiry(now, ttl_ms, member.deadline())
}

/// Expiry of a terminal marker written at `now` where no other copy of the
/// generation is left (the holder's own ack, the reclaimer's delivery-limit
/// record): the dedup TTL past now.
///
/// Nothing else can answer such a generation: its claim is dropped and its
/// pending copies are taken in the same atomic step, so a stale owner's late
/// ack finds it nowhere and is suppressed without the marker. The marker
/// only has to outlive what comes back within a short window: a retried ack
/// whose first attempt's outcome was unknown, and a producer resubmitting
/// the same bytes. Its lifetime is bounded by the protocol, not by the
/// request's deadline (docs/RELIABILITY.md, "Where a marker is written").
pub fn marker_expiry(now: Millis, dedup_ttl_ms: u64) -> Millis {
    now.plus(dedup_ttl_ms)
}

/// Expiry of a terminal marker written at `now` while another owner still
/// holds a claim of the generation (a stale owner answered first), or before
/// the caller's own claim is dropped in a second step (the cross-slot ack):
/// the dedup TTL past the later of now and the last moment any claim of it
/// can last (deadline + [`DEADLINE_GRACE_MS`], `deadline` being the member's
/// `data.deadline`, not its pending score); the dedup TTL past now when the
/// deadline cannot be read (its claims get now + TTL, see [`lease_expiry`]).
///
/// That claim's holder may still ack, renew or lapse: its ack, the release
/// or retry that ends it, and a reclaimer finding it expired must all see
/// the generation answered for as long as the claim can exist, however long
/// the request waited in a backlog first.
pub fn marker_expiry_beside_a_claim(
    now: Millis,
    dedup_ttl_ms: u64,
    deadline: Option<i64>,
) -> Millis {
    let from = lease_cap(deadline).map_or(now, |cap| now.max(cap));
    from.plus(dedup_ttl_ms)
}

/// How often a holder renews its leases: ttl / 3, clamped to 1 s..30 s.
///
/// Three renewals fit in one TTL, so a single slow or failed heartbeat does
/// not cost the lease.
pub fn heartbeat_interval(ttl: Duration) -> Duration {
    (ttl / 3).clamp(MIN_HEARTBEAT, MAX_HEARTBEAT)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = Millis(1_700_000_000_000);

    /// The lease a 300 s TTL gives at `NOW` to a member due at `deadline_secs`.
    fn lease_for(deadline_secs: i64) -> Millis {
        lease_expiry(NOW, 300_000, Some(deadline_secs))
    }

    #[test]
    fn lease_is_now_plus_ttl_when_the_deadline_is_far() {
        assert_eq!(lease_for(1_700_010_000), NOW.plus(300_000));
    }

    #[test]
    fn lease_stops_thirty_seconds_after_a_near_deadline() {
        assert_eq!(lease_for(1_700_000_010), Millis(1_700_000_040_000));
    }

    #[test]
    fn lease_at_the_exact_crossover_is_the_same_either_way() {
        assert_eq!(lease_for(1_700_000_270), NOW.plus(300_000));
    }

    #[test]
    fn lease_of_a_long_expired_deadline_is_already_over() {
        assert!(lease_for(1_600_000_000) < NOW);
    }

    #[test]
    fn lease_never_overflows() {
        let far = Millis(u64::MAX - 5);
        assert_eq!(lease_expiry(far, 300_000, Some(i64::MAX)), Millis(u64::MAX));
    }

    #[test]
    fn the_deadline_is_read_from_data_deadline_alone_floored_and_none_when_out_of_range() {
        use crate::wire::member_deadline;
        let with = |d: &str| {
            let json = format!(r#"{{"internal":{{}},"data":{{"id":"x","deadline":{d}}}}}"#);
            member_deadline(json.as_bytes())
        };
        assert_eq!(with("1700000000"), Some(1_700_000_000));
        assert_eq!(with("1700000000.9"), Some(1_700_000_000));
        assert_eq!(with("1, \"deadline\": 2"), Some(2), "the last key wins");
        assert_eq!(with("253402300799"), Some(MAX_DEADLINE_SECS));
        for bad in [
            "253402300800",
            "9223372036854775807",
            "1e300",
            "0",
            "-5",
            "null",
            "\"5\"",
            "[1]",
        ] {
            assert_eq!(with(bad), None, "{bad}");
        }
        assert_eq!(member_deadline(b"not json"), None);
        assert_eq!(member_deadline(br#"{"data":[1]}"#), None);
        assert_eq!(
            member_deadline(br#"{"deadline":5}"#),
            None,
            "only data.deadline"
        );
    }

    #[test]
    fn a_deadline_that_cannot_be_read_or_is_out_of_range_gives_now_plus_ttl() {
        for deadline in [
            None,
            Some(0),
            Some(-5),
            Some(MAX_DEADLINE_SECS + 1),
            Some(i64::MAX),
        ] {
            assert_eq!(lease_expiry(NOW, 300_000, deadline), NOW.plus(300_000));
        }
    }

    #[test]
    fn the_latest_deadline_gives_a_lease_and_marker_below_two_to_the_fifty_three_ms() {
        let far = Some(MAX_DEADLINE_SECS);
        let limit = 1u64 << 53;
        assert_eq!(lease_expiry(NOW, 300_000, far), NOW.plus(300_000));
        let marker = marker_expiry_beside_a_claim(NOW, 3_600_000, far);
        assert_eq!(
            marker,
            Millis(MAX_DEADLINE_SECS as u64 * 1000 + DEADLINE_GRACE_MS + 3_600_000)
        );
        assert!(marker.0 < limit);
        let huge = marker_expiry_beside_a_claim(NOW, 3_600_000, Some(i64::MAX));
        assert_eq!(huge, NOW.plus(3_600_000));
    }

    #[test]
    fn a_marker_beside_a_claim_outlives_a_far_deadline_plus_the_grace_by_the_dedup_ttl() {
        let day = 86_400_000;
        let deadline = Some((NOW.0 + day) as i64 / 1000);
        assert_eq!(
            marker_expiry_beside_a_claim(NOW, 3_600_000, deadline),
            NOW.plus(day + DEADLINE_GRACE_MS + 3_600_000)
        );
        let past = Some(1_600_000_000);
        assert_eq!(
            marker_expiry_beside_a_claim(NOW, 3_600_000, past),
            NOW.plus(3_600_000)
        );
        assert_eq!(
            marker_expiry_beside_a_claim(NOW, 3_600_000, None),
            NOW.plus(3_600_000)
        );
    }

    #[test]
    fn heartbeat_is_a_third_of_the_ttl_between_the_clamps() {
        assert_eq!(
            heartbeat_interval(Duration::from_secs(30)),
            Duration::from_secs(10)
        );
        assert_eq!(
            heartbeat_interval(Duration::from_secs(3)),
            Duration::from_secs(1)
        );
        assert_eq!(
            heartbeat_interval(Duration::from_secs(90)),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn heartbeat_clamps_at_both_edges() {
        assert_eq!(
            heartbeat_interval(Duration::from_millis(2_999)),
            MIN_HEARTBEAT
        );
        assert_eq!(heartbeat_interval(Duration::ZERO), MIN_HEARTBEAT);
        assert_eq!(heartbeat_interval(Duration::from_secs(300)), MAX_HEARTBEAT);
        assert_eq!(heartbeat_interval(Duration::from_secs(91)), MAX_HEARTBEAT);
    }

    #[test]
    fn a_marker_with_no_other_copy_left_lives_the_dedup_ttl_whatever_the_deadline() {
        assert_eq!(marker_expiry(NOW, 3_600_000), NOW.plus(3_600_000));
        let day_away = Some((NOW.0 + 86_400_000) as i64 / 1000);
        assert!(
            marker_expiry(NOW, 3_600_000) < marker_expiry_beside_a_claim(NOW, 3_600_000, day_away)
        );
    }
}
