//! Reading what the workers produced: the result list as a consumer sees it, terminal markers, and what is left in Redis.
//!
//! The result list is read without popping, oldest record first, by
//! negative index: records are only ever LPUSHed at the head, so the tail
//! does not move and `LRANGE list -(read+n) -(read+1)` is exactly the next
//! `n` records. A read that fails (Redis restarting) is simply repeated on
//! the next poll; nothing is consumed, so nothing can be lost by the reader.
//!
//! A Redis SIGKILL under `everysec`, or a failover with asynchronous
//! replication, can undo the newest pushes: the head is cut back, and new
//! pushes take the lost records' places. Each read first checks that the
//! last record read is still where it was; if not, it steps back to the
//! newest record still in place and reads on from there. The records it
//! had read beyond that stay counted (a consumer had them), and the
//! generations they answered are redelivered and answered again: extra
//! records, counted and explained.

use crate::producer::Ledger;
use crate::raw::Raw;
use crate::{QUEUE, RESULTS};
use claim_core::wire::ResultRecord;
use claim_core::{ClaimInspect, Generation};
use claim_redis::RedisStore;
use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

/// Records read per LRANGE.
const PAGE: usize = 1000;

/// The records read so far.
#[derive(Debug, Default)]
pub struct Records {
    /// Records read from the tail of the list.
    pub seen: usize,
    /// A hash of each record in the list, tail first, as read: where the
    /// next read starts, and what checks that the list was not cut back.
    in_place: Vec<u64>,
    /// Records read that the list later lost (cut back by a restart or a failover).
    pub undone: usize,
    pub per_id: HashMap<String, usize>,
    /// Records by error code (`OK` for successes).
    pub codes: BTreeMap<String, usize>,
    /// The codes of each generation's records, by the record's `request_token`.
    pub by_generation: HashMap<Generation, Vec<String>>,
    /// Records without a `request_token`.
    pub tokenless: usize,
    pub unreadable: usize,
}

impl Records {
    fn add(&mut self, raw: &[u8]) {
        self.seen += 1;
        self.in_place.push(digest(raw));
        let Ok(record) = ResultRecord::from_json(raw) else {
            self.unreadable += 1;
            return;
        };
        let code = record.error_code.map_or("OK", |c| c.as_str());
        *self.codes.entry(code.to_owned()).or_default() += 1;
        match record.request_token.as_deref() {
            Some(token) if !token.is_empty() => self
                .by_generation
                .entry(Generation::new(record.id.clone(), token))
                .or_default()
                .push(code.to_owned()),
            _ => self.tokenless += 1,
        }
        *self.per_id.entry(record.id).or_default() += 1;
    }

    /// Accepted generations whose id has fewer records than generations.
    pub fn unanswered(&self, ledger: &Ledger) -> usize {
        ledger
            .generations
            .iter()
            .map(|(id, tokens)| tokens.len().saturating_sub(self.count(id)))
            .sum()
    }

    pub fn count(&self, id: &str) -> usize {
        self.per_id.get(id).copied().unwrap_or(0)
    }
}

fn digest(record: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    record.hash(&mut h);
    h.finish()
}

/// Reads every record pushed since the last call.
pub async fn read_new(raw: &mut Raw, records: &Mutex<Records>) -> redis::RedisResult<()> {
    let key = RESULTS;
    loop {
        let (read, last) = {
            let r = records.lock().expect("records lock");
            (r.in_place.len() as isize, r.in_place.last().copied())
        };
        // The last record read, then the next page, in one call to one node.
        let mut pipe = redis::pipe();
        pipe.cmd("LINDEX").arg(key).arg(-read.max(1));
        pipe.lrange(key, -(read + PAGE as isize), -(read + 1));
        let (at_last, page): (Option<Vec<u8>>, Vec<Vec<u8>>) = raw.pipe(&pipe).await?;
        if let Some(last) = last
            && at_last.as_deref().map(digest) != Some(last)
        {
            step_back(raw, records).await?;
            continue;
        }
        let mut r = records.lock().expect("records lock");
        for record in page.iter().rev() {
            r.add(record);
        }
        if page.len() < PAGE {
            return Ok(());
        }
    }
}

