//! The claim-core conformance suite and the model-based test on the Redis store in the hash-tagged (Redis Cluster) key layout, on a private standalone server.
//!
//! The same checks, passes and counts as `tests/conformance.rs` (the
//! factory is shared, `tests/suite/mod.rs`, and the lists are
//! `claim_conformance::run`'s), with every script call and
//! multi-key command checked to stay in one cluster slot before it is
//! sent: a call that would cross slots fails the check that made it.
//! Without `redis-server` on PATH every test is skipped, unless `CI` is
//! set, when they fail.

mod common;
mod suite;

use claim_redis::KeyLayout;
use suite::Redis;

/// The Redis Cluster layout: every call in one slot.
const LAYOUT: KeyLayout = KeyLayout::HashTagged;

fn main() {
    let options = suite::options(|| Box::pin(Redis::on_server_time(LAYOUT)), 32);
    claim_conformance::run(|| Redis::start(LAYOUT), options)
}
