//! The test-support cluster itself: it forms with three primaries and one replica each, promotes a replica when a primary is SIGKILLed, and takes the killed node back as a replica.

mod common;

use claim_redis::testing::{CLUSTER_TIMEOUT, RedisCluster, require_redis_server};

#[test]
fn a_started_cluster_has_three_primaries_promotes_a_replica_when_one_is_killed_and_takes_it_back_as_a_replica()
 {
    if require_redis_server().is_none() {
        eprintln!("skipped: redis-server not on PATH");
        return;
    }
    let mut cluster = RedisCluster::start().expect("start a private cluster");
    let primaries = cluster.primaries().expect("primaries");
    assert_eq!(primaries.len(), 3, "{primaries:?}");
    assert_eq!(cluster.seeds().len(), 6);
    let slot = cluster.key_slot("foo").expect("CLUSTER KEYSLOT");
    assert_eq!(slot, 12182);
    let old = cluster.primary_of_slot(slot).expect("owner of the slot");
    let new = cluster.kill_primary_of_slot(slot).expect("promotion");
    assert_ne!(old, new);
    assert_eq!(cluster.primary_of_slot(slot).expect("new owner"), new);
    assert_eq!(cluster.primaries().expect("primaries").len(), 3);
    // Returns once the node says it is a replica whose sync is done.
    cluster
        .restart_node(old)
        .expect("the killed node back as a synced replica");
    cluster
        .wait_healthy(CLUSTER_TIMEOUT)
        .expect("all ok, three primaries, every replica synced");
    assert_eq!(cluster.primary_of_slot(slot).expect("owner"), new);
}