/// The list was cut back: forgets the positions of the records read that
/// are no longer where they were, down to the newest one still in place.
async fn step_back(raw: &mut Raw, records: &Mutex<Records>) -> redis::RedisResult<()> {
    let mut keep = records.lock().expect("records lock").in_place.len();
    while keep > 0 {
        let at: Option<Vec<u8>> = raw
            .query(redis::cmd("LINDEX").arg(RESULTS).arg(-(keep as isize)))
            .await?;
        let expected = records.lock().expect("records lock").in_place[keep - 1];
        if at.as_deref().map(digest) == Some(expected) {
            break;
        }
        keep -= 1;
    }
    let mut r = records.lock().expect("records lock");
    let cut = r.in_place.len() - keep;
    r.undone += cut;
    r.in_place.truncate(keep);
    Ok(())
}

/// The length of the result list.
pub async fn list_len(raw: &mut Raw) -> redis::RedisResult<usize> {
    raw.query(&redis::Cmd::llen(RESULTS)).await
}

/// How many of `generations` have no terminal marker (MGET in pages).
pub async fn unmarked(
    raw: &mut Raw,
    store: &RedisStore,
    generations: &[Generation],
) -> redis::RedisResult<usize> {
    let mut missing = 0;
    for chunk in generations.chunks(500) {
        // Every marker of the run's list lies in the list's slot (one MGET
        // in a cluster too); the plain layout ignores the list.
        let list = store.keys().list(RESULTS);
        let keys: Vec<String> = chunk
            .iter()
            .map(|g| store.keys().marker_for(&list, g))
            .collect();
        let values: Vec<Option<Vec<u8>>> = raw.query(redis::cmd("MGET").arg(&keys)).await?;
        missing += values.iter().filter(|v| v.is_none()).count();
    }
    Ok(missing)
}

/// What is still in the queue's bookkeeping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leftovers {
    pub pending: usize,
    pub claimed: usize,
    pub retrying: usize,
    pub dead: usize,
}

impl Leftovers {
    /// Nothing pending, claimed or parked (dead entries are answered).
    pub fn settled(&self) -> bool {
        self.pending == 0 && self.claimed == 0 && self.retrying == 0
    }
}

pub async fn leftovers(store: &RedisStore) -> Result<Leftovers, claim_core::StoreError> {
    let depths = store.depths(QUEUE).await?;
    Ok(Leftovers {
        pending: depths.pending,
        claimed: depths.claimed,
        retrying: store.retry_depth().await?,
        dead: depths.dead,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::Target;
    use claim_redis::testing::{RedisServer, RedisServerOptions, require_redis_server};

    #[tokio::test]
    async fn a_result_list_cut_back_and_grown_again_is_read_on_from_the_newest_record_still_in_place()
     {
        if require_redis_server().is_none() {
            eprintln!("skipped: redis-server not on PATH");
            return;
        }
        let server = RedisServer::start(RedisServerOptions::default()).expect("a redis-server");
        let mut raw = Raw::new(&Target::Server(server.url()));
        let records = Mutex::new(Records::default());
        let push = |items: &[&str]| redis::Cmd::lpush(RESULTS, items);
        let () = raw.query(&push(&["a", "b", "c"])).await.unwrap();
        read_new(&mut raw, &records).await.unwrap();
        // A failover undoes the two newest pushes; three new ones follow.
        let _: Vec<String> = raw
            .query(redis::cmd("LPOP").arg(RESULTS).arg(2))
            .await
            .unwrap();
        let () = raw.query(&push(&["d", "e", "f"])).await.unwrap();
        read_new(&mut raw, &records).await.unwrap();
        let r = records.lock().unwrap();
        assert_eq!(r.seen, 6, "a, b, c, then d, e, f: every record read once");
        assert_eq!(r.undone, 2, "b and c were read, then gone from the list");
        let list: Vec<Vec<u8>> = ["a", "d", "e", "f"].map(|s| s.as_bytes().to_vec()).into();
        let expected: Vec<u64> = list.iter().map(|r| digest(r)).collect();
        assert_eq!(
            r.in_place, expected,
            "positions follow the list as it is now"
        );
    }
}
