//! `results`: a result list's records, oldest first (the order BRPOP yields).

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, Record, StoreError};

pub(crate) async fn results(store: &RedisStore, list: &str) -> Result<Vec<Record>, StoreError> {
    let cmd = redis::Cmd::lrange(store.keys().list(list), 0, -1);
    let records: Vec<Vec<u8>> = store.conn().query(Op::Results, Effect::Read, &cmd).await?;
    Ok(records.into_iter().rev().map(Record::from).collect())
}
