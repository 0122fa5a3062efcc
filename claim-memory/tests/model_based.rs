//! Runs the model-based property test against the memory store, plainly and through store faults behind a retrying client (256 cases each, more if `PROPTEST_CASES` says so).

use async_trait::async_trait;
use claim_core::ManualClock;
use claim_core::conformance::StoreFactory;
use claim_core::conformance::model_based::{self, FuturesDriver, Options};
use claim_core::conformance::unreliable::FaultRates;
use claim_core::store::StoreConfig;
use claim_memory::MemoryStore;
use std::sync::Arc;

struct Memory;

#[async_trait]
impl StoreFactory for Memory {
    type Store = MemoryStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> MemoryStore {
        MemoryStore::with_clock(config, clock)
    }
}

#[test]
fn the_memory_store_follows_the_model_through_random_workloads_and_drains_to_one_record_per_generation()
 {
    model_based::run(&Memory, &FuturesDriver, Options::cases(256));
}

#[test]
fn the_memory_store_follows_the_model_through_determinate_and_indeterminate_faults() {
    let options = Options::cases(256).with_faults(FaultRates::new(0.15, 0.15));
    model_based::run(&Memory, &FuturesDriver, options);
}
