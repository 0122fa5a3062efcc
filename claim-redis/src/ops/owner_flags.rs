//! The call shape `release` (and `sweep`) and `park_retry` share: an owner-checked script per [`MAX_BATCH`](crate::state::MAX_BATCH) items answering one 0/1 flag per item; the plain layout's loop here, the hash-tagged one (markers read first) in `cluster::answered`.

use super::batches::in_batches;
use super::call::Call;
use crate::codec::{flag, per_item};
use crate::state::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError};
use redis::Script;

/// One owner-checked script and how its items are written: `keys`, then
/// each item's terminal marker key (`marker_for` with the pending key: the
/// marker, or in the hash-tagged layout its copy in the queue's slot), the
/// owner token, the time, each item's arguments (written by `args`) and
/// the marker values the caller read first (hash-tagged; none in the
/// plain layout).
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
        in_batches(items, |chunk| self.run_chunk(store, owner, chunk, &[])).await
    }

    /// One call on at most [`MAX_BATCH`](crate::state::MAX_BATCH) items, `markers` (one per item,
    /// or none) after their arguments; one flag per item.
    pub(crate) async fn run_chunk(
        &self,
        store: &RedisStore,
        owner: &OwnerToken,
        chunk: &[T],
        markers: &[String],
    ) -> Result<Vec<bool>, StoreError> {
        let pending = store.keys().queue(self.queue).pending;
        let mut call = Call::new(store, self.script);
        for key in self.keys {
            call.key(*key);
        }
        for item in chunk {
            call.key(store.keys().marker_for(&pending, (self.generation)(item)));
        }
        call.arg(owner.as_str()).arg(store.time_arg());
        for item in chunk {
            (self.args)(&mut call, item);
        }
        for marker in markers {
            call.arg(marker.as_str());
        }
        let reply: Vec<i64> = call.run(store, self.op).await?;
        Ok(per_item(self.op, reply, chunk.len())?
            .into_iter()
            .map(flag)
            .collect())
    }
}
