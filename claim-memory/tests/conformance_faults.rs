//! The conformance suite on the memory store through determinate and indeterminate faults, behind a retrying client (8 seeds).
//!
//! A test of its own: the suite silences the panic hook while it runs.

use async_trait::async_trait;
use claim_core::ManualClock;
use claim_core::conformance::unreliable::FaultRates;
use claim_core::conformance::{StoreFactory, faults};
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

#[tokio::test]
async fn the_conformance_suite_passes_through_faults_behind_a_retrying_client() {
    let rates = FaultRates::new(0.2, 0.2);
    let seeds: Vec<u64> = (1..=8).collect();
    let run = faults::run_all(&Memory, rates, &seeds, None).await;
    let failed: Vec<String> = run
        .results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|why| format!("{}: {why}", r.name)))
        .collect();
    assert!(
        failed.is_empty(),
        "checks failed through faults:\n{}",
        failed.join("\n")
    );
    assert!(
        run.injected.determinate > 100 && run.injected.indeterminate > 100,
        "too few faults to mean anything: {:?}",
        run.injected
    );
}
