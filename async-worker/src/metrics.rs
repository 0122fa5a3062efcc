//! Metric names, types, labels and histogram buckets (the Go processor's, then ours), and the helpers that record them.
//!
//! Every name is the Go processor's `llm_d_async_async_<name>`, so the
//! upstream chart's alerts and dashboard read this processor unchanged. Per
//! queue metrics carry Go's labels `queue_id`, `queue_name`, `pool_name`
//! (from [`crate::config::QueueSpec`]); [`METRICS`] lists every metric with its type, labels
//! and meaning (docs/OPERATIONS.md is checked against it).
//!
//! How our exit paths map onto Go's counters (as Go's worker counts them):
//! - `request_total`: every claimed first attempt (`internal.retry_count` 0),
//!   whatever happens to it next, including one redelivered after a crash;
//! - `dispatched_requests_total`: every hand-off to the handler, retries too;
//! - `successful_requests_total`, `failed_requests_total`,
//!   `exceeded_deadline_requests_total`: by the code of the terminal record,
//!   when it lands (see `record::result`); a suppressed duplicate counts in
//!   `duplicate_results_suppressed_total` only;
//! - `shedded_requests_total`: each gateway answer 429 (Go's rate-limit
//!   category), retried or not; `request_retries_total`: each landed retry park.
//!
//! Only the catalogue (`names`: names, [`METRICS`], buckets, label values,
//! [`describe`]) is public: dashboards, rules and tests read it. Recording
//! is the runtime's own business: the helpers (`record`) are crate-private;
//! each takes the queue name and looks up the queue's handles (`queue`).
//! Install the recorder before building a `Runtime`.

mod counted;
mod names;
mod queue;
mod record;

pub(crate) use counted::QueueCount;
pub use names::*;
pub(crate) use queue::{
    Buffered, QueueHandle, handed_off, queue_handle, register_pool_gate, register_queue,
};
pub(crate) use record::*;
