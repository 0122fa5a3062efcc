//! `redrive_dead`: sorts out unparsable and answered entries (`is_terminal`), then runs `lua/redrive_dead.lua` for the rest, one call per [`MAX_BATCH`] members.

use super::is_terminal::is_terminal;
use crate::codec::{flag, per_item, score_arg};
use crate::conn::Effect;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::admin::Redrive;
use claim_core::{Generation, Member, Op, StoreError, wire};

pub(crate) async fn redrive_dead(
    store: &RedisStore,
    queue: &str,
    members: &[Member],
) -> Result<Vec<Redrive>, StoreError> {
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let q = store.keys().queue(queue);
    let mut out = vec![Redrive::NotDead; members.len()];
    // (index, member, score text, generation) of the parsable entries.
    let mut parsable = Vec::new();
    for (i, member) in members.iter().enumerate() {
        match wire::parse_member(member.as_bytes()) {
            Ok(p) => parsable.push((i, member, p.score(), Generation::new(p.id, p.token))),
            Err(_) => out[i] = Redrive::Unparsable,
        }
    }
    // Answered generations stay (see the script's header for why this read
    // cannot go stale).
    let gens: Vec<&Generation> = parsable.iter().map(|(.., g)| g).collect();
    let answered = answered(store, &gens).await?;
    let mut movable = Vec::new();
    for ((i, member, score, g), answered) in parsable.into_iter().zip(answered) {
        if answered {
            out[i] = Redrive::Answered;
        } else {
            movable.push((i, member, score_arg(score), g.claim_key()));
        }
    }
    // An entry sorted out above that is not dead answers NotDead, as the model.
    let dead = dead_flags(store, &q.dead, members).await?;
    for (i, d) in dead.into_iter().enumerate() {
        if !d {
            out[i] = Redrive::NotDead;
        }
    }
    for chunk in movable.chunks(MAX_BATCH) {
        let script = &store.scripts().redrive_dead;
        let mut call = script.prepare_invoke();
        call.key(&q.pending).key(&q.dead).key(&q.deliveries);
        for (_, member, score, claim_key) in chunk {
            call.arg(member.as_bytes()).arg(score).arg(claim_key);
        }
        let on = [q.dead.as_bytes()];
        let reply: Vec<i64> = store
            .conn()
            .script(Op::RedriveDead, script, on, &call)
            .await?;
        for ((i, ..), moved) in chunk
            .iter()
            .zip(per_item(Op::RedriveDead, reply, chunk.len())?)
        {
            out[*i] = if flag(moved) {
                Redrive::Moved
            } else {
                Redrive::NotDead
            };
        }
    }
    let moved = out.iter().filter(|o| **o == Redrive::Moved).count();
    tracing::info!(queue, moved, asked = members.len(), "dead entries redriven");
    Ok(out)
}

/// For each generation, whether its terminal marker is live: `is_terminal`
/// each, so a redrive reads markers wherever the key layout keeps them (an
/// operator's command; its round trips do not matter).
async fn answered(store: &RedisStore, gens: &[&Generation]) -> Result<Vec<bool>, StoreError> {
    let mut out = Vec::with_capacity(gens.len());
    for g in gens {
        out.push(is_terminal(store, g).await?);
    }
    Ok(out)
}

/// For each member, whether the dead hash holds it (`HEXISTS`, pipelined).
async fn dead_flags(
    store: &RedisStore,
    dead: &str,
    members: &[Member],
) -> Result<Vec<bool>, StoreError> {
    let mut pipe = redis::pipe();
    for m in members {
        pipe.hexists(dead, m.as_bytes());
    }
    store
        .conn()
        .query(Op::RedriveDead, Effect::Read, &pipe)
        .await
}
