//! `park_retry`: runs `lua/park_retry.lua`, one call per [`MAX_BATCH`](crate::state::MAX_BATCH) items, into the queue's retry set (an answered generation's claim is dropped, nothing parked); hash-tagged: `cluster::park_retry`.
//!
//! Plain layout: the queue's retry set is the shared one (Go's).

use super::cluster;
use super::owner_flags::OwnerScript;
use crate::codec::score_arg;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::store::ParkItem;
use claim_core::{Op, OwnerToken, StoreError};

pub(crate) async fn park_retry(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ParkItem],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let keys: [&str; 5] = [&q.claimed, &q.owners, &q.index, &q.deliveries, &q.retry];
    let park = OwnerScript {
        op: Op::ParkRetry,
        script: &store.scripts().park_retry,
        queue,
        keys: &keys,
        generation: |i: &ParkItem| &i.generation,
        args: |call, item| {
            call.arg(item.generation.claim_key())
                .arg(item.member.as_bytes())
                .arg(score_arg(item.due.as_score()));
        },
    };
    match store.layout() {
        KeyLayout::Plain => park.run(store, owner, items).await,
        KeyLayout::HashTagged => cluster::park_retry::park_retry(store, &park, owner, items).await,
    }
}
