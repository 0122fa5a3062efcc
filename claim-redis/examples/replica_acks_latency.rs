//! Measures claim + ack latency on a private test cluster with `replica_acks` 0 and 1 (the numbers quoted in docs/OPERATIONS.md, "Topologies"): `cargo run -p claim-redis --example replica_acks_latency --release`.

use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, StoreConfig, Submission};
use claim_core::{ClaimProducer, ClaimStore, Generation, Member, OwnerToken};
use claim_redis::testing::{RedisCluster, random_prefix};
use claim_redis::{RedisStore, RedisStoreOptions, Topology};
use std::time::{Duration, Instant};

const ROUNDS: usize = 400;
const BATCH: usize = 10;

/// A member shaped like the Go producer's.
fn member(id: &str, deadline: i64) -> Vec<u8> {
    format!(
        r#"{{"internal":{{"request_token":"t","request_queue_name":"q","result_queue_name":"results"}},"request_kind":"redis","data":{{"id":"{id}","created":0,"deadline":{deadline},"payload":{{"model":"m","prompt":"{id}"}}}}}}"#
    )
    .into_bytes()
}

async fn run(cluster: &RedisCluster, replica_acks: u32) -> Vec<Duration> {
    let options = RedisStoreOptions {
        key_prefix: random_prefix(),
        replica_acks,
        topology: Topology::Cluster {
            seeds: cluster.seeds(),
        },
        ..RedisStoreOptions::new(cluster.url(), StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    let owner = OwnerToken::new("bench");
    let deadline = 4_000_000_000;
    let mut samples = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let reqs: Vec<ClaimRequest> = (0..BATCH)
            .map(|i| {
                let id = format!("r{round}-{i}");
                ClaimRequest {
                    member: Member::from(member(&id, deadline)),
                    generation: Generation::new(&id, "t"),
                }
            })
            .collect();
        for r in &reqs {
            let s = Submission {
                member: r.member.clone(),
                generation: r.generation.clone(),
                deadline,
                payload: None,
            };
            store.submit("q", &s).await.expect("submit");
        }
        let started = Instant::now();
        let claimed = store.claim(owner.on("q"), &reqs).await.expect("claim");
        let items: Vec<AckItem> = reqs
            .iter()
            .zip(&claimed)
            .map(|(r, c)| {
                let ClaimOutcome::Claimed { score, .. } = c else {
                    panic!("not claimed: {c:?}")
                };
                AckItem {
                    generation: r.generation.clone(),
                    member: r.member.clone(),
                    score: *score,
                    result_list: "results".into(),
                    record: claim_core::Record::from(
                        format!(r#"{{"id":"{}"}}"#, r.generation.id).into_bytes(),
                    ),
                    payload_ref: None,
                    result_ttl_seconds: 0,
                }
            })
            .collect();
        store.ack(owner.on("q"), &items).await.expect("ack");
        samples.push(started.elapsed());
    }
    let stats = store.replica_ack_stats();
    println!(
        "replica_acks={replica_acks}: waits {} shortfalls {}",
        stats.waits, stats.shortfalls
    );
    samples
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "{name}: claim+ack of {BATCH} (one batch each): mean {:.2} ms, p50 {:.2} ms, p99 {:.2} ms",
        mean.as_secs_f64() * 1e3,
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
}

#[tokio::main]
async fn main() {
    let cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .unwrap()
        .expect("start a private cluster");
    // Warm up, then alternate so both see the same machine load.
    let _ = run(&cluster, 0).await;
    let zero = run(&cluster, 0).await;
    let one = run(&cluster, 1).await;
    report("replica_acks=0", zero);
    report("replica_acks=1", one);
}
