//! Shared fixtures of the conformance checks: members in the Go shape, a store on a manual clock starting where its factory says.

use super::StoreFactory;
use crate::CheckedStore;
use claim_core::Record;
use claim_core::clock::ManualClock;
use claim_core::store::{ClaimRequest, ParkItem, StoreConfig, Submission};
use claim_core::types::{Generation, Member, Millis, OwnerToken, Score};
use std::sync::Arc;

pub use crate::factory::T0;

/// The queue the checks use.
pub const Q: &str = "conformance-queue";
/// The result list the checks use.
pub const RESULTS: &str = "conformance-results";

/// A store, the clock it reads and where that clock started.
#[derive(Debug)]
pub struct Fixture<S> {
    pub store: S,
    pub clock: Arc<ManualClock>,
    /// The factory's start: [`T0`], or the server's own time in the
    /// server-time pass.
    pub start: Millis,
}

/// A fresh store at the factory's start time with `config`.
pub async fn fixture<F: StoreFactory>(factory: &F, config: StoreConfig) -> Fixture<F::Store> {
    let start = factory.start();
    let clock = ManualClock::new(start);
    let store = factory.make(config, clock.clone()).await;
    Fixture {
        store,
        clock,
        start,
    }
}

/// A fresh store (the default config) where `who` holds one claim: of
/// request `a`, token `t`, due `deadline_in` seconds after the start.
pub async fn one_claimed<F: StoreFactory>(
    factory: &F,
    who: &str,
    deadline_in: i64,
) -> (Fixture<F::Store>, Req) {
    let fx = fixture(factory, config()).await;
    let r = fx.req("a", "t", deadline_in);
    fx.submit_and_claim(who, &r).await;
    (fx, r)
}

