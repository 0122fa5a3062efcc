//! The call shape `release` (and `sweep`) and `park_retry` share: an owner-checked script per [`MAX_BATCH`](crate::state::MAX_BATCH) items answering one code per item (0 not held, 1 ended, 3 ended as answered); the plain layout's loop here, the hash-tagged one (markers read first) in `cluster::answered`.

use super::batches::in_batches;
use super::call::Call;
use crate::codec::per_item;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError, wire};
use redis::Script;

/// An item's code: the caller's claim ended, dropped because its
/// generation was answered (a stale owner's ack landed first). The plain
/// scripts delete its payload key themselves; in the hash-tagged layout
/// the key lies in another slot and the caller deletes it.
pub(crate) const ENDED_ANSWERED: i64 = 3;

/// Whether an item's code says the caller's claim ended.
pub(crate) fn ended(code: i64) -> bool {
    code != 0
}

/// One owner-checked script and how its items are written: `keys`, then
/// each item's terminal marker key (`marker_for` with the pending key: the
/// marker, or in the hash-tagged layout its copy in the queue's slot),
/// in the plain layout each item's payload key and the explicit-time side
/// hash, the owner token, the time, each item's arguments (written by
/// `args`) and the marker values the caller read first (hash-tagged; none
/// in the plain layout).
pub(crate) struct OwnerScript<'a, T> {
    /// Named in errors.
    pub op: Op,
    pub script: &'a Script,
    pub queue: &'a str,
    /// The script's leading KEYS, in its header's order.
    pub keys: &'a [&'a str],
    /// Whose marker an item's is.
    pub generation: fn(&T) -> &Generation,
    /// Writes one item's ARGV.
    pub args: fn(&mut Call<'_>, &T),
}

impl<T: Sync> OwnerScript<'_, T> {
    /// Plain layout: every chunk of `items` with no marker values (the
    /// script reads each marker in KEYS itself).
    pub(crate) async fn run(
        &self,
        store: &RedisStore,
        owner: &OwnerToken,
        items: &[T],
    ) -> Result<Vec<bool>, StoreError> {
        let codes = in_batches(items, |chunk| self.run_chunk(store, owner, chunk, &[])).await?;
        Ok(codes.into_iter().map(ended).collect())
    }

    /// One call on at most [`MAX_BATCH`](crate::state::MAX_BATCH) items, `markers` (one per item,
    /// or none) after their arguments; one code per item.
    pub(crate) async fn run_chunk(
        &self,
        store: &RedisStore,
        owner: &OwnerToken,
        chunk: &[T],
        markers: &[String],
    ) -> Result<Vec<i64>, StoreError> {
        let keys = store.keys();
        let pending = keys.queue(self.queue).pending;
        let mut call = Call::new(store, self.script);
        for key in self.keys {
            call.key(*key);
        }
        for item in chunk {
            call.key(keys.marker_for(&pending, (self.generation)(item)));
        }
        if store.layout() == KeyLayout::Plain {
            for item in chunk {
                let g = (self.generation)(item);
                call.key(keys.payload(&wire::payload_key(&g.id, &g.token)));
            }
            call.key(keys.clock_side());
        }
        call.arg(owner.as_str()).arg(store.time_arg());
        for item in chunk {
            (self.args)(&mut call, item);
        }
        for marker in markers {
            call.arg(marker.as_str());
        }
        let reply: Vec<i64> = call.run(store, self.op).await?;
        per_item(self.op, reply, chunk.len())
    }
}
