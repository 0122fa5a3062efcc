//! After a hash-tagged ack: the per-request keys (`request-active:`, `request-cancel:`, payload keys), which live in slots of their own, deleted one key per `del_if.lua` call, best effort.
//!
//! ack.lua deletes these inline in the Plain layout. Hash-tagged, each is a
//! key of its own slot, so each gets its own compare-and-delete call; the
//! calls go out as one pipeline (one round trip on one node). A failed
//! pipeline is resent call by call (after a NOSCRIPT, say); calls that
//! still fail transiently are sent again in the background for about 15 s
//! (a failover's window), and what is left after that is logged: the
//! record and its marker are written already, and each key expires on its
//! own (`ack_split`'s header says why that is safe). `del_if.lua` is safe
//! to run twice, so every resend is too.

use super::ack_split::payload_goes;
use super::evalsha;
use crate::codec::explicit_time_arg;
use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::Op;
use claim_core::store::AckItem;
use redis::Cmd;

/// In [`after_ack`]'s `bits`: the producer keys of pushed items.
pub(crate) const PRODUCER_KEYS: i64 = 1;
/// In [`after_ack`]'s `bits`: the payload keys ack.lua's bit 16 names.
pub(crate) const PAYLOAD_KEYS: i64 = 16;

/// Deletes what ack.lua would have deleted inline, from its code per item,
/// for the `bits` asked: bit 1 (pushed) the producer keys still holding
/// this generation's token, bit 16 the payload key.
pub(crate) async fn after_ack(store: &RedisStore, items: &[&AckItem], codes: &[i64], bits: i64) {
    let keys = store.keys();
    let explicit = explicit_time_arg(store.explicit_now().is_some());
    let script = &store.scripts().del_if;
    let del_if = |key: String, expected: &str| {
        let side = keys.clock_side_for(&key);
        // Key and side hash share a slot by construction; checked all the
        // same, as every call is (the pipeline bypasses `call::run`).
        super::call::check_keys(store, Op::Ack, "del_if", &[&key, &side])?;
        let mut cmd = evalsha(script, 2, 2, key.len() + side.len() + expected.len() + 8);
        cmd.arg(&key).arg(&side).arg(expected).arg(explicit);
        Ok::<Cmd, claim_core::StoreError>(cmd)
    };
    let mut calls: Vec<Cmd> = Vec::new();
    let mut refused = Vec::new();
    for (item, &code) in items.iter().zip(codes) {
        let code = code & bits;
        let g = &item.generation;
        let mut wanted = Vec::new();
        if code & 1 != 0 {
            wanted.push(del_if(keys.active(&g.id), &g.token));
            wanted.push(del_if(keys.cancel(&g.id), &g.token));
        }
        if payload_goes(code)
            && let Some(payload_ref) = &item.payload_ref
        {
            wanted.push(del_if(keys.payload(payload_ref), ""));
        }
        for call in wanted {
            match call {
                Ok(cmd) => calls.push(cmd),
                Err(e) => refused.push(e),
            }
        }
    }
    for e in refused {
        tracing::warn!(error = %e, "ack: a producer or payload key was not deleted; it expires on its own");
    }
    if calls.is_empty() {
        return;
    }
    let mut pipe = redis::pipe();
    for cmd in &calls {
        pipe.add_command(cmd.clone());
    }
    let all: Result<Vec<i64>, _> = store
        .conn()
        .query(Op::Ack, Effect::Transaction, &pipe)
        .await;
    if all.is_ok() {
        return;
    }
    let mut failed = Vec::new();
    for cmd in calls {
        match super::call::run::<i64>(store, Op::Ack, script, &cmd).await {
            Err(e) if e.is_transient() => failed.push(cmd),
            Err(e) => {
                tracing::warn!(error = %e, "ack: a producer or payload key was not deleted; it expires on its own");
            }
            Ok(_) => {}
        }
    }
    if !failed.is_empty() {
        tokio::spawn(retry_later(store.clone(), failed));
    }
}

/// Pauses before each later attempt at deletes that failed transiently
/// (a failover's 2–3 s window, a node restarting): about 15 s in all.
const RETRY_PAUSES_MS: [u64; 5] = [500, 1000, 2000, 4000, 8000];

/// Sends the compare-and-delete calls that failed transiently again, in
/// the background (the ack has answered already), until each lands or the
/// pauses run out; what is still left then is logged and expires on its
/// own. The chaos run with a primary SIGKILLed found payload keys left
/// this way by acks during the failover. `del_if.lua` compares the token,
/// so a later attempt never deletes a newer generation's producer key.
async fn retry_later(store: RedisStore, mut calls: Vec<Cmd>) {
    let script = &store.scripts().del_if;
    for pause in RETRY_PAUSES_MS {
        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        let mut still = Vec::new();
        for cmd in calls {
            if super::call::run::<i64>(&store, Op::Ack, script, &cmd)
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
        "ack: producer or payload keys were not deleted after retrying for 15 s; they expire on their own"
    );
}
