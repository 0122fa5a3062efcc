//! Reading what the workers produced: the result list as a consumer sees it, terminal markers, and what is left in Redis.
//!
//! The result list is read without popping, oldest record first, by
//! negative index: records are only ever LPUSHed at the head, so the tail
//! does not move and `LRANGE list -(seen+n) -(seen+1)` is exactly the next
//! `n` records. A read that fails (Redis restarting) is simply repeated on
//! the next poll; nothing is consumed, so nothing can be lost by the reader.

use crate::producer::Ledger;
use crate::{QUEUE, RESULTS};
use claim_core::wire::ResultRecord;
use claim_core::{ClaimInspect, Generation};
use claim_redis::RedisStore;
use redis::aio::MultiplexedConnection;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

/// Records read per LRANGE.
const PAGE: usize = 1000;

/// A plain connection that reconnects on the next call after any error.
#[derive(Debug)]
pub struct Raw {
    client: redis::Client,
    conn: Option<MultiplexedConnection>,
}

impl Raw {
    pub fn new(url: &str) -> redis::RedisResult<Raw> {
        Ok(Raw {
            client: redis::Client::open(url)?,
            conn: None,
        })
    }

    pub async fn query<T: redis::FromRedisValue>(
        &mut self,
        cmd: &redis::Cmd,
    ) -> redis::RedisResult<T> {
        if self.conn.is_none() {
            let config = redis::AsyncConnectionConfig::new()
                .set_connection_timeout(Some(Duration::from_secs(2)))
                .set_response_timeout(Some(Duration::from_secs(5)));
            let conn = self
                .client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            self.conn = Some(conn);
        }
        let conn = self.conn.as_mut().expect("connected above");
        let answer = cmd.query_async(conn).await;
        if answer.is_err() {
            self.conn = None;
        }
        answer
    }
}

/// The records read so far.
#[derive(Debug, Default)]
pub struct Records {
    /// Records read from the tail of the list.
    pub seen: usize,
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

/// Reads every record pushed since the last call.
pub async fn read_new(raw: &mut Raw, records: &Mutex<Records>) -> redis::RedisResult<()> {
    let key = RESULTS;
    loop {
        let seen = records.lock().expect("records lock").seen as isize;
        let page: Vec<Vec<u8>> = raw
            .query(&redis::Cmd::lrange(
                key,
                -(seen + PAGE as isize),
                -(seen + 1),
            ))
            .await?;
        let mut r = records.lock().expect("records lock");
        for record in page.iter().rev() {
            r.add(record);
        }
        if page.len() < PAGE {
            return Ok(());
        }
    }
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
        let keys: Vec<String> = chunk.iter().map(|g| store.keys().marker(g)).collect();
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
