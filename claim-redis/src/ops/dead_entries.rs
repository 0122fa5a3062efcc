//! `dead_entries`: a queue's dead hash, each entry with its reason.

use crate::codec::parse_dead;
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::DeadEntry;
use claim_core::{Op, StoreError};

pub(crate) async fn dead_entries(
    store: &RedisStore,
    queue: &str,
) -> Result<Vec<DeadEntry>, StoreError> {
    let cmd = redis::Cmd::hgetall(store.keys().queue(queue).dead);
    let mut raw: Vec<(Vec<u8>, Vec<u8>)> = store
        .conn()
        .query(Op::DeadEntries, Effect::Read, &cmd)
        .await?;
    raw.sort();
    Ok(raw
        .into_iter()
        .map(|(member, value)| parse_dead(member, &value))
        .collect())
}
