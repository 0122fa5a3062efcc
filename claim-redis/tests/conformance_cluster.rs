//! The claim-core conformance suite and the model-based test on a real Redis Cluster (three primaries, one replica each) through `Topology::Cluster`: the same checks, passes and counts as `conformance.rs` on one node, with the hash-tagged layout.
//!
//! One cluster serves the whole test binary (`RedisCluster::shared`); each
//! store gets a fresh random key prefix. The factory is `tests/suite`'s
//! and the lists are `claim_conformance::run`'s. The servers refuse
//! any call whose keys span slots (CROSSSLOT) and the store checks each
//! call before sending, so a passing check also proves its calls stay in
//! one slot.

mod common;
mod suite;

use suite::Redis;

fn main() {
    // Fewer model-based cases than on one server (32): every call crosses
    // the network to three primaries, and the same walks run in full on the
    // hash-tagged layout (`conformance_tagged.rs`); these confirm the real
    // cluster agrees.
    let options = suite::options(|| Box::pin(Redis::cluster_on_server_time()), 10);
    claim_conformance::run(Redis::cluster, options)
}
