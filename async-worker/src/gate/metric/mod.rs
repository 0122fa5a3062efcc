//! The metric gates (`prometheus-saturation`, `prometheus-budget`, `prometheus-query`, `endpoint-scrape`): a budget read from one metric, as Go's metric core computes it.
//!
//! Every metric gate reads one value D from its source (a Prometheus
//! instant query, the first that answers of a cascade of them, or a
//! scrape) and turns it into a budget against its threshold T: 0 when D is
//! at or below T, else `min(1, D - T)`. A source that fails, answers no
//! sample or answers NaN or an infinity gives the gate's fallback instead,
//! so a gate always answers. Each source is read through a [`cache`] with
//! the process's `--prometheus-cache-ttl`. `apply` is budget-only: refuse
//! when the budget is not above 0.
//!
//! Built only with the `metric-gates` feature (reqwest and a text-format
//! parser); without it the factory refuses these types by name.

mod cache;
mod config;
mod formula;
mod prometheus;
mod promql;
mod reading;
mod scrape;
mod source;
// The stand-in servers are test-support's.
#[cfg(all(test, feature = "test-support"))]
mod tests;

pub use config::{budget, endpoint_scrape, query, saturation};
pub use reading::SourceError;
pub use source::MetricGate;
