//! Test support: today's Go processor's claim protocol (claim, renew, release, ack, reclaim), rebuilt from the shared contract's §4 facts, for mixed-fleet tests.
//!
//! Written from the contract's description only (no upstream code): each
//! script does what §4 says the Go script does, with Go's keys (the same
//! `<q>:claimed`, `<q>:claim-owners`, `<q>:claims-idx`), claim key
//! `<id>\0<token>`, a bare 16-hex owner token, lease expiries in whole Unix
//! seconds, and no delivery counter, marker or dead set. Time is passed in
//! (`now_s`), so tests on an explicit clock can drive it.

use crate::keys::QueueKeys;
use redis::aio::MultiplexedConnection;
use redis::{RedisResult, Script, ScriptInvocation};
use std::sync::OnceLock;

/// Go's claim. KEYS: pending, claimed, owners, idx. ARGV: member, claim
/// key, owner token, lease expiry (s). Returns 1 claimed, 0 when the exact
/// member was not pending (another processor won). Correct because the
/// ZREM decides alone who wins; the writes overwrite any claim under the key.
const CLAIM: &str = r"
-- KEYS pending, claimed, owners, idx; ARGV member, key, owner, expiry_s.
-- Returns 1 claimed, 0 lost. ZREM picks one winner; HSET/ZADD overwrite.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[2])
return 1
";

/// Go's renew. KEYS: claimed, idx, owners (Go's order). ARGV: key, owner,
/// expiry (s). Returns 1 renewed, -1 another owner holds a claim, 0 gone.
const RENEW: &str = r"
-- KEYS claimed, idx, owners; ARGV key, owner, expiry_s.
-- Returns 1 renewed, -1 lost to another claim, 0 no claim. Owner-checked.
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return -1 end
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
";

/// Go's release. KEYS: pending, claimed, owners, idx. ARGV: key, owner,
/// score. Returns 1 returned to pending, 0 not the owner.
const RELEASE: &str = r"
-- KEYS pending, claimed, owners, idx; ARGV key, owner, score.
-- Returns 1 released, 0 not the owner. Owner-checked, then one atomic move.
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
local member = redis.call('HGET', KEYS[2], ARGV[1])
if member then redis.call('ZADD', KEYS[1], ARGV[3], member) end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
";

/// Go's ack. KEYS: owners, claimed, idx, result list. ARGV: key, owner,
/// record, list TTL (s). Returns 1 pushed, 0 fenced (empty token or not
/// the owner). No terminal marker: Go writes none.
const ACK: &str = r"
-- KEYS owners, claimed, idx, list; ARGV key, owner, record, ttl_s.
-- Returns 1 pushed, 0 fenced. Owner check before any write.
if ARGV[2] == '' or redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('LPUSH', KEYS[4], ARGV[3])
if tonumber(ARGV[4]) > 0 then redis.call('EXPIRE', KEYS[4], ARGV[4]) end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
";

/// Go's reclaim of one claim. KEYS: pending, claimed, owners, idx. ARGV:
/// key, now (s), score. Returns 1 back in pending, 0 not expired or no
/// claimed entry (the idx entry is then dropped).
const RECLAIM_ONE: &str = r"
-- KEYS pending, claimed, owners, idx; ARGV key, now_s, score.
-- Returns 1 reclaimed, 0 otherwise. Re-checks expiry inside the script.
local expiry = redis.call('ZSCORE', KEYS[4], ARGV[1])
if not expiry or tonumber(expiry) > tonumber(ARGV[2]) then return 0 end
local member = redis.call('HGET', KEYS[2], ARGV[1])
if not member then
  redis.call('ZREM', KEYS[4], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[3], member)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
";

struct Scripts {
    claim: Script,
    renew: Script,
    release: Script,
    ack: Script,
    reclaim_one: Script,
}

fn scripts() -> &'static Scripts {
    static SCRIPTS: OnceLock<Scripts> = OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        claim: Script::new(CLAIM),
        renew: Script::new(RENEW),
        release: Script::new(RELEASE),
        ack: Script::new(ACK),
        reclaim_one: Script::new(RECLAIM_ONE),
    })
}

/// Go's pending score of a member: `deadline + min(seq, 2^21-1) / 2^21`
/// (bare deadline without a positive `internal.enqueue_seq`); 0 when the
/// member cannot be read or has no integer deadline, as Go's reclaimer.
pub fn score(member: &[u8]) -> f64 {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(member) else {
        return 0.0;
    };
    let Some(deadline) = v["data"]["deadline"].as_i64() else {
        return 0.0;
    };
    let seq = v["internal"]["enqueue_seq"].as_i64().unwrap_or(0);
    let frac = if seq > 0 {
        seq.min((1 << 21) - 1) as f64 / (1u64 << 21) as f64
    } else {
        0.0
    };
    deadline as f64 + frac
}

/// A score as ZADD text with 17 significant digits, as Go writes it.
pub fn score_text(score: f64) -> String {
    format!("{score:.16e}")
}

/// Go's lease expiry in whole Unix seconds: `min(now + ttl, deadline + 300)`.
pub fn lease_expiry(now_s: i64, ttl_s: i64, deadline: i64) -> i64 {
    (now_s + ttl_s).min(deadline + 300)
}

