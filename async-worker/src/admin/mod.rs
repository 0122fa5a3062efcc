//! Operator tools: the stats every view shares (`stats`) and, with the `cli` feature, the `async-worker admin` commands (`cli`).

#[cfg(feature = "cli")]
pub mod cli;
pub mod stats;