/// A fresh store (the default config) where `w1` answered request `a`
/// (token `t`, due an hour after the start) with record `text`.
pub async fn one_answered<F: StoreFactory>(factory: &F, text: &str) -> (Fixture<F::Store>, Req) {
    let fx = fixture(factory, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.answer("w1", &r, text).await;
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

/// [`limited`], with queue [`Q`]'s result list configured as `list`.
pub fn limited_with_list(max_deliveries: u32, list: &str) -> StoreConfig {
    let mut cfg = limited(max_deliveries);
    cfg.queue_result_lists.insert(Q.to_owned(), list.to_owned());
    cfg
}

pub fn owner(name: &str) -> OwnerToken {
    OwnerToken::new(name)
}

/// A request as the Go producer shapes it, with a deadline `deadline_in`
/// seconds after a fixture's start ([`Fixture::req`]).
#[derive(Debug, Clone)]
pub struct Req {
    pub member: Member,
    pub generation: Generation,
    pub deadline: i64,
}

impl Req {
    pub fn new(start: Millis, id: &str, token: &str, deadline_in: i64) -> Req {
        let deadline = (start.0 / 1000) as i64 + deadline_in;
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
    pub fn ack_item(&self, list: &str, text: &str) -> claim_core::store::AckItem {
        claim_core::store::AckItem {
            generation: self.generation.clone(),
            member: self.member.clone(),
            score: self.score(),
            result_list: list.to_owned(),
            record: self.record(text),
            payload_ref: None,
            result_ttl_seconds: 0,
        }
    }

    pub fn record(&self, text: &str) -> Record {
        let record =
            serde_json::json!({"id": self.generation.id, "status_code": 200, "payload": text});
        Record::from(record.to_string().into_bytes())
    }
}

/// Times and requests relative to the fixture's start.
impl<S> Fixture<S> {
    /// The time `secs` seconds after the start.
    pub fn at(&self, secs: u64) -> Millis {
        self.start.plus(secs * 1000)
    }

    /// Request `id` of generation `token`, due `deadline_in` seconds after the start.
    pub fn req(&self, id: &str, token: &str, deadline_in: i64) -> Req {
        Req::new(self.start, id, token, deadline_in)
    }

    /// `n` requests `r0..rn` with token `t`, deadlines one second apart.
    pub fn reqs(&self, n: usize) -> Vec<Req> {
        (0..n)
            .map(|i| self.req(&format!("r{i}"), "t", 3600 + i as i64))
            .collect()
    }
}

/// Shorthands the checks use; each unwraps the store's answer.
impl<S: CheckedStore> Fixture<S> {
    pub async fn submit(&self, reqs: &[Req]) {
        for r in reqs {
            self.store.submit(Q, &r.submission()).await.expect("submit");
        }
    }

    pub async fn claim(&self, who: &str, reqs: &[Req]) -> Vec<claim_core::store::ClaimOutcome> {
        let items: Vec<_> = reqs.iter().map(Req::claim_request).collect();
        self.store
            .claim(owner(who).on(Q), &items)
            .await
            .expect("claim")
    }

    pub async fn ack(
        &self,
        who: &str,
        reqs: &[Req],
        text: &str,
    ) -> Vec<claim_core::store::AckOutcome> {
        let items: Vec<_> = reqs.iter().map(|r| r.ack_item(RESULTS, text)).collect();
        self.store.ack(owner(who).on(Q), &items).await.expect("ack")
    }

    pub async fn renew(&self, who: &str, reqs: &[Req]) -> Vec<claim_core::store::RenewOutcome> {
        let gens: Vec<_> = reqs.iter().map(|r| r.generation.clone()).collect();
        self.store
            .renew(owner(who).on(Q), &gens)
            .await
            .expect("renew")
    }

    pub async fn release(&self, who: &str, reqs: &[Req]) -> Vec<bool> {
        let gens: Vec<_> = reqs.iter().map(|r| r.generation.clone()).collect();
        self.store
            .release(owner(who).on(Q), &gens)
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

    pub async fn depths(&self) -> claim_core::store::QueueDepths {
        self.store.depths(Q).await.expect("depths")
    }

    /// Asserts the one record on the checks' list is `id`'s and nothing is
    /// left pending or claimed: the request was answered exactly once.
    pub async fn assert_answered_once(&self, id: &str) {
        assert_eq!(self.result_ids().await, vec![id]);
        let d = self.depths().await;
        assert_eq!((d.pending, d.claimed), (0, 0));
    }

    /// Submits `n` requests ([`reqs`]) and lets `who` claim them all.
    pub async fn claim_batch(&self, who: &str, n: usize) -> Vec<Req> {
        let rs = self.reqs(n);
        self.submit(&rs).await;
        self.claim(who, &rs).await;
        rs
    }

    /// Submits `r` and lets `who` claim it.
    /// `who` parks its claim of `carrier` with `member` as the retry entry,
    /// due `due_in` s after the start: the traits have no raw write to the
    /// retry set, so a claim carries any member there. One flag, as
    /// `park_retry` answers.
    pub async fn park_as(
        &self,
        who: &str,
        carrier: &Req,
        member: Vec<u8>,
        due_in: u64,
    ) -> Vec<bool> {
        let item = ParkItem {
            generation: carrier.generation.clone(),
            member: Member::from(member),
            due: self.at(due_in),
        };
        self.store
            .park_retry(owner(who).on(Q), &[item])
            .await
            .expect("park")
    }

    pub async fn submit_and_claim(&self, who: &str, r: &Req) {
        self.submit(r.one()).await;
        self.claim(who, r.one()).await;
    }

    /// Submits `r`, lets `who` claim it and acks it with record `text`.
    pub async fn answer(
        &self,
        who: &str,
        r: &Req,
        text: &str,
    ) -> Vec<claim_core::store::AckOutcome> {
        self.submit_and_claim(who, r).await;
        self.ack(who, r.one(), text).await
    }

    /// Submits `r`, lets `who` claim it and its lease run out (the clock at
    /// 31 s), and reclaims: one redelivery, or the limit.
    pub async fn lapse(&self, who: &str, r: &Req) -> claim_core::store::ReclaimReport {
        self.submit_and_claim(who, r).await;
        self.reclaim_at(31).await
    }

    /// Sets the clock `secs` seconds after the start and reclaims until
    /// nothing expired remains.
    pub async fn reclaim_at(&self, secs: u64) -> claim_core::store::ReclaimReport {
        self.clock.set(self.at(secs));
        self.reclaim_all().await
    }

    /// Reclaims until nothing expired remains.
    pub async fn reclaim_all(&self) -> claim_core::store::ReclaimReport {
        let mut total = claim_core::store::ReclaimReport::default();
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
