//! Operator views: the stats the status page and the binary's `async-worker admin` commands share (`stats`).

pub mod stats;
