//! Shared fixtures of the conformance checks: a start time, members in the Go shape, a store on a manual clock.

use super::{CheckedStore, StoreFactory};
use crate::store::{ClaimRequest, StoreConfig, Submission};
use crate::types::{Generation, ManualClock, Member, Millis, OwnerToken, Score};
use std::cell::Cell;
use std::sync::Arc;

/// The suite's start time: 2023-11-14T22:13:20Z.
pub const T0: Millis = Millis(1_700_000_000_000);

thread_local! {
    /// Where this thread's fixtures start: [`T0`], or the server's own time
    /// in a server-time test (see [`super::on_server_time`]). Per thread:
    /// every test runs on its own thread, on a current-thread runtime.
    static START_MS: Cell<u64> = const { Cell::new(T0.0) };
}

/// The start time of the check running on this thread.
pub fn start() -> Millis {
    Millis(START_MS.with(Cell::get))
}

pub(super) fn set_start(at: Millis) {
    START_MS.with(|s| s.set(at.0));
}

/// The time `secs` seconds after the start.
pub fn at(secs: u64) -> Millis {
    start().plus(secs * 1000)
}

/// The queue the checks use.
pub const Q: &str = "conformance-queue";
/// The result list the checks use.
pub const RESULTS: &str = "conformance-results";

/// A store and the clock it reads.
#[derive(Debug)]
pub struct Fixture<S> {
    pub store: S,
    pub clock: Arc<ManualClock>,
}

/// A fresh store at the start time with `config`.
pub async fn fixture<F: StoreFactory>(factory: &F, config: StoreConfig) -> Fixture<F::Store> {
    let clock = ManualClock::new(start());
    let store = factory.make(config, clock.clone()).await;
    Fixture { store, clock }
}

/// A fresh store (the default config) where `who` holds one claim: of
/// request `a`, token `t`, due `deadline_in` seconds after the start.
pub async fn one_claimed<F: StoreFactory>(
    factory: &F,
    who: &str,
    deadline_in: i64,
) -> (Fixture<F::Store>, Req) {
    let fx = fixture(factory, config()).await;
    let r = Req::new("a", "t", deadline_in);
    fx.submit_and_claim(who, &r).await;
    (fx, r)
}

/// Config with a short lease (30 s) so expiry is easy to reach.
pub fn config() -> StoreConfig {
    StoreConfig {
        lease_ttl_ms: 30_000,
        result_dedup_ttl_ms: 3_600_000,
        max_deliveries: 3,
        default_result_list: RESULTS.to_owned(),
        ..StoreConfig::default()
    }
}

/// The suite's config with another delivery limit (0: unlimited).
pub fn limited(max_deliveries: u32) -> StoreConfig {
    StoreConfig {
        max_deliveries,
        ..config()
    }
}

pub fn owner(name: &str) -> OwnerToken {
    OwnerToken::new(name)
}

/// A request as the Go producer shapes it, with a deadline `deadline_in`
/// seconds after T0.
#[derive(Debug, Clone)]
pub struct Req {
    pub member: Member,
    pub generation: Generation,
    pub deadline: i64,
}

impl Req {
    pub fn new(id: &str, token: &str, deadline_in: i64) -> Req {
        let deadline = (start().0 / 1000) as i64 + deadline_in;
        let value = serde_json::json!({
            "internal": {"request_token": token, "retry_count": 0},
            "request_kind": "redis",
            "data": {"id": id, "created": deadline - 3600, "deadline": deadline,
                     "payload": {"model": "m", "prompt": id}},
        });
        Req {
            member: Member::from(value.to_string().into_bytes()),
            generation: Generation::new(id, token),
            deadline,
        }
    }

    pub fn submission(&self) -> Submission {
        Submission {
            member: self.member.clone(),
            generation: self.generation.clone(),
            deadline: self.deadline,
            payload: None,
        }
    }

    pub fn claim_request(&self) -> ClaimRequest {
        ClaimRequest {
            member: self.member.clone(),
            generation: self.generation.clone(),
        }
    }

    /// This request alone, as the batch the fixture methods take.
    pub fn one(&self) -> &[Req] {
        std::slice::from_ref(self)
    }

    /// Its pending score: the deadline.
    pub fn score(&self) -> Score {
        Score(self.deadline as f64)
    }

    /// Its ack to `list` with a record saying `text`: no payload key, no list TTL.
    pub fn ack_item(&self, list: &str, text: &str) -> crate::store::AckItem {
        crate::store::AckItem {
            generation: self.generation.clone(),
            member: self.member.clone(),
            score: self.score(),
            result_list: list.to_owned(),
            record: self.record(text),
            payload_ref: None,
            result_ttl_seconds: 0,
        }
    }

