//! The arguments a script takes alike in both layouts (ack.lua's and claim.lua's per-item blocks, enqueue.lua's expiries), written here once for the plain operation and its `ops::cluster` counterpart.

use super::call::Call;
use super::producer_writes::{active_expiry, payload_expiry};
use crate::state::RedisStore;
use claim_core::marker::record_digest;
use claim_core::store::{AckItem, ClaimRequest, Submission};
use claim_core::{ClaimKey, Millis, OwnerToken, wire};
use redis::RedisWrite;
use std::borrow::Borrow;

/// Consecutive items with the same result list and list TTL, as (list,
/// item count, TTL): ack.lua pushes each run with one LPUSH (and one
/// EXPIRE when the TTL is set) and takes each list key once.
pub(crate) fn ack_runs<T: Borrow<AckItem>>(items: &[T]) -> Vec<(&str, usize, u64)> {
    let mut runs: Vec<(&str, usize, u64)> = Vec::new();
    for item in items.iter().map(Borrow::borrow) {
        let item_ttl = claim_core::routing::clamp_ttl(item.result_ttl_seconds);
        match runs.last_mut() {
            Some((list, count, ttl)) if *list == item.result_list && *ttl == item_ttl => {
                *count += 1
            }
            _ => runs.push((&item.result_list, 1, item_ttl)),
        }
    }
    runs
}

/// The bytes an ack.lua call's arguments take, about.
pub(crate) fn ack_bytes<T: Borrow<AckItem>>(chunk: &[T]) -> usize {
    chunk
        .iter()
        .map(Borrow::borrow)
        .map(|i| i.record.len() + i.member.len() + 240)
        .sum()
}

/// ack.lua's KEYS for each run's result list, prefixed.
pub(crate) fn ack_list_keys(cmd: &mut redis::Cmd, store: &RedisStore, runs: &[(&str, usize, u64)]) {
    for (list, _, _) in runs {
        cmd.write_arg_fmt(format_args!("{}{list}", store.keys().prefix()));
    }
}

/// ack.lua's ARGV from the owner through the record digests (both
/// variants; the plain one adds the payload indices after them).
pub(crate) fn ack_args<T: Borrow<AckItem>>(
    cmd: &mut redis::Cmd,
    store: &RedisStore,
    (queue, owner): (&str, &OwnerToken),
    runs: &[(&str, usize, u64)],
    chunk: &[T],
) {
    let items = || chunk.iter().map(Borrow::borrow);
    cmd.arg(owner.as_str())
        .arg(store.time_arg())
        .arg(store.inner.config.result_dedup_ttl_ms)
        .arg(store.ttl_slack())
        .arg(runs.len())
        .arg(store.keys().prefix().len());
    for (list, count, ttl) in runs {
        let refusal = store.list_refusal(queue, list);
        cmd.arg(*count)
            .arg(refusal.as_deref().unwrap_or(""))
            .arg(*ttl);
    }
    for item in items() {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
    }
    for item in items() {
        cmd.arg(&item.generation.token);
    }
    for item in items() {
        cmd.arg(item.record.as_bytes());
    }
    for item in items() {
        cmd.arg(item.member.as_bytes());
    }
    for item in items() {
        // The marker lives from the member's deadline, not its pending
        // score (which a producer may set to anything, ±inf included).
        cmd.arg(item.member.deadline().unwrap_or(0));
    }
    for item in items() {
        cmd.arg(record_digest(item.record.as_bytes()));
    }
}

/// The ARGV both claim scripts take per item, in blocks: every member, then
/// every claim key, then every request token, then every deadline (the
/// lease follows it, not the score: [`wire::member_deadline`], 0 when it
/// cannot be read).
pub(crate) fn claim_item_args(cmd: &mut redis::Cmd, chunk: &[ClaimRequest]) {
    for item in chunk {
        cmd.arg(item.member.as_bytes());
    }
    for item in chunk {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
    }
    for item in chunk {
        cmd.arg(&item.generation.token);
    }
    for item in chunk {
        cmd.arg(item.member.deadline().unwrap_or(0));
    }
}

/// enqueue.lua's ARGV up to the payload: the member template around the
/// sequence, the deadline, the sequence key's expiry, the token and the
/// active key's expiry (explicit time: the logical times too).
pub(crate) fn enqueue_args(
    call: &mut Call<'_>,
    store: &RedisStore,
    s: &Submission,
    template: &wire::SeqTemplate,
    now: Millis,
) {
    let explicit = store.explicit_now().is_some();
    let (expiry, ttl) = active_expiry(store, now, s.deadline);
    call.arg(&template.prefix[..])
        .arg(&template.suffix[..])
        .arg(s.deadline);
    let seq_expiry = s.deadline.saturating_add(wire::SEQ_GRACE_SECS);
    let seq_logical = Millis((seq_expiry.max(0) as u64).saturating_mul(1000));
    if explicit {
        // Redis expires on its own clock: keep the counter for its logical
        // lifetime, measured on the explicit clock, plus the usual slack
        // (the script restarts it once the logical expiry has passed).
        call.arg("PEXPIRE")
            .arg(store.real_ttl(now.until(seq_logical)));
    } else {
        call.arg("EXPIREAT").arg(seq_expiry);
    }
    call.arg(&s.generation.token)
        .arg(ttl)
        .arg(explicit_ms(store, expiry))
        .arg(explicit_ms(store, now))
        .arg(explicit_ms(store, seq_logical));
}

/// enqueue.lua's payload ARGV (plain layout, when the submission stores
/// one apart): the payload, its PX and its logical expiry.
pub(crate) fn enqueue_payload_args(
    call: &mut Call<'_>,
    store: &RedisStore,
    s: &Submission,
    now: Millis,
) {
    if let Some(payload) = s.payload.as_ref() {
        let (expiry, ttl) = payload_expiry(store, now, s.deadline);
        call.arg(payload.as_bytes())
            .arg(ttl)
            .arg(explicit_ms(store, expiry));
    }
}

/// A time in ms as an argument in explicit-time mode, else "".
fn explicit_ms(store: &RedisStore, ms: Millis) -> String {
    match store.explicit_now() {
        Some(_) => ms.0.to_string(),
        None => String::new(),
    }
}
