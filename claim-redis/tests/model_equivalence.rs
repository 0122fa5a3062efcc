//! Random walks through every operation, on the Redis store and the claim-core model side by side.
//!
//! After each step the answers and the whole observable state (pending,
//! claims, dead entries, retries, result lists, markers, cancels, depths)
//! must be equal. Seeded, so a failure names its seed and step.
//!
//! One pass runs on a manual clock (explicit time, with time jumps); one on
//! the server's `TIME`, which the test cannot move: there every deadline
//! lies 5–20 s ahead and the lease is two minutes, so each lease ends 30 s
//! after its deadline and each marker a dedup TTL after that, whatever the
//! exact instant a script read; retries are due long ago or far ahead. The
//! model is given the server's time before each step, and dead entries are
//! compared without their time stamp. Both passes run in the plain and in
//! the hash-tagged (Redis Cluster) key layout, where every call is checked
//! to stay in one slot.

mod common;

#[path = "model_equivalence/walk.rs"]
mod walk;

use claim_core::model::Model;
use claim_core::store::StoreConfig;
use claim_core::{ClaimStore, Clock, ManualClock};
use claim_redis::testing::RedisServerOptions;
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use common::T0;
use std::sync::Arc;
use walk::{Rng, Time, Walk, config, requests, run, server_time_config};

const SEEDS: [u64; 3] = [1, 42, 2024];

#[tokio::test]
async fn random_walks_through_every_operation_match_the_model_step_by_step() {
    manual_walks(KeyLayout::Plain).await;
}

#[tokio::test]
async fn random_walks_on_the_servers_own_time_match_the_model_step_by_step() {
    server_walks(KeyLayout::Plain).await;
}

#[tokio::test]
async fn random_walks_in_the_hash_tagged_cluster_layout_match_the_model_step_by_step() {
    manual_walks(KeyLayout::HashTagged).await;
}

#[tokio::test]
async fn random_walks_in_the_hash_tagged_cluster_layout_on_the_servers_own_time_match_the_model() {
    server_walks(KeyLayout::HashTagged).await;
}

/// `base` for `layout`: hash-tagged, the second list is also a queue's
/// configured list, so claims and reclaims look for markers there (they
/// look at every list the configuration names and the member's own).
fn for_layout(base: StoreConfig, layout: KeyLayout) -> StoreConfig {
    let mut config = base;
    if layout == KeyLayout::HashTagged {
        config
            .queue_result_lists
            .insert("elsewhere".into(), "other".into());
    }
    config
}

/// Every seed's walk on a manual clock, keys in `layout` (hash-tagged:
/// every call checked to stay in one slot).
async fn manual_walks(layout: KeyLayout) {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    for seed in SEEDS {
        let clock = ManualClock::new(T0);
        let time = TimeSource::Clock(clock.clone() as Arc<dyn Clock>);
        let options = RedisStoreOptions {
            key_layout: layout,
            ..common::options(&server.url(), for_layout(config(), layout), time)
        };
        let store = RedisStore::connect(options).await.expect("connect");
        let walk = Walk {
            store,
            model: Model::new(for_layout(config(), layout)),
            one_list_per_generation: layout == KeyLayout::HashTagged,
            time: Time::Manual(clock),
            rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            reqs: requests(T0, [-40, 45, 3600]),
        };
        run(walk, seed).await;
    }
}

/// Every seed's walk on the server's `TIME`, keys in `layout`.
async fn server_walks(layout: KeyLayout) {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    for seed in SEEDS {
        let options = RedisStoreOptions {
            key_layout: layout,
            ..common::options(
                &server.url(),
                for_layout(server_time_config(), layout),
                TimeSource::Server,
            )
        };
        let store = RedisStore::connect(options).await.expect("connect");
        let start = store.now().await.unwrap();
        let walk = Walk {
            store,
            model: Model::new(for_layout(server_time_config(), layout)),
            one_list_per_generation: layout == KeyLayout::HashTagged,
            time: Time::Server,
            rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            reqs: requests(start, [5, 12, 20]),
        };
        run(walk, seed).await;
    }
}
