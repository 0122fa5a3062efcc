//! `fetch_payloads`: reads the payloads stored apart for a batch, one MGET.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::{Member, Op, StoreError};

/// The values at the (prefixed) payload keys, in order; `None` where missing.
pub(crate) async fn fetch_payloads(
    store: &RedisStore,
    refs: &[String],
) -> Result<Vec<Option<Member>>, StoreError> {
    if refs.is_empty() {
        return Ok(Vec::new());
    }
    let mut cmd = redis::cmd("MGET");
    for r in refs {
        cmd.arg(store.keys().payload(r));
    }
    let values: Vec<Option<Vec<u8>>> = store
        .conn()
        .query(Op::FetchPayloads, Effect::Read, &cmd)
        .await?;
    if values.len() != refs.len() {
        return Err(crate::conn::bad_reply(
            Op::FetchPayloads,
            Effect::Read,
            format!(
                "MGET of {} keys answered {} values",
                refs.len(),
                values.len()
            ),
        ));
    }
    Ok(values.into_iter().map(|v| v.map(Member::from)).collect())
}
