//! What `reclaim_expired` does alike in both layouts: the index repaired when it disagrees, then passes of expired claims chosen in the model's order, each handed to the layout's second phase, and the report.
//!
//! A cheap consistency check (ZCARD of the index against HLEN of the
//! claims) decides whether the index needs a repair scan.

use super::repair_index::repair_index;
use crate::codec::score_arg;
use crate::conn::Effect;
use crate::keys::QueueKeys;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::store::ReclaimReport;
use claim_core::{Generation, Millis, Op, Score, StoreError};
use std::future::Future;

const OP: Op = Op::ReclaimExpired;

/// `(store, queue, q, now, chosen)`: one pass's chosen expired claims
/// (claim keys) of `queue` (its keys `q`), at `now`.
pub(crate) type Pass<'a> = (&'a RedisStore, &'a str, &'a QueueKeys, Millis, &'a [String]);

/// What a pass's second phase answers: `[redelivered, dead-lettered,
/// ghosts repaired]`.
pub(crate) type PassCounts = Result<[usize; 3], StoreError>;

/// One layout's second phase of a pass: the chosen claims redelivered,
/// dead-lettered or dropped as ghosts.
pub(crate) trait ReclaimChosen {
    fn reclaim_chosen(pass: Pass<'_>) -> impl Future<Output = PassCounts> + Send + '_;
}

/// Reclaims up to `limit` expired claims of `queue`, in passes of
/// [`MAX_BATCH`] chosen in the model's order, each pass's second phase run
/// by `L`; repairs the index first when it disagrees.
pub(crate) async fn reclaim_in_passes<L: ReclaimChosen>(
    store: &RedisStore,
    queue: &str,
    limit: usize,
) -> Result<ReclaimReport, StoreError> {
    let now = store.now_ms(OP).await?;
    let q = store.keys().queue(queue);
    let mut report = ReclaimReport {
        ghosts_repaired: repair_index(store, &q).await?,
        ..ReclaimReport::default()
    };
    let until = score_arg(now.as_score());
    if limit == 0 {
        report.more = !expired(store, &q, &until, 1).await?.is_empty();
        return Ok(report);
    }
    let mut remaining = limit;
    while remaining > 0 {
        let want = remaining.min(MAX_BATCH);
        let (chosen, more) = choose(store, &q, &until, want).await?;
        if chosen.is_empty() {
            break;
        }
        let pass = (store, queue, &q, now, chosen.as_slice());
        let [redelivered, dead, ghosts] = L::reclaim_chosen(pass).await?;
        report.redelivered += redelivered;
        report.dead_lettered += dead;
        report.ghosts_repaired += ghosts;
        remaining -= chosen.len();
        report.more = more && remaining == 0;
        if !more {
            break;
        }
    }
    if report.redelivered + report.dead_lettered > 0 {
        tracing::info!(
            queue,
            redelivered = report.redelivered,
            dead_lettered = report.dead_lettered,
            "reclaimed expired claims"
        );
    }
    Ok(report)
}

/// Up to `count` index entries expired by `until`, in index order.
async fn expired(
    store: &RedisStore,
    q: &QueueKeys,
    until: &str,
    count: usize,
) -> Result<Vec<(String, f64)>, StoreError> {
    let cmd = redis::cmd("ZRANGEBYSCORE")
        .arg(&q.index)
        .arg("-inf")
        .arg(until)
        .arg("WITHSCORES")
        .arg("LIMIT")
        .arg(0)
        .arg(count)
        .to_owned();
    store.conn().query(OP, Effect::Read, &cmd).await
}

/// The first `want` expired claims in the model's order (lease expiry,
/// then generation by id and token), and whether more are expired. The
/// index orders ties by key bytes instead, so a tie group crossing the
/// cut is read whole and sorted here.
async fn choose(
    store: &RedisStore,
    q: &QueueKeys,
    until: &str,
    want: usize,
) -> Result<(Vec<String>, bool), StoreError> {
    let mut found = expired(store, q, until, want + 1).await?;
    let more = found.len() > want;
    if more && found[want].1 == found[want - 1].1 {
        let tie = found[want].1;
        found.retain(|(_, s)| *s < tie);
        let group = redis::cmd("ZRANGEBYSCORE")
            .arg(&q.index)
            .arg(score_arg(Score(tie)))
            .arg(score_arg(Score(tie)))
            .to_owned();
        let group: Vec<String> = store.conn().query(OP, Effect::Read, &group).await?;
        found.extend(group.into_iter().map(|g| (g, tie)));
    }
    let mut keyed: Vec<(Millis, Generation, String)> = found
        .into_iter()
        .map(|(key, s)| {
            let g = Generation::from_claim_key(&key);
            (Score(s).as_millis(), g, key)
        })
        .collect();
    keyed.sort();
    keyed.truncate(want);
    Ok((keyed.into_iter().map(|(_, _, key)| key).collect(), more))
}

/// Phase one's answer: each chosen claim's owner entry and member, `None`
/// where the claim is gone.
pub(crate) type OwnersAndMembers = (Vec<Option<Vec<u8>>>, Vec<Option<Vec<u8>>>);

/// Phase one's reads for `chosen` (one pipelined round trip, sent by the
/// layout's reclaim): each claim's owner entry and member. The member
/// names the payload key the script deletes if the generation turns out
/// answered. It is read for every item, not only for those whose marker
/// looked live here: a stale owner's ack landing between this read and
/// the script makes the script drop the claim as answered, and without
/// the key its payload was left behind (chaos seed 393283305 found one).
pub(crate) fn owner_and_member_reads(q: &QueueKeys, chosen: &[String]) -> redis::Pipeline {
    let mut reads = redis::pipe();
    reads
        .cmd("HMGET")
        .arg(&q.owners)
        .arg(chosen)
        .cmd("HMGET")
        .arg(&q.claimed)
        .arg(chosen);
    reads
}
