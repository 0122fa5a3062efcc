//! `push_once`: runs `lua/push_once.lua`, terminal records pushed to one result list at most once per generation, in the list's slot.
//!
//! The cross-slot half of an ack (`ops/ack_cluster.rs`) and of the
//! reclaimer's `DELIVERY_LIMIT` record when the result list hashes to
//! another slot than the queue: the terminal marker lives in the list's
//! slot ([`crate::keys::Keys::marker_for`]), so marker check, push, marker
//! and expiry are one script there.

use crate::conn::Effect;
use crate::conn::bad_reply;
use crate::ops::call::{self, evalsha};
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Op, StoreError};
use redis::Value;

/// One record to push.
pub(crate) struct PushItem<'a> {
    pub generation: &'a Generation,
    pub record: &'a [u8],
    /// `claim_core::marker::record_digest(record)`.
    pub digest: &'a str,
    /// The member's `data.deadline` ([`claim_core::wire::member_deadline`],
    /// never its pending score) where another owner may hold the
    /// generation's claim (the caller's fence found it not holding): the
    /// marker then outlives any claim of it, this plus the lease cap plus
    /// the dedup TTL. 0 where the caller's claim is the only one and is
    /// dropped next (the ack's step (c), the reclaimer's script), and for
    /// a deadline that cannot be read: the marker lives the dedup TTL
    /// (`claim_core::lease::marker_expiry`), and a crash before that drop
    /// leaves a lapsing claim the reclaimer ends on this marker.
    pub other_claim_deadline: i64,
}

/// What happened to one item.
// `Pushed::Pushed` is the name the callers were promised.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Pushed, with its marker.
    Pushed,
    /// A live marker holds this very record's digest: an earlier attempt
    /// landed (a resent or retried call); nothing pushed again.
    OwnRecordLanded,
    /// A live marker of another record: the generation is answered.
    Suppressed,
    /// The list cannot take a record (the reason says why, e.g. `result
    /// list "x" holds a zset`); nothing written, no marker.
    Unusable(String),
}

/// Pushes each item's record onto `list` (the result list's name as
/// configured, without the store's key prefix, as `AckItem::result_list`)
/// unless its generation has a live marker; `ttl_seconds` > 0 sets the
/// list's EXPIRE after a push. One script call per [`MAX_BATCH`] items,
/// every key in the list's slot. Errors name [`Op::Ack`].
// Callers: the cross-slot ack, and the reclaimer's DELIVERY_LIMIT records
// in the hash-tagged layout.
pub(crate) async fn push_once(
    store: &RedisStore,
    list: &str,
    ttl_seconds: u64,
    items: &[PushItem<'_>],
) -> Result<Vec<Pushed>, StoreError> {
    let all = push_checked(store, Op::Ack, list, ttl_seconds, None, items, |_| true).await?;
    Ok(all
        .into_iter()
        .map(|a| a.pushed.unwrap_or(Pushed::Suppressed))
        .collect())
}

/// [`push_checked`]'s answer for one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PushAnswer {
    /// `None`: the item was not allowed to push and found no live marker.
    pub pushed: Option<Pushed>,
    /// The live marker's value (`<expiry>:<digest>`) after the call, `""`
    /// when none: written by this call or found.
    pub marker: String,
}

/// [`push_once`] with the name check and a fence: `refusal` is why the
/// list's name is refused (`RedisStore::list_refusal`), and only
/// items for which `may_push(i)` holds are pushed; the others only report
/// a live marker (`pushed: None`: no live marker, nothing done).
pub(crate) async fn push_checked(
    store: &RedisStore,
    op: Op,
    list: &str,
    ttl_seconds: u64,
    refusal: Option<&str>,
    items: &[PushItem<'_>],
    may_push: impl Fn(usize) -> bool,
) -> Result<Vec<PushAnswer>, StoreError> {
    let keys = store.keys();
    let list_key = keys.list(list);
    let config = &store.inner.config;
    let time = store.time_arg();
    let script = &store.scripts().push_once;
    let mut out = Vec::with_capacity(items.len());
    for (c, chunk) in items.chunks(MAX_BATCH).enumerate() {
        let n = chunk.len();
        let bytes: usize = chunk.iter().map(|i| i.record.len() + 160).sum();
        let mut cmd = evalsha(script, 1 + n, 6 + 4 * n, bytes);
        cmd.arg(&list_key);
        for item in chunk {
            cmd.arg(keys.marker_for(&list_key, item.generation));
        }
        cmd.arg(&time)
            .arg(config.result_dedup_ttl_ms)
            .arg(store.ttl_slack())
            .arg(ttl_seconds)
            .arg(refusal.unwrap_or(""))
            .arg(keys.prefix().len());
        for (i, item) in chunk.iter().enumerate() {
            let may = may_push(c * MAX_BATCH + i);
            cmd.arg(item.record)
                .arg(item.digest)
                .arg(item.other_claim_deadline)
                .arg(if may { "1" } else { "0" });
        }
        let reply: Vec<Value> = call::run(store, op, script, &cmd).await?;
        out.extend(decode(op, &reply, n)?);
    }
    Ok(out)
}

/// `push_once.lua`'s reply: n codes, the list's refusal, n marker values.
fn decode(op: Op, reply: &[Value], n: usize) -> Result<Vec<PushAnswer>, StoreError> {
    let bad = || bad_reply(op, Effect::Write, format!("push_once answered {reply:?}"));
    if reply.len() != 2 * n + 1 {
        return Err(bad());
    }
    let text = |v: &Value| match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    };
    let reason = text(&reply[n]).ok_or_else(bad)?;
    reply[..n]
        .iter()
        .zip(&reply[n + 1..])
        .map(|(code, marker)| {
            let pushed = match code {
                Value::Int(0) => None,
                Value::Int(1) => Some(Pushed::Pushed),
                Value::Int(2) => Some(Pushed::OwnRecordLanded),
                Value::Int(3) => Some(Pushed::Suppressed),
                Value::Int(4) => Some(Pushed::Unusable(reason.clone())),
                _ => return Err(bad()),
            };
            let marker = text(marker).ok_or_else(bad)?;
            Ok(PushAnswer { pushed, marker })
        })
        .collect()
}

#[cfg(test)]
#[path = "push_once_tests.rs"]
mod tests;
