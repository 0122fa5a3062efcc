//! What one gateway call showed a gate that learns from the answers (`aimd`): when it was sent, the status or a failure, and the gateway's advice headers, classified as Go's worker classifies them.
//!
//! The HTTP handler builds one [`GatewayOutcome`] per call and the
//! processor hands it to the request's pool gate (and queue gate) through
//! `DispatchGate::observe`. Advice headers that are absent, unparsable or
//! negative carry no signal, as in Go.

use std::time::Duration;

/// The header naming why the gateway dropped a request (`rejected-saturated`,
/// `rejected-ttl-expired`, `evicted…`).
pub const DROPPED_REASON_HEADER: &str = "x-llm-d-request-dropped-reason";
/// The header with the time the request queued in the gateway, milliseconds.
pub const QUEUE_DURATION_HEADER: &str = "x-llm-d-flow-queue-duration-ms";
/// The header with the free room, in requests, of the request's band.
pub const BAND_HEADROOM_HEADER: &str = "x-llm-d-flow-band-headroom";

/// The dropped reasons Go tells apart.
const SATURATED: &str = "rejected-saturated";
const TTL_EXPIRED: &str = "rejected-ttl-expired";
const EVICTED_PREFIX: &str = "evicted";

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayAnswer {
    /// The gateway answered with this status, its body read.
    Status(u16),
    /// No usable answer: the connection or the body read failed, or the
    /// call was abandoned (cancelled, deadline). Headers seen before a body
    /// read failed are kept.
    Failed,
}

/// One gateway call as a learning gate sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayOutcome {
    /// When the call started: an answer only says something about the
    /// gateway from then on.
    pub sent_at: tokio::time::Instant,
    pub answer: GatewayAnswer,
    /// `Retry-After`, seconds or an HTTP date.
    pub retry_after: Option<Duration>,
    /// `x-llm-d-request-dropped-reason`, when present and not empty.
    pub dropped_reason: Option<String>,
    /// `x-llm-d-flow-queue-duration-ms`, when a number ≥ 0.
    pub queue_duration: Option<Duration>,
    /// `x-llm-d-flow-band-headroom`, when a number ≥ 0.
    pub band_headroom: Option<f64>,
}

/// What an outcome says about the gateway's capacity (Go's `DispatchOutcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeKind {
    /// Served (any answer below 400).
    Accepted,
    /// Refused for capacity: `rejected-saturated`, or a 429 with no reason.
    Capacity,
    /// Expired in the gateway's queue (`rejected-ttl-expired`).
    TtlExpired,
    /// Admitted, then revoked in flight (`evicted…`): a cost, not saturation.
    Evicted,
    /// Refused for another named reason.
    RejectedOther,
    /// A transport failure or an error answer with no reason: no capacity signal.
    Error,
}

impl GatewayOutcome {
    /// A call the gateway answered with `status`; `header` reads a response
    /// header by its lower-case name.
    pub fn answered<'h>(
        sent_at: tokio::time::Instant,
        status: u16,
        header: impl Fn(&str) -> Option<&'h str>,
        retry_after: Option<Duration>,
    ) -> Self {
        let number = |name| {
            header(name)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|n| *n >= 0.0 && n.is_finite())
        };
        GatewayOutcome {
            sent_at,
            answer: GatewayAnswer::Status(status),
            retry_after,
            dropped_reason: header(DROPPED_REASON_HEADER)
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
            queue_duration: number(QUEUE_DURATION_HEADER)
                .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()),
            band_headroom: number(BAND_HEADROOM_HEADER),
        }
    }

    /// A call with no answer.
    pub fn failed(sent_at: tokio::time::Instant) -> Self {
        GatewayOutcome {
            sent_at,
            answer: GatewayAnswer::Failed,
            retry_after: None,
            dropped_reason: None,
            queue_duration: None,
            band_headroom: None,
        }
    }

    /// The same headers, the answer lost (its body could not be read).
    pub fn unread(self) -> Self {
        GatewayOutcome {
            answer: GatewayAnswer::Failed,
            ..self
        }
    }

    /// Go's classification: an answer below 400 is accepted; otherwise the
    /// dropped reason decides, and with none a 429 is a capacity refusal
    /// and anything else an error.
    pub fn kind(&self) -> OutcomeKind {
        if let GatewayAnswer::Status(status) = self.answer
            && status < 400
        {
            return OutcomeKind::Accepted;
        }
        match self.dropped_reason.as_deref() {
            Some(reason) if reason.starts_with(EVICTED_PREFIX) => OutcomeKind::Evicted,
            Some(SATURATED) => OutcomeKind::Capacity,
            Some(TTL_EXPIRED) => OutcomeKind::TtlExpired,
            Some(_) => OutcomeKind::RejectedOther,
            None if self.answer == GatewayAnswer::Status(429) => OutcomeKind::Capacity,
            None => OutcomeKind::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    fn answer(status: u16, headers: &[(&str, &str)]) -> GatewayOutcome {
        let header = |name: &str| (headers.iter()).find(|(n, _)| *n == name).map(|(_, v)| *v);
        GatewayOutcome::answered(Instant::now(), status, header, None)
    }

    #[test]
    fn outcomes_are_classified_by_status_and_dropped_reason_as_go_does() {
        let reason = |status, r| answer(status, &[(DROPPED_REASON_HEADER, r)]).kind();
        assert_eq!(answer(200, &[]).kind(), OutcomeKind::Accepted);
        assert_eq!(reason(200, SATURATED), OutcomeKind::Accepted);
        assert_eq!(answer(302, &[]).kind(), OutcomeKind::Accepted);
        assert_eq!(reason(503, SATURATED), OutcomeKind::Capacity);
        assert_eq!(answer(429, &[]).kind(), OutcomeKind::Capacity);
        assert_eq!(reason(503, TTL_EXPIRED), OutcomeKind::TtlExpired);
        assert_eq!(reason(429, "evicted-priority"), OutcomeKind::Evicted);
        assert_eq!(reason(503, "evicted"), OutcomeKind::Evicted);
        assert_eq!(
            reason(503, "rejected-shutting-down"),
            OutcomeKind::RejectedOther
        );
        assert_eq!(answer(500, &[]).kind(), OutcomeKind::Error);
        assert_eq!(answer(400, &[]).kind(), OutcomeKind::Error);
        let failed = GatewayOutcome::failed(Instant::now());
        assert_eq!(failed.kind(), OutcomeKind::Error);
        let unread = answer(200, &[(DROPPED_REASON_HEADER, "evicted")]).unread();
        assert_eq!(unread.kind(), OutcomeKind::Evicted);
    }

    #[test]
    fn advice_headers_are_read_and_malformed_or_negative_ones_ignored() {
        let seen = answer(
            200,
            &[(QUEUE_DURATION_HEADER, "250"), (BAND_HEADROOM_HEADER, "12")],
        );
        assert_eq!(seen.queue_duration, Some(Duration::from_millis(250)));
        assert_eq!(seen.band_headroom, Some(12.0));
        let none = answer(200, &[]);
        assert_eq!((none.queue_duration, none.band_headroom), (None, None));
        let bad = answer(
            200,
            &[
                (QUEUE_DURATION_HEADER, "not-a-number"),
                (BAND_HEADROOM_HEADER, "-5"),
                (DROPPED_REASON_HEADER, ""),
            ],
        );
        assert_eq!(
            (bad.queue_duration, bad.band_headroom, bad.dropped_reason),
            (None, None, None)
        );
    }
}