/// A new Go owner token: 8 random bytes as 16 lowercase hex.
pub fn owner_token() -> String {
    format!("{:016x}", super::random_u64())
}

/// Go's result record (§7), in Go's field order: `id`, `status_code` when
/// positive, `payload`, `request_token` when present (no error fields:
/// this stand-in only answers successes).
pub fn record(id: &str, token: &str, status: u16, payload: &str) -> String {
    let text = |s: &str| serde_json::Value::from(s).to_string();
    let mut r = format!("{{\"id\":{}", text(id));
    if status > 0 {
        r.push_str(&format!(",\"status_code\":{status}"));
    }
    r.push_str(&format!(",\"payload\":{}", text(payload)));
    if !token.is_empty() {
        r.push_str(&format!(",\"request_token\":{}", text(token)));
    }
    r.push('}');
    r
}

/// A call of `script` with `keys`, ready for its arguments.
fn invocation<'a>(script: &'a Script, keys: &[&str]) -> ScriptInvocation<'a> {
    let mut call = script.prepare_invoke();
    for key in keys {
        call.key(*key);
    }
    call
}

/// One Go processor's view of a queue's claim keys.
#[derive(Debug, Clone)]
pub struct GoQueue {
    pub keys: QueueKeys,
}

impl GoQueue {
    pub fn new(keys: QueueKeys) -> Self {
        GoQueue { keys }
    }

    /// The keys Go's claim, release and reclaim scripts take, in their
    /// order: pending, claimed, owners, index.
    fn queue_keys(&self) -> [&str; 4] {
        let k = &self.keys;
        [&k.pending, &k.claimed, &k.owners, &k.index]
    }

    /// The n lowest pending members with their scores (Go's peek).
    pub async fn peek(
        &self,
        conn: &mut MultiplexedConnection,
        n: usize,
    ) -> RedisResult<Vec<(Vec<u8>, f64)>> {
        redis::cmd("ZRANGE")
            .arg(&self.keys.pending)
            .arg(0)
            .arg(n.saturating_sub(1))
            .arg("WITHSCORES")
            .query_async(conn)
            .await
    }

    /// Go's claim script; true when this owner won the member.
    pub async fn claim(
        &self,
        conn: &mut MultiplexedConnection,
        member: &[u8],
        key: &str,
        owner: &str,
        expiry_s: i64,
    ) -> RedisResult<bool> {
        let won: i64 = invocation(&scripts().claim, &self.queue_keys())
            .arg((member, key, owner, expiry_s))
            .invoke_async(conn)
            .await?;
        Ok(won == 1)
    }

    /// Go's renew script: 1 renewed, -1 lost to another claim, 0 gone.
    pub async fn renew(
        &self,
        conn: &mut MultiplexedConnection,
        key: &str,
        owner: &str,
        expiry_s: i64,
    ) -> RedisResult<i64> {
        let k = &self.keys;
        invocation(&scripts().renew, &[&k.claimed, &k.index, &k.owners])
            .arg((key, owner, expiry_s))
            .invoke_async(conn)
            .await
    }

    /// Go's release script, at the member's score; true when released.
    pub async fn release(
        &self,
        conn: &mut MultiplexedConnection,
        key: &str,
        owner: &str,
        score: f64,
    ) -> RedisResult<bool> {
        let done: i64 = invocation(&scripts().release, &self.queue_keys())
            .arg((key, owner, score_text(score)))
            .invoke_async(conn)
            .await?;
        Ok(done == 1)
    }

    /// Go's owner-checked ack to `list`; true when the record was pushed.
    pub async fn ack(
        &self,
        conn: &mut MultiplexedConnection,
        list: &str,
        key: &str,
        owner: &str,
        record: &str,
    ) -> RedisResult<bool> {
        let k = &self.keys;
        let pushed: i64 = invocation(&scripts().ack, &[&k.owners, &k.claimed, &k.index, list])
            .arg((key, owner, record, 0))
            .invoke_async(conn)
            .await?;
        Ok(pushed == 1)
    }

    /// Go's reclaimer pass: up to 100 idx entries expired by `now_s`, each
    /// returned at its member's score. Returns how many went back.
    pub async fn reclaim(
        &self,
        conn: &mut MultiplexedConnection,
        now_s: i64,
    ) -> RedisResult<usize> {
        let k = &self.keys;
        let due: Vec<String> = redis::cmd("ZRANGEBYSCORE")
            .arg(&k.index)
            .arg("-inf")
            .arg(now_s)
            .arg("LIMIT")
            .arg(0)
            .arg(100)
            .query_async(conn)
            .await?;
        let mut back = 0;
        for key in due {
            let member: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(&k.claimed)
                .arg(&key)
                .query_async(conn)
                .await?;
            let s = member.as_deref().map_or(0.0, score);
            let n: i64 = invocation(&scripts().reclaim_one, &self.queue_keys())
                .arg((&key, now_s, score_text(s)))
                .invoke_async(conn)
                .await?;
            back += usize::from(n == 1);
        }
        Ok(back)
    }
}
