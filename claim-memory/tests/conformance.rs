//! The claim-core conformance suite on the memory store: every check plainly and through faults (8 seeds), and the model-based test.
//!
//! `cargo test -p claim-memory --test conformance -- --list` lists every
//! check (`plain::<check>`, `through_faults::<check>`); a name filter runs
//! the matching ones. `cargo xtask conformance --store memory` prints one
//! line per check and `N passed, N failed`.

use async_trait::async_trait;
use claim_conformance::StoreFactory;
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

claim_conformance::conformance_tests! {
    factory: Some(Memory),
    fault_seeds: &[1, 2, 3, 4, 5, 6, 7, 8],
}

/// Random workloads against the claim-core model (256 cases each, more if
/// `PROPTEST_CASES` says so).
mod model_based {
    use super::Memory;
    use claim_conformance::model_based::{self, FuturesDriver, Options};
    use claim_conformance::unreliable::FaultRates;

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
}
