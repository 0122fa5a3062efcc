//! Runs the claim-core conformance suite against the memory store.
//!
//! `cargo test -p claim-memory --test conformance [-- <name filter>]` prints
//! one line per check and a closing `N passed, N failed`.

use async_trait::async_trait;
use claim_core::ManualClock;
use claim_core::conformance::{StoreFactory, exit_code, filter_from_args, run_all};
use claim_core::store::StoreConfig;
use claim_memory::MemoryStore;
use std::process::ExitCode;
use std::sync::Arc;

struct Memory;

#[async_trait]
impl StoreFactory for Memory {
    type Store = MemoryStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> MemoryStore {
        MemoryStore::with_clock(config, clock)
    }
}

fn main() -> ExitCode {
    let filter = filter_from_args(std::env::args().skip(1));
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let results = runtime.block_on(run_all(&Memory, filter.as_deref()));
    exit_code(&results, filter.as_deref())
}
