//! A Go-behaving processor for the mixed-fleet test, built from the shared contract's §4 facts: poll, claim, heartbeat, ack, reclaim.
//!
//! It runs in a process of its own (the test binary re-executed, see
//! `main.rs`) so the test can SIGKILL it. Like today's Go processor it
//! peeks the lowest pending members with their scores, claims each with a
//! new 16-hex owner token and a lease in whole Unix seconds
//! (`min(now + ttl, deadline + 300)`), renews held claims every
//! `clamp(ttl / 3, 1 s, 30 s)` (an answer other than 1 drops the handle, and
//! an ack without a handle sends the empty token, which is fenced), acks
//! with Go's record shape and reclaims up to 100 lapsed claims per pass,
//! each at its member's score. The "inference" is a short random wait.

use claim_core::wire;
use claim_redis::testing::go::{self, GoQueue};
use redis::aio::MultiplexedConnection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The stand-in's settings (Go's transport config fields).
pub struct GoConfig {
    pub claim_lease_ttl_seconds: i64,
    pub poll_interval: Duration,
    pub batch_size: usize,
    pub claim_reclaim_interval: Duration,
    /// Claims handled at once (Go's worker pool).
    pub concurrency: usize,
    /// Bounds of the simulated inference, ms.
    pub work_ms: (u64, u64),
}

/// Held claims: claim key → (owner token, deadline).
type Held = Arc<Mutex<HashMap<String, (String, i64)>>>;

fn now_s() -> i64 {
    claim_core::unix_now()
}

/// Runs the processor on `queue` until the process is killed.
pub async fn run(conn: MultiplexedConnection, queue: GoQueue, config: GoConfig) {
    let held: Held = Arc::default();
    let ttl = config.claim_lease_ttl_seconds;
    let heartbeat = Duration::from_secs((ttl / 3).clamp(1, 30).unsigned_abs());
    tokio::spawn(heartbeats(
        conn.clone(),
        queue.clone(),
        held.clone(),
        ttl,
        heartbeat,
    ));
    tokio::spawn(reclaimer(
        conn.clone(),
        queue.clone(),
        config.claim_reclaim_interval,
    ));
    poll(conn, queue, held, config).await;
}

async fn poll(mut conn: MultiplexedConnection, queue: GoQueue, held: Held, config: GoConfig) {
    let mut tick = tokio::time::interval(config.poll_interval);
    loop {
        tick.tick().await;
        let busy = held.lock().unwrap().len();
        let n = config
            .batch_size
            .min(config.concurrency.saturating_sub(busy));
        if n == 0 {
            continue;
        }
        let Ok(peeked) = queue.peek(&mut conn, n).await else {
            continue;
        };
        for (member, _score) in peeked {
            let Ok(parsed) = wire::parse_member(&member) else {
                continue;
            };
            let key = claim_core::Generation::new(&parsed.id, &parsed.token).claim_key();
            let owner = go::owner_token();
            let expiry = go::lease_expiry(now_s(), config.claim_lease_ttl_seconds, parsed.deadline);
            if !matches!(
                queue.claim(&mut conn, &member, &key, &owner, expiry).await,
                Ok(true)
            ) {
                continue;
            }
            held.lock()
                .unwrap()
                .insert(key.clone(), (owner.clone(), parsed.deadline));
            let list = parsed
                .result_queue_name
                .clone()
                .unwrap_or_else(|| wire::DEFAULT_RESULT_LIST.to_owned());
            let record = go::record(&parsed.id, &parsed.token, 200, "{\"answer\":\"go\"}");
            let (lo, hi) = config.work_ms;
            let work = lo + u64::from_str_radix(&owner[..4], 16).unwrap_or(0) % (hi - lo).max(1);
            tokio::spawn(handle(
                conn.clone(),
                queue.clone(),
                held.clone(),
                (key, owner, list, record),
                Duration::from_millis(work),
            ));
        }
    }
}

/// Works on one claim, then acks with the handle's token (the empty token
/// when the heartbeat dropped the handle: Go's ack is then fenced).
async fn handle(
    mut conn: MultiplexedConnection,
    queue: GoQueue,
    held: Held,
    (key, owner, list, record): (String, String, String, String),
    work: Duration,
) {
    tokio::time::sleep(work).await;
    let token = match held.lock().unwrap().get(&key) {
        Some((o, _)) if *o == owner => owner.clone(),
        _ => String::new(),
    };
    let _ = queue.ack(&mut conn, &list, &key, &token, &record).await;
    let mut h = held.lock().unwrap();
    if h.get(&key).is_some_and(|(o, _)| *o == owner) {
        h.remove(&key);
    }
}

async fn heartbeats(
    mut conn: MultiplexedConnection,
    queue: GoQueue,
    held: Held,
    ttl: i64,
    every: Duration,
) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let claims: Vec<(String, (String, i64))> = held
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (key, (owner, deadline)) in claims {
            let expiry = go::lease_expiry(now_s(), ttl, deadline);
            let answer = queue.renew(&mut conn, &key, &owner, expiry).await;
            if !matches!(answer, Ok(1)) {
                let mut h = held.lock().unwrap();
                if h.get(&key).is_some_and(|(o, _)| *o == owner) {
                    h.remove(&key);
                }
            }
        }
    }
}

async fn reclaimer(mut conn: MultiplexedConnection, queue: GoQueue, every: Duration) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let _ = queue.reclaim(&mut conn, now_s()).await;
    }
}
