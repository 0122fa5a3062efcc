//! `ListReads`: reads of a whole result list (every record, the TTL an ack set), which neither the runtime nor an operator command makes, and their forwarding through layers.
//!
//! A consumer takes records with `BRPOP`; only a test, a tool or the demo's
//! tally reads a list whole. So these reads are kept out of the worker's
//! and the inspector's traits ([`crate::ClaimStore`], [`crate::ClaimInspect`]):
//! a store implements them beside those, and a [`StoreLayer`] forwards them
//! when the store it wraps has them.

use crate::error::Result;
use crate::layer::{StoreLayer, async_trait};
use crate::op::Op;
use crate::stored::Record;

/// Whole-list reads for tests, tools and the demo. See the module docs.
#[async_trait]
pub trait ListReads: Send + Sync + std::fmt::Debug + 'static {
    /// The records in a result list, oldest first (the order BRPOP yields).
    async fn results(&self, list: &str) -> Result<Vec<Record>>;

    /// The expiry an ack set on a result list (`result_ttl_seconds`), in
    /// seconds: what remains of it on Redis (`TTL`), the value set in the
    /// model; `None` when the list has none.
    async fn list_ttl(&self, list: &str) -> Result<Option<u64>>;
}

/// Through [`StoreLayer::around`], as every forwarded call: a fault layer
/// fails these reads too, a retrying one retries them.
#[async_trait]
impl<L: StoreLayer> ListReads for L
where
    L::Inner: ListReads,
{
    async fn results(&self, list: &str) -> Result<Vec<Record>> {
        self.around(Op::Results, &move || self.inner().results(list))
            .await
    }

    async fn list_ttl(&self, list: &str) -> Result<Option<u64>> {
        self.around(Op::ListTtl, &move || self.inner().list_ttl(list))
            .await
    }
}
