//! The claim-core conformance suite on the memory store: every check plainly and through faults (8 seeds), and the model-based tests.
//!
//! A `harness = false` target: `main` is `claim_conformance::run`.
//! `cargo test -p claim-memory --test conformance -- --list` lists every
//! trial (`plain::<file>::<check>`, `through_faults::<file>::<check>`,
//! `admin::`, `model_based::`); a name filter runs the matching ones.
//! `cargo xtask conformance --store memory` runs it with a summary per pass.

use async_trait::async_trait;
use claim_conformance::{ModelBased, Options, StoreFactory};
use claim_core::ManualClock;
use claim_core::store::StoreConfig;
use claim_memory::MemoryStore;
use std::sync::Arc;

/// Memory stores on the check's manual clock.
struct Memory;

#[async_trait]
impl StoreFactory for Memory {
    type Store = MemoryStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> MemoryStore {
        MemoryStore::with_clock(config, clock)
    }
}

fn main() {
    claim_conformance::run(
        || Some(Memory),
        Options {
            fault_seeds: &[1, 2, 3, 4, 5, 6, 7, 8],
            server_time: None,
            // 256 cases each, more if `PROPTEST_CASES` says so.
            model_based: Some(ModelBased {
                store: "memory",
                cases: 256,
            }),
        },
    )
}
