//! Metric names and the small helpers that record them through the `metrics` facade.
//!
//! The names of the first three are the upstream spec's; dashboards know them.

use metrics::{counter, gauge, histogram};
use std::time::Duration;

pub const CLAIM_DEPTH: &str = "async_claim_depth";
pub const CLAIMS_EXPIRED: &str = "async_claims_expired_total";
pub const DUPLICATES_SUPPRESSED: &str = "async_duplicate_results_suppressed_total";
pub const DEAD_LETTERED: &str = "async_dead_lettered_total";
pub const LEASE_LOST: &str = "async_lease_lost_total";
pub const REQUESTS: &str = "async_requests_total";
pub const RESULTS: &str = "async_results_total";
pub const RETRIES: &str = "async_retries_total";
pub const IN_FLIGHT: &str = "async_in_flight";
pub const QUEUE_DEPTH: &str = "async_queue_depth";
pub const DISPATCH_LATENCY: &str = "async_dispatch_latency_seconds";
pub const QUEUE_RESIDENCE: &str = "async_queue_residence_seconds";
pub const PENDING_DUPLICATES_DROPPED: &str = "async_pending_duplicates_dropped_total";
pub const RETRIED_ACKS_LANDED: &str = "async_retried_acks_landed_total";
pub const GIVEN_UP: &str = "async_deliveries_given_up_total";
pub const STORE_ERRORS: &str = "async_store_errors_total";
pub const STORE_OUT_OF_MEMORY: &str = "async_store_out_of_memory";

/// Describes every metric once, so exporters show help text and zero values.
pub fn describe() {
    metrics::describe_gauge!(CLAIM_DEPTH, "Live claims per queue");
    metrics::describe_counter!(
        CLAIMS_EXPIRED,
        "Claims whose lease expired (redeliveries and dead letters); spikes mean crashes or too-short leases"
    );
    metrics::describe_counter!(
        DUPLICATES_SUPPRESSED,
        "Terminal records not pushed because an earlier terminal record of the generation existed"
    );
    metrics::describe_counter!(
        PENDING_DUPLICATES_DROPPED,
        "Pending copies removed at claim time because their generation already had a terminal record or a live claim"
    );
    metrics::describe_counter!(
        RETRIED_ACKS_LANDED,
        "Acks resent after an uncertain (indeterminate) attempt that turned out to have landed"
    );
    metrics::describe_counter!(
        GIVEN_UP,
        "Acks or retry parks the store refused for good on their own; their claims lapse and are redelivered"
    );
    metrics::describe_counter!(STORE_ERRORS, "Store errors by operation and kind");
    metrics::describe_gauge!(
        STORE_OUT_OF_MEMORY,
        "1 while the store answered out of memory in the last 10 s, else 0"
    );
    metrics::describe_counter!(DEAD_LETTERED, "Members moved to <queue>:dead");
    metrics::describe_counter!(LEASE_LOST, "Claims found held by another owner at renewal");
    metrics::describe_counter!(REQUESTS, "Requests claimed for dispatch");
    metrics::describe_counter!(RESULTS, "Terminal records pushed, by code");
    metrics::describe_counter!(RETRIES, "Requests parked for retry");
    metrics::describe_gauge!(IN_FLIGHT, "Requests being handled");
    metrics::describe_gauge!(QUEUE_DEPTH, "Pending members per queue");
    metrics::describe_histogram!(DISPATCH_LATENCY, "Handler time per request, seconds");
    metrics::describe_histogram!(QUEUE_RESIDENCE, "Time from creation to claim, seconds");
}

/// Registers a queue's spec counters at zero, so `/metrics` shows them from
/// the start (a Prometheus counter that was never touched is not exported).
pub fn register_queue(queue: &str) {
    counter!(CLAIMS_EXPIRED, "queue" => queue.to_owned()).increment(0);
    counter!(DUPLICATES_SUPPRESSED, "queue" => queue.to_owned()).increment(0);
    counter!(PENDING_DUPLICATES_DROPPED, "queue" => queue.to_owned()).increment(0);
    counter!(RETRIED_ACKS_LANDED, "queue" => queue.to_owned()).increment(0);
    gauge!(STORE_OUT_OF_MEMORY).increment(0.0);
}

pub fn pending_duplicates_dropped(queue: &str, n: usize) {
    counter!(PENDING_DUPLICATES_DROPPED, "queue" => queue.to_owned()).increment(n as u64);
}

pub fn retried_acks_landed(queue: &str, n: usize) {
    counter!(RETRIED_ACKS_LANDED, "queue" => queue.to_owned()).increment(n as u64);
}

/// One settlement (`op` = "ack" or "park_retry") given up on after a permanent refusal
/// (the metric keeps its published name).
pub fn given_up(queue: &str, op: &'static str) {
    counter!(GIVEN_UP, "queue" => queue.to_owned(), "op" => op).increment(1);
}

/// One store error, labelled by operation and kind.
pub fn store_error(error: &claim_core::StoreError) {
    use claim_core::StoreError as E;
    let kind = match error {
        E::Failed { .. } => "failed",
        E::Indeterminate { .. } => "indeterminate",
        E::OutOfMemory { .. } => "out_of_memory",
        E::Rejected { .. } => "rejected",
        E::InvalidInput { .. } => "invalid_input",
    };
    counter!(STORE_ERRORS, "op" => error.op().name(), "kind" => kind).increment(1);
}

pub fn store_out_of_memory(on: bool) {
    gauge!(STORE_OUT_OF_MEMORY).set(if on { 1.0 } else { 0.0 });
}

pub fn claims_expired(queue: &str, n: usize) {
    counter!(CLAIMS_EXPIRED, "queue" => queue.to_owned()).increment(n as u64);
}

pub fn duplicates_suppressed(queue: &str, n: usize) {
    counter!(DUPLICATES_SUPPRESSED, "queue" => queue.to_owned()).increment(n as u64);
}

pub fn dead_lettered(queue: &str, reason: &'static str, n: usize) {
    counter!(DEAD_LETTERED, "queue" => queue.to_owned(), "reason" => reason).increment(n as u64);
}

pub fn lease_lost(queue: &str, n: usize) {
    counter!(LEASE_LOST, "queue" => queue.to_owned()).increment(n as u64);
}

pub fn requests(queue: &str, n: usize) {
    counter!(REQUESTS, "queue" => queue.to_owned()).increment(n as u64);
}

pub fn result(queue: &str, code: &str) {
    counter!(RESULTS, "queue" => queue.to_owned(), "code" => code.to_owned()).increment(1);
}

pub fn retries(queue: &str, n: usize) {
    counter!(RETRIES, "queue" => queue.to_owned()).increment(n as u64);
}

/// One more (or, with a negative `delta`, fewer) request being handled.
pub fn in_flight(delta: f64) {
    gauge!(IN_FLIGHT).increment(delta);
}

pub fn depths(queue: &str, pending: usize, claimed: usize) {
    gauge!(QUEUE_DEPTH, "queue" => queue.to_owned()).set(pending as f64);
    gauge!(CLAIM_DEPTH, "queue" => queue.to_owned()).set(claimed as f64);
}

pub fn dispatch_latency(queue: &str, took: Duration) {
    histogram!(DISPATCH_LATENCY, "queue" => queue.to_owned()).record(took.as_secs_f64());
}

pub fn queue_residence(queue: &str, secs: f64) {
    histogram!(QUEUE_RESIDENCE, "queue" => queue.to_owned()).record(secs.max(0.0));
}
