//! `ping`: a PING, to check the server answers.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

pub(crate) async fn ping(store: &RedisStore) -> Result<(), StoreError> {
    let ping = redis::cmd("PING");
    let _: String = store.conn().query(Op::Ping, Effect::Read, &ping).await?;
    Ok(())
}
