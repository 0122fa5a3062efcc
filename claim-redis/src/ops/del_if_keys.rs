//! Compare-and-delete of per-request keys that live in slots of their own (hash-tagged layout): one `del_if.lua` call per key, pipelined, resent one by one, and what fails transiently sent again in the background for about 15 s.
//!
//! The hash-tagged ack, reclaim and claim delete producer keys
//! (`request-active:`, `request-cancel:`, compared with the generation's
//! token) and payload keys (unconditionally) after their own scripts, once
//! the generation is answered. Each delete is best effort: the record and
//! its marker are written already, and every key expires on its own. But a
//! failover's window refuses them all, and the chaos run with a primary
//! SIGKILLed found keys left that way; so deletes that fail transiently are
//! sent again for a while. `del_if.lua` compares the token, so a later
//! attempt never deletes a newer generation's producer key, and it is safe
//! to run twice, so every resend is too.

use super::evalsha;
use crate::codec::explicit_time_arg;
use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::Op;
use redis::Cmd;

/// Pauses before each later attempt at deletes that failed transiently
/// (a failover's 2–3 s window, a node restarting): about 15 s in all.
const RETRY_PAUSES_MS: [u64; 5] = [500, 1000, 2000, 4000, 8000];

/// Deletes each `(key, expected)`: a key holding `expected` (a token), or
/// any value when `expected` is empty. Never fails: what cannot be deleted
/// is logged and expires on its own.
pub(crate) async fn delete(store: &RedisStore, op: Op, targets: Vec<(String, String)>) {
    let keys = store.keys();
    let explicit = explicit_time_arg(store.explicit_now().is_some());
    let script = &store.scripts().del_if;
    let mut calls: Vec<Cmd> = Vec::new();
    for (key, expected) in targets {
        let side = keys.clock_side_for(&key);
        // Key and side hash share a slot by construction; checked all the
        // same, as every call is (the pipeline bypasses `call::run`).
        if let Err(e) = super::call::check_keys(store, op, "del_if", &[&key, &side]) {
            tracing::warn!(error = %e, ?op, "a producer or payload key was not deleted; it expires on its own");
            continue;
        }
        let mut cmd = evalsha(script, 2, 2, key.len() + side.len() + expected.len() + 8);
        cmd.arg(&key).arg(&side).arg(&expected).arg(explicit);
        calls.push(cmd);
    }
    if calls.is_empty() {
        return;
    }
    let mut pipe = redis::pipe();
    for cmd in &calls {
        pipe.add_command(cmd.clone());
    }
    let all: Result<Vec<i64>, _> = store.conn().query(op, Effect::Transaction, &pipe).await;
    if all.is_ok() {
        return;
    }
    let mut failed = Vec::new();
    for cmd in calls {
        match super::call::run::<i64>(store, op, script, &cmd).await {
            Err(e) if e.is_transient() => failed.push(cmd),
            Err(e) => {
                tracing::warn!(error = %e, ?op, "a producer or payload key was not deleted; it expires on its own");
            }
            Ok(_) => {}
        }
    }
    if !failed.is_empty() {
        tokio::spawn(retry_later(store.clone(), op, failed));
    }
}

/// Sends the calls that failed transiently again, in the background (the
/// caller has answered already), until each lands or the pauses run out;
/// what is still left then is logged and expires on its own.
async fn retry_later(store: RedisStore, op: Op, mut calls: Vec<Cmd>) {
    let script = &store.scripts().del_if;
    for pause in RETRY_PAUSES_MS {
        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        let mut still = Vec::new();
        for cmd in calls {
            if super::call::run::<i64>(&store, op, script, &cmd)
                .await
                .is_err()
            {
                still.push(cmd);
            }
        }
        calls = still;
        if calls.is_empty() {
            return;
        }
    }
    tracing::warn!(
        keys = calls.len(),
        ?op,
        "producer or payload keys were not deleted after retrying for 15 s; they expire on their own"
    );
}
