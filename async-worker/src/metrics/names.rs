//! The catalogue of metrics, the crate's public part of `metrics`: every name with its type, labels and meaning, the label values created at 0, and the histogram buckets.

/// The prefix of every name: Go's subsystem `llm_d_async` and name prefix `async_`.
pub const PREFIX: &str = "llm_d_async_async_";

/// Declares the name constants and [`METRICS`] from one list.
macro_rules! metrics_table {
    ($($(#[$doc:meta])* $konst:ident = $name:literal, $kind:ident, $labels:literal, $help:literal;)*) => {
        $($(#[$doc])* pub const $konst: &str = concat!("llm_d_async_async_", $name);)*

        /// Every metric this crate exports, in docs order.
        pub const METRICS: &[MetricInfo] = &[
            $(MetricInfo {
                name: $konst,
                kind: Kind::$kind,
                labels: $labels,
                help: $help,
            },)*
        ];
    };
}

metrics_table! {
    // The Go processor's metrics.
    /// First attempts claimed (Go: first attempts a worker picked up).
    REQUESTS = "request_total", Counter, "Q",
        "Requests claimed on their first attempt (retry_count 0), whatever their outcome; one redelivered after a crash counts again, as in Go";
    RETRIES = "request_retries_total", Counter, "Q",
        "Retries parked in the retry set";
    SUCCESSFUL = "successful_requests_total", Counter, "Q",
        "Success records landed (the gateway answered 1xx-3xx)";
    FAILED = "failed_requests_total", Counter, "Q",
        "Error records landed for fatal errors: INFERENCE_ERROR (a 4xx other than 429), INVALID_REQUEST, PAYLOAD_UNAVAILABLE, DELIVERY_LIMIT";
    EXCEEDED_DEADLINE = "exceeded_deadline_requests_total", Counter, "Q",
        "DEADLINE_EXCEEDED records landed (expired before dispatch, during the call, or with no time left to retry)";
    SHEDDED = "shedded_requests_total", Counter, "Q",
        "Gateway answers 429 (rate limited); each is retried while the deadline allows";
    DISPATCHED = "dispatched_requests_total", Counter, "Q",
        "Requests handed to the handler (the gateway call), retries included";
    GATE_DECISIONS = "gate_decisions_total", Counter, "Q, reason",
        "Gate verdicts that held work back, by reason (gate_closed, quota_exhausted, dropped, error; created at 0): a queue gate's closed polls with work pending, members it refused, did not decide within a poll interval or could not decide, GATE_DROPPED and GATE_ERROR records; a pool gate's verdicts count on series with empty queue_id and queue_name";
    DISPATCH_BUDGET = "dispatch_budget", Gauge, "Q",
        "The queue gate's budget (free fraction, 0 to 1) read at each poll; only queues with a gate";
    GATE_WAIT_REQUEUES = "gate_wait_requeues_total", Counter, "Q",
        "Requests a pool gate kept waiting past --gate-wait-timeout, requeued with their retry count kept (created at 0)";
    GATE_METRIC_VALUE = "gate_metric_value", Gauge, "Q, inference_pool",
        "The value D a metric gate (prometheus-saturation, prometheus-budget, prometheus-query, endpoint-scrape) last read, set when the read gave a finite sample; inference_pool is the gate's pool param; endpoint-scrape's series has every label empty";
    GATE_METRIC_THRESHOLD = "gate_metric_threshold", Gauge, "Q, inference_pool",
        "The threshold T a metric gate's value is compared with (budget 0 at or below it, else min(1, D - T)), set with the value";
    GATE_METRIC_SOURCE_AVAILABLE = "gate_metric_source_available", Gauge, "Q, inference_pool",
        "1 when a metric gate's last read gave a finite sample, 0 when it failed, found no sample or read NaN/Inf and the gate used its fallback";
    AIMD_WINDOW = "aimd_window", Gauge, "pool_name, band",
        "An aimd pool gate's window for the band (reserved/interactive to overflow/batch): the requests it lets through at once; set when the band is first seen and on every change";
    AIMD_SSTHRESH = "aimd_ssthresh", Gauge, "pool_name, band",
        "An aimd pool gate's slow-start threshold for the band: a window below it doubles per window of accepts, above it grows by about one per window";
    AIMD_INFLIGHT = "aimd_inflight", Gauge, "pool_name, band",
        "Requests the aimd pool gate let through for the band that have not finished";
    QUEUE_DEPTH = "queue_depth", Gauge, "Q",
        "Claimed requests handed to a worker task that has not started yet (Go: buffered in-process; near 0 here, a request is claimed only when a worker is free)";
    IN_FLIGHT = "inflight_requests", Gauge, "Q",
        "Requests in the handler now";
    BROKER_BACKLOG = "broker_backlog", Gauge, "Q",
        "Pending members (ZCARD of the queue), read every 15 s; 0 after a failed read";
    BROKER_BACKLOG_SOURCE_AVAILABLE = "broker_backlog_source_available", Gauge, "Q",
        "1 when the last backlog read succeeded, else 0";
    INFERENCE_LATENCY = "inference_latency_time_millis", Histogram, "Q",
        "Handler (gateway call) time per attempt, milliseconds";
    QUEUE_RESIDENCE = "queue_residence_time_millis", Histogram, "Q",
        "Time from claim to a worker starting the request, milliseconds (Go: broker ingestion to worker)";
    MESSAGE_LATENCY = "message_latency_time_millis", Histogram, "Q",
        "Time from the request's data.created to its record landing, milliseconds (only requests with created set)";
    // Claim metrics (ours).
    CLAIM_DEPTH = "claim_depth", Gauge, "Q",
        "Live claims per queue (claims, not hash fields), sampled";
    CLAIMS_EXPIRED = "claims_expired_total", Counter, "Q",
        "Claims whose lease expired (redeliveries and dead letters); spikes mean crashes or too-short leases";
    DUPLICATES_SUPPRESSED = "duplicate_results_suppressed_total", Counter, "Q",
        "Terminal records not pushed because an earlier terminal record of the generation existed";
    PENDING_DUPLICATES_DROPPED = "pending_duplicates_dropped_total", Counter, "Q",
        "Pending copies removed at claim time because their generation already had a terminal record or a live claim (a redriven or re-added member, a reclaim racing a late ack)";
    RETRIED_ACKS_LANDED = "retried_acks_landed_total", Counter, "Q",
        "Acks resent after an uncertain (indeterminate) attempt that turned out to have landed: this replica's own record, not a duplicate";
    DEAD_LETTERED = "dead_lettered_total", Counter, "Q, reason",
        "Members moved to <queue>:dead, by reason: unparsable, delivery_limit, unservable, claim_refused (refused alone while the rest were served), unusable_result_list (created at 0)";
    LEASE_LOST = "lease_lost_total", Counter, "Q",
        "Claims found held by another owner at renewal, or run out while the store was unreachable";
    GIVEN_UP = "deliveries_given_up_total", Counter, "Q, op",
        "Acks or retry parks (op: ack, park_retry; created at 0) the store refused for that request alone; its claim lapses, it is redelivered and the delivery limit ends it in the dead set";
    RESULTS = "results_total", Counter, "Q, code",
        "Terminal records landed, by code (OK or the error code)";
    STORE_ERRORS = "store_errors_total", Counter, "op, kind",
        "Store errors by operation and kind (failed, indeterminate, out_of_memory, rejected, invalid_input)";
    STORE_OUT_OF_MEMORY = "store_out_of_memory", Gauge, "none",
        "1 while the store answered out of memory in the last 10 s, else 0; the replica is not ready meanwhile";
    QUEUE_PAUSED = "queue_paused", Gauge, "Q",
        "1 while an operator has paused claiming from the queue (admin pause), as this replica last read the flag (once per poll interval), else 0";
    STORE_UP = "store_up", Gauge, "none",
        "1 when the store answered the last readiness ping (every 2 s) within 2 s, else 0";
    WRITER_FAILING = "writer_failing_seconds", Gauge, "none",
        "How long the oldest ack or retry park not landed yet has been failing, seconds (0 when none); sampled every 2 s; readiness turns off past one lease";
    OLDEST_PENDING_AGE = "oldest_pending_age_seconds", Gauge, "Q",
        "Age of the head of pending (the next request served: earliest deadline) from its data.created, seconds; 0 when pending is empty or its head has no created; sampled with the backlog";
    DEAD_DEPTH = "dead_letter_depth", Gauge, "Q",
        "Members in <queue>:dead, sampled with the backlog";
    RETRY_DEPTH = "retry_depth", Gauge, "none",
        "Entries of the retry set (every queue's parked retries), sampled with the backlog";
    BUILD_INFO = "build_info", Gauge, "version",
        "1, labelled with the processor's version";
}

/// A metric's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One exported metric: name, type, labels (`Q` = `queue_id, queue_name,
/// pool_name`) and meaning.
#[derive(Debug, Clone, Copy)]
pub struct MetricInfo {
    pub name: &'static str,
    pub kind: Kind,
    pub labels: &'static str,
    pub help: &'static str,
}

/// Go's buckets of `inference_latency_time_millis`.
pub const INFERENCE_LATENCY_BUCKETS: &[f64] = &[
    10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0, 60000.0,
    120000.0,
];

/// Go's buckets of `queue_residence_time_millis` (500 ms to 24 h).
pub const QUEUE_RESIDENCE_BUCKETS: &[f64] = &[
    500.0, 1000.0, 2000.0, 5000.0, 10000.0, 30000.0, 60000.0, 120000.0, 300000.0, 600000.0,
    1800000.0, 3600000.0, 7200000.0, 21600000.0, 43200000.0, 86400000.0,
];

/// Go's buckets of `message_latency_time_millis`.
pub const MESSAGE_LATENCY_BUCKETS: &[f64] = &[
    100.0, 1000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0, 200000.0, 500000.0, 1000000.0,
];

/// Each histogram's name and buckets, for the recorder.
pub const HISTOGRAM_BUCKETS: [(&str, &[f64]); 3] = [
    (INFERENCE_LATENCY, INFERENCE_LATENCY_BUCKETS),
    (QUEUE_RESIDENCE, QUEUE_RESIDENCE_BUCKETS),
    (MESSAGE_LATENCY, MESSAGE_LATENCY_BUCKETS),
];

/// Why a gate held a queue back (`gate_decisions_total{reason}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateReason {
    GateClosed,
    QuotaExhausted,
    Dropped,
    Error,
}

impl GateReason {
    pub const ALL: [GateReason; 4] = [
        GateReason::GateClosed,
        GateReason::QuotaExhausted,
        GateReason::Dropped,
        GateReason::Error,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GateReason::GateClosed => "gate_closed",
            GateReason::QuotaExhausted => "quota_exhausted",
            GateReason::Dropped => "dropped",
            GateReason::Error => "error",
        }
    }
}

/// Every `reason` of `dead_lettered_total`; each queue's series exist from
/// the start at 0, so `increase()` sees a queue's first dead letter.
pub const DEAD_LETTER_REASONS: [&str; 5] = [
    "unparsable",
    "delivery_limit",
    "unservable",
    "claim_refused",
    "unusable_result_list",
];

/// Every `op` of `deliveries_given_up_total`, created at 0 as the reasons are.
pub const GIVEN_UP_OPS: [&str; 2] = ["ack", "park_retry"];

/// Describes every metric once, so exporters show help text.
pub fn describe() {
    for m in METRICS {
        match m.kind {
            Kind::Counter => metrics::describe_counter!(m.name, m.help),
            Kind::Gauge => metrics::describe_gauge!(m.name, m.help),
            Kind::Histogram => metrics::describe_histogram!(m.name, m.help),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_carries_the_go_prefix_and_is_listed_once() {
        let mut names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        assert!(names.iter().all(|n| n.starts_with(PREFIX)), "{names:?}");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METRICS.len(), "a name is listed twice");
    }

    #[test]
    fn every_histogram_has_buckets_and_every_bucket_list_names_a_histogram() {
        for m in METRICS.iter().filter(|m| m.kind == Kind::Histogram) {
            assert!(
                HISTOGRAM_BUCKETS.iter().any(|(n, _)| *n == m.name),
                "{} has no buckets",
                m.name
            );
        }
        for (name, buckets) in HISTOGRAM_BUCKETS {
            assert!(buckets.windows(2).all(|w| w[0] < w[1]), "{name}");
            assert!(METRICS.iter().any(|m| m.name == name), "{name}");
        }
    }
}
