//! `submit`: enqueues the member bytes as given, as the Go producer does, in one MULTI; the hash-tagged layout: `cluster::submit`.

use super::cluster;
use super::producer_writes::producer_writes;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Op, StoreError};

/// One MULTI, as Go: DEL `request-cancel:<id>`, SET `request-active:<id>`
/// to the token until the deadline (at least 1 s), SET the payload stored
/// apart when there is one, ZADD the member at its score.
pub(crate) async fn submit(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    match store.layout() {
        KeyLayout::Plain => plain(store, queue, s).await,
        KeyLayout::HashTagged => cluster::submit::submit(store, queue, s).await,
    }
}

async fn plain(store: &RedisStore, queue: &str, s: &Submission) -> Result<(), StoreError> {
    let mut pipe = redis::pipe();
    pipe.atomic();
    producer_writes(store, s, &mut pipe);
    pipe.zadd(
        store.keys().queue(queue).pending,
        s.member.as_bytes(),
        s.score().0,
    )
    .ignore();
    store
        .conn()
        .query::<()>(Op::Submit, Effect::Transaction, &pipe)
        .await
}
