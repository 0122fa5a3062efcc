//! How a Redis error becomes a [`StoreError`]: transient or permanent, and whether the call may have happened.

use super::Effect;
use claim_core::{Op, StoreError};
use redis::{ErrorKind, RedisError, ServerErrorKind};

/// Server error codes after which the same call can succeed later.
/// `MOVED`/`ASK` reach the caller only when the cluster client could not
/// follow them in time (a slot changing hands in a failover); the next
/// call goes to the new owner. `NOREPLICAS`: a primary with
/// `min-replicas-to-write` refuses writes until enough replicas are
/// connected again (a failover's window); it refuses a script at its first
/// write, so nothing ran.
pub(crate) const TRANSIENT_CODES: [&str; 10] = [
    "LOADING",
    "BUSY",
    "TRYAGAIN",
    "MASTERDOWN",
    "READONLY",
    "CLUSTERDOWN",
    "NOSCRIPT",
    "MOVED",
    "ASK",
    "NOREPLICAS",
];

/// How a server's error reply is classified, from its code.
fn server_error(op: Op, code: Option<&str>, detail: String) -> StoreError {
    match code {
        Some("OOM") => StoreError::out_of_memory(op, detail),
        Some(code) if TRANSIENT_CODES.contains(&code) => StoreError::failed(op, detail),
        _ => StoreError::rejected(op, detail),
    }
}

/// Maps a Redis error to a store error (see the module docs).
pub(crate) fn classify(op: Op, effect: Effect, e: &RedisError) -> StoreError {
    let detail = e.to_string();
    if e.is_connection_refusal() {
        return StoreError::failed(op, detail);
    }
    match e.kind() {
        ErrorKind::Server(ServerErrorKind::ExecAbort) => StoreError::failed(op, detail),
        // Keys in two slots: refused before anything ran (by the cluster
        // client before sending, or by the server when queueing), and
        // refused again on a retry.
        ErrorKind::Server(ServerErrorKind::CrossSlot) => StoreError::rejected(op, detail),
        // A command failing inside EXEC leaves the others applied.
        ErrorKind::Server(_) | ErrorKind::Extension if effect == Effect::Transaction => {
            StoreError::indeterminate(op, detail)
        }
        ErrorKind::Server(_) | ErrorKind::Extension => server_error(op, e.code(), detail),
        ErrorKind::AuthenticationFailed | ErrorKind::InvalidClientConfig | ErrorKind::Client => {
            StoreError::failed(op, detail)
        }
        _ if effect == Effect::Read => StoreError::failed(op, detail),
        _ => StoreError::indeterminate(op, detail),
    }
}

/// A reply that does not have the shape the store expects. The call ran,
/// so for a write its effect is unknown to the caller.
pub(crate) fn bad_reply(op: Op, effect: Effect, what: impl std::fmt::Display) -> StoreError {
    let detail = format!("unexpected reply from Redis: {what}");
    match effect {
        Effect::Read => StoreError::failed(op, detail),
        Effect::Write | Effect::Transaction => StoreError::indeterminate(op, detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error redis-rs makes of a server's error reply `line`.
    fn reply(line: &str) -> RedisError {
        match redis::parse_redis_value(format!("-{line}\r\n").as_bytes()) {
            Ok(redis::Value::ServerError(e)) => e.into(),
            other => panic!("not a server error: {other:?}"),
        }
    }

    #[test]
    fn a_loading_busy_failing_over_or_read_only_server_is_a_transient_failure() {
        for line in [
            "LOADING Redis is loading the dataset in memory",
            "BUSY Redis is busy running a script",
            "TRYAGAIN Multiple keys request during rehashing of slot",
            "MASTERDOWN Link with MASTER is down",
            "READONLY You can't write against a read only replica.",
            "CLUSTERDOWN The cluster is down",
            "NOSCRIPT No matching script",
            "MOVED 3999 127.0.0.1:6381",
            "ASK 3999 127.0.0.1:6381",
            "NOREPLICAS Not enough good replicas to write.",
        ] {
            let e = classify(Op::Ack, Effect::Write, &reply(line));
            assert!(matches!(e, StoreError::Failed { .. }), "{line}: {e:?}");
            assert!(e.is_transient() && !e.may_have_happened(), "{line}");
        }
    }

    #[test]
    fn a_cross_slot_call_is_a_permanent_rejection_even_in_a_transaction() {
        for effect in [Effect::Read, Effect::Write, Effect::Transaction] {
            let e = classify(
                Op::Submit,
                effect,
                &reply("CROSSSLOT Keys in request don't hash to the same slot"),
            );
            assert!(matches!(e, StoreError::Rejected { .. }), "{e:?}");
        }
    }

    #[test]
    fn an_out_of_memory_server_is_out_of_memory_and_transient() {
        let e = classify(
            Op::Ack,
            Effect::Write,
            &reply("OOM command not allowed when used memory > 'maxmemory'."),
        );
        assert!(e.is_out_of_memory() && e.is_transient(), "{e:?}");
    }

    #[test]
    fn wrong_type_script_and_other_server_errors_are_permanent_rejections() {
        for line in [
            "WRONGTYPE Operation against a key holding the wrong kind of value",
            "ERR Error running script, user_script:1: bad argument",
            "claim-redis: ack: expects 3 ARGV and 3 KEYS per item",
            "NOPERM this user has no permissions to run the 'evalsha' command",
        ] {
            for effect in [Effect::Read, Effect::Write] {
                let e = classify(Op::Ack, effect, &reply(line));
                assert!(matches!(e, StoreError::Rejected { .. }), "{line}: {e:?}");
                assert!(!e.is_transient(), "{line}");
            }
        }
    }
}
