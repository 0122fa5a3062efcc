//! `retry_now`: runs `lua/retry_now.lua` on one parked retry, promoting it now by the promoter's rules; the hash-tagged layout: `cluster::retry_now`.

use super::call::Call;
use super::cluster;
use super::retry_target::{Target, bury_args, outcome, promote_args, target};
use crate::codec::dead_json;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Member, Op, RetryNow, StoreError};

const OP: Op = Op::RetryNow;

pub(crate) async fn retry_now(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    match store.layout() {
        KeyLayout::Plain => plain(store, member).await,
        KeyLayout::HashTagged => cluster::retry_now::retry_now(store, member).await,
    }
}

/// One script call on the shared retry set, the default queue's dead
/// hash and the destination queue's keys (all on the one server).
async fn plain(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    let now = store.now_ms(OP).await?;
    let keys = store.keys();
    let dead = keys.queue(&store.inner.config.default_queue).dead;
    let mut call = Call::new(store, &store.scripts().retry_now);
    call.key(keys.retry()).key(&dead);
    match target(store, member.as_bytes()) {
        Target::Promote {
            queue,
            score,
            generation,
            ..
        } => {
            let dest = keys.queue(&queue);
            call.key(dest.pending)
                .key(dest.deliveries)
                .key(keys.marker(&generation));
            promote_args(&mut call, member.as_bytes(), score, &generation);
        }
        Target::Bury { reason } => {
            tracing::warn!(dead = %dead, "retry entry cannot be promoted: moving it to the dead set");
            call.key(&dead).key(&dead).key(&dead);
            bury_args(&mut call, member.as_bytes(), &dead_json(&reason, now));
        }
    }
    call.arg(now.0).arg(keys.prefix().len());
    let code: i64 = call.run(store, OP).await?;
    let outcome = outcome(code);
    tracing::info!(?outcome, "parked retry promoted by an operator");
    Ok(outcome)
}