    pub fn record(&self, text: &str) -> Member {
        let record =
            serde_json::json!({"id": self.generation.id, "status_code": 200, "payload": text});
        Member::from(record.to_string().into_bytes())
    }
}

/// `n` requests `r0..rn` with token `t`, deadlines one second apart.
pub fn reqs(n: usize) -> Vec<Req> {
    (0..n)
        .map(|i| Req::new(&format!("r{i}"), "t", 3600 + i as i64))
        .collect()
}

/// Shorthands the checks use; each unwraps the store's answer.
impl<S: CheckedStore> Fixture<S> {
    pub async fn submit(&self, reqs: &[Req]) {
        for r in reqs {
            self.store.submit(Q, &r.submission()).await.expect("submit");
        }
    }

    pub async fn claim(&self, who: &str, reqs: &[Req]) -> Vec<crate::store::ClaimOutcome> {
        let items: Vec<_> = reqs.iter().map(Req::claim_request).collect();
        self.store
            .claim(Q, &owner(who), &items)
            .await
            .expect("claim")
    }

    pub async fn ack(&self, who: &str, reqs: &[Req], text: &str) -> Vec<crate::store::AckOutcome> {
        let items: Vec<_> = reqs.iter().map(|r| r.ack_item(RESULTS, text)).collect();
        self.store.ack(Q, &owner(who), &items).await.expect("ack")
    }

    pub async fn renew(&self, who: &str, reqs: &[Req]) -> Vec<crate::store::RenewOutcome> {
        let gens: Vec<_> = reqs.iter().map(|r| r.generation.clone()).collect();
        self.store
            .renew(Q, &owner(who), &gens)
            .await
            .expect("renew")
    }

    pub async fn release(&self, who: &str, reqs: &[Req]) -> Vec<bool> {
        let gens: Vec<_> = reqs.iter().map(|r| r.generation.clone()).collect();
        self.store
            .release(Q, &owner(who), &gens)
            .await
            .expect("release")
    }

    /// Pending members in order.
    pub async fn pending(&self) -> Vec<Member> {
        let entries = self.store.peek(Q, 0, 10_000).await.expect("peek");
        entries.into_iter().map(|e| e.member).collect()
    }

    /// Records in the checks' result list, oldest first, as JSON values.
    pub async fn results(&self) -> Vec<serde_json::Value> {
        let records = self.store.results(RESULTS).await.expect("results");
        records
            .iter()
            .map(|r| serde_json::from_slice(r.as_bytes()).expect("record is JSON"))
            .collect()
    }

    /// Ids of the records in the checks' result list, oldest first.
    pub async fn result_ids(&self) -> Vec<String> {
        ids_on(&self.store, RESULTS).await
    }

    pub async fn depths(&self) -> crate::store::QueueDepths {
        self.store.depths(Q).await.expect("depths")
    }

    /// Submits `n` requests ([`reqs`]) and lets `who` claim them all.
    pub async fn claim_batch(&self, who: &str, n: usize) -> Vec<Req> {
        let rs = reqs(n);
        self.submit(&rs).await;
        self.claim(who, &rs).await;
        rs
    }

    /// Submits `r` and lets `who` claim it.
    pub async fn submit_and_claim(&self, who: &str, r: &Req) {
        self.submit(r.one()).await;
        self.claim(who, r.one()).await;
    }

    /// Submits `r`, lets `who` claim it and acks it with record `text`.
    pub async fn answer(&self, who: &str, r: &Req, text: &str) -> Vec<crate::store::AckOutcome> {
        self.submit_and_claim(who, r).await;
        self.ack(who, r.one(), text).await
    }

    /// Submits `r`, lets `who` claim it and its lease run out (the clock at
    /// 31 s), and reclaims: one redelivery, or the limit.
    pub async fn lapse(&self, who: &str, r: &Req) -> crate::store::ReclaimReport {
        self.submit_and_claim(who, r).await;
        self.clock.set(at(31));
        self.reclaim_all().await
    }

    /// Reclaims until nothing expired remains.
    pub async fn reclaim_all(&self) -> crate::store::ReclaimReport {
        let mut total = crate::store::ReclaimReport::default();
        loop {
            let r = self.store.reclaim_expired(Q, 100).await.expect("reclaim");
            total.redelivered += r.redelivered;
            total.dead_lettered += r.dead_lettered;
            total.ghosts_repaired += r.ghosts_repaired;
            if !r.more {
                return total;
            }
        }
    }
}

/// The ids of the records on `list`, oldest first.
pub async fn ids_on<S: CheckedStore>(store: &S, list: &str) -> Vec<String> {
    let records = store.results(list).await.expect("results");
    records
        .iter()
        .map(|m| {
            let v: serde_json::Value =
                serde_json::from_slice(m.as_bytes()).expect("record is JSON");
            v["id"].as_str().unwrap_or_default().to_owned()
        })
        .collect()
}
