//! After a hash-tagged ack: the per-request keys (`request-active:`, `request-cancel:`, payload keys), which live in slots of their own, deleted one key per `del_if.lua` call, best effort.
//!
//! ack.lua deletes these inline in the Plain layout. Hash-tagged, each is a
//! key of its own slot: [`del_if_keys`] deletes them (pipelined, resent
//! while a failover refuses them), and what it cannot is left to expire on
//! its own (`ack_split`'s header says why that is safe).

use super::ack_split::payload_goes;
use super::del_if_keys;
use crate::store::RedisStore;
use claim_core::Op;
use claim_core::store::AckItem;

/// In [`after_ack`]'s `bits`: the producer keys of pushed items.
pub(crate) const PRODUCER_KEYS: i64 = 1;
/// In [`after_ack`]'s `bits`: the payload keys ack.lua's bit 16 names.
pub(crate) const PAYLOAD_KEYS: i64 = 16;

/// Deletes what ack.lua would have deleted inline, from its code per item,
/// for the `bits` asked: bit 1 (pushed) the producer keys still holding
/// this generation's token, bit 16 the payload key.
pub(crate) async fn after_ack(store: &RedisStore, items: &[&AckItem], codes: &[i64], bits: i64) {
    let keys = store.keys();
    let mut targets = Vec::new();
    for (item, &code) in items.iter().zip(codes) {
        let code = code & bits;
        let g = &item.generation;
        if code & 1 != 0 {
            targets.push((keys.active(&g.id), g.token.clone()));
            targets.push((keys.cancel(&g.id), g.token.clone()));
        }
        if payload_goes(code)
            && let Some(payload_ref) = &item.payload_ref
        {
            targets.push((keys.payload(payload_ref), String::new()));
        }
    }
    del_if_keys::delete(store, Op::Ack, targets).await;
}
