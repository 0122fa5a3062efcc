//! The random walk of `model_equivalence.rs`: its seeded picks, the requests it draws from, one step of any operation on the store and the model alike, and the comparison of their whole state.

use crate::common;
use claim_core::ListReads;
use claim_core::model::Model;
use claim_core::store::{AckItem, ClaimRequest, ParkItem, StoreConfig, Submission};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Clock, Generation, ManualClock, Member, Millis,
    OwnerToken, Score, wire,
};
use claim_redis::RedisStore;
use std::sync::Arc;

pub(crate) const Q: &str = "walk";
pub(crate) const STEPS: usize = 200;

pub(crate) fn config() -> StoreConfig {
    StoreConfig {
        lease_ttl_ms: 30_000,
        result_dedup_ttl_ms: 600_000,
        max_deliveries: 2,
        default_result_list: "results".into(),
        ..StoreConfig::default()
    }
}

/// The server-time pass: a lease long enough that every lease is capped
/// at its request's deadline + 30 s.
pub(crate) fn server_time_config() -> StoreConfig {
    StoreConfig {
        lease_ttl_ms: 120_000,
        ..config()
    }
}

/// xorshift64*: small, seeded, good enough to pick steps.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn some<T: Clone>(&mut self, items: &[T], max: usize) -> Vec<T> {
        (0..1 + self.below(max))
            .map(|_| self.pick(items).clone())
            .collect()
    }
}

/// Where the walk's time comes from.
pub(crate) enum Time {
    Manual(Arc<ManualClock>),
    /// The server's `TIME`, read through the store.
    Server,
}

/// Requests: a few ids, several tokens (generations), a few deadlines
/// each, `offsets` seconds after `start`.
pub(crate) fn requests(start: Millis, offsets: [i64; 3]) -> Vec<(Member, Generation, i64)> {
    let mut out = Vec::new();
    for id in ["a", "b", "c:d", "aa"] {
        for token in ["t1", "t2"] {
            for offset in offsets {
                let deadline = (start.0 / 1000) as i64 + offset;
                let member = Member::from(common::member(id, token, deadline));
                out.push((member, Generation::new(id, token), deadline));
            }
        }
    }
    out
}

pub(crate) struct Walk {
    pub(crate) store: RedisStore,
    pub(crate) model: Model,
    pub(crate) time: Time,
    pub(crate) rng: Rng,
    pub(crate) reqs: Vec<(Member, Generation, i64)>,
    /// Acks send each generation's records to one list. The hash-tagged
    /// layout keeps a marker in its list's slot, so it suppresses a
    /// second record on that list only: exactly one record holds per
    /// generation because the runtime routes each generation to one list
    /// (Go's routing, from the member and the config).
    pub(crate) one_list_per_generation: bool,
}

impl Walk {
    async fn now(&self) -> Millis {
        match &self.time {
            Time::Manual(clock) => clock.now(),
            Time::Server => self.store.now().await.unwrap(),
        }
    }

    async fn step(&mut self, ctx: &str) -> String {
        let owners = ["w1", "w2", "w3"].map(OwnerToken::new);
        let owner = self.rng.pick(&owners).clone();
        let now = self.now().await;
        let gens: Vec<Generation> = self.reqs.iter().map(|r| r.1.clone()).collect();
        match self.rng.below(14) {
            0 | 1 => {
                let (member, generation, deadline) = self.rng.pick(&self.reqs).clone();
                let s = Submission {
                    member,
                    generation,
                    deadline,
                    payload: None,
                };
                self.store.submit(Q, &s).await.unwrap();
                self.model.submit(Q, &s, now);
                format!("submit {}", s.generation)
            }
            2 => {
                let id = self.rng.pick(&["a", "b", "c:d", "aa", "x"]).to_string();
                let got = self.store.cancel(&id).await.unwrap();
                assert_eq!(got, self.model.cancel(&id, now), "{ctx}: cancel {id}");
                format!("cancel {id}")
            }
            3 | 4 => {
                let picked = self.rng.some(&self.reqs, 5);
                let items: Vec<ClaimRequest> = picked
                    .into_iter()
                    .map(|(member, generation, _)| ClaimRequest { member, generation })
                    .collect();
                let got = self.store.claim(owner.on(Q), &items).await.unwrap();
                assert_eq!(
                    got,
                    self.model.claim(owner.on(Q), &items, now),
                    "{ctx}: claim"
                );
                format!("claim {owner} {}", items.len())
            }
            5 => {
                let g = self.rng.some(&gens, 4);
                let got = self.store.renew(owner.on(Q), &g).await.unwrap();
                assert_eq!(got, self.model.renew(owner.on(Q), &g, now), "{ctx}: renew");
                "renew".into()
            }
            6 | 7 => {
                let lists = ["results", "other"];
                let items: Vec<AckItem> = self
                    .rng
                    .some(&self.reqs, 4)
                    .into_iter()
                    .map(|(member, generation, deadline)| AckItem {
                        member,
                        score: Score(deadline as f64),
                        record: claim_core::Record::from(
                            format!(
                                "{{\"id\":\"{}\",\"n\":{}}}",
                                generation.id,
                                self.rng.below(100)
                            )
                            .into_bytes(),
                        ),
                        result_list: if self.one_list_per_generation {
                            // As the runtime routes: one list per generation.
                            lists[generation.id.len() % 2].to_string()
                        } else {
                            self.rng.pick(&lists).to_string()
                        },
                        generation,
                        payload_ref: None,
                        result_ttl_seconds: 0,
                    })
                    .collect();
                let got = self.store.ack(owner.on(Q), &items).await.unwrap();
                assert_eq!(got, self.model.ack(owner.on(Q), &items, now), "{ctx}: ack");
                format!("ack {owner} {}", items.len())
            }
            8 => {
                let g = self.rng.some(&gens, 3);
                let got = self.store.release(owner.on(Q), &g).await.unwrap();
                let want = self.model.release(owner.on(Q), &g, now);
                assert_eq!(got, want, "{ctx}: release");
                "release".into()
            }
            9 => {
                let picked = self.rng.some(&self.reqs, 3);
                let items: Vec<ParkItem> = picked
                    .into_iter()
                    .map(|(member, generation, _)| ParkItem {
                        member: Member::from(wire::stamp_retry(member.as_bytes(), Q).unwrap()),
                        generation,
                        due: match self.time {
                            Time::Manual(_) => now.plus(self.rng.below(60_000) as u64),
                            // Due long ago or far ahead: never at the edge.
                            Time::Server => {
                                Millis(now.0 - 10_000 + 70_000 * self.rng.below(2) as u64)
                            }
                        },
                    })
                    .collect();
                let got = self.store.park_retry(owner.on(Q), &items).await.unwrap();
                assert_eq!(
                    got,
                    self.model.park_retry(owner.on(Q), &items, now),
                    "{ctx}: park"
                );
                "park".into()
            }
            10 => {
                let limit = self.rng.below(4);
                let got = self.store.promote_due(limit).await.unwrap();
                assert_eq!(
                    got,
                    self.model.promote_due(limit, now),
                    "{ctx}: promote {limit}"
                );
                format!("promote {limit}")
            }
            11 => {
                let limit = self.rng.below(4);
                let got = self.store.reclaim_expired(Q, limit).await.unwrap();
                assert_eq!(
                    got,
                    self.model.reclaim_expired(Q, limit, now),
                    "{ctx}: reclaim {limit}"
                );
                format!("reclaim {limit}")
            }
            12 => {
                let (member, _, _) = self.rng.pick(&self.reqs).clone();
                let got = self
                    .store
                    .dead_letter(Q, &member, "test reason")
                    .await
                    .unwrap();
                assert_eq!(
                    got,
                    self.model.dead_letter(Q, &member, "test reason", now),
                    "{ctx}: dead_letter"
                );
                "dead_letter".into()
            }
            _ => {
                let ms = [0, 1, 999, 5_000, 15_000, 30_000, 31_000, 700_000][self.rng.below(8)];
                match &self.time {
                    Time::Manual(clock) => clock.advance(ms),
                    Time::Server => return "no time jump on the server's clock".into(),
                }
                format!("advance {ms}")
            }
        }
    }

    async fn compare_state(&self, ctx: &str) {
        let now = self.now().await;
        let server_time = matches!(self.time, Time::Server);
        let s = &self.store;
        let m = &self.model;
        let default_queue = config().default_queue;
        for queue in [Q, default_queue.as_str()] {
            assert_eq!(
                s.peek(queue, 0, 1000).await.unwrap(),
                m.peek(queue, 0, 1000),
                "{ctx}: pending of {queue}"
            );
            assert_eq!(
                s.claims(queue).await.unwrap(),
                m.claims(queue),
                "{ctx}: claims of {queue}"
            );
            let dead = |entries: Vec<claim_core::store::DeadEntry>| -> Vec<_> {
                entries
                    .into_iter()
                    .map(|d| {
                        (
                            d.member,
                            d.reason,
                            if server_time { Millis(0) } else { d.at },
                        )
                    })
                    .collect()
            };
            assert_eq!(
                dead(s.dead_entries(queue).await.unwrap()),
                dead(m.dead_entries(queue)),
                "{ctx}: dead of {queue}"
            );
            assert_eq!(
                s.depths(queue).await.unwrap(),
                m.depths(queue),
                "{ctx}: depths of {queue}"
            );
        }
        assert_eq!(
            s.retry_entries().await.unwrap(),
            m.retry_entries(),
            "{ctx}: retries"
        );
        for list in ["results", "other"] {
            assert_eq!(
                s.results(list).await.unwrap(),
                m.results(list),
                "{ctx}: list {list}"
            );
        }
        let gens: Vec<Generation> = self.reqs.iter().map(|r| r.1.clone()).collect();
        assert_eq!(
            s.cancelled(&gens).await.unwrap(),
            m.cancelled(&gens, now),
            "{ctx}: cancelled"
        );
        for g in &gens {
            assert_eq!(
                s.is_terminal(g).await.unwrap(),
                m.is_terminal(g, now),
                "{ctx}: marker of {g}"
            );
        }
    }
}

/// Runs `walk` for [`STEPS`] steps, comparing the whole state after each;
/// a failure names `seed`, the step and the steps just before.
pub(crate) async fn run(mut walk: Walk, seed: u64) {
    let mut trail: Vec<String> = Vec::new();
    for step in 0..STEPS {
        let recent = trail[trail.len().saturating_sub(6)..].join(", ");
        let ctx = format!("seed {seed}, step {step}, after [{recent}]");
        let what = walk.step(&ctx).await;
        trail.push(what);
        let ctx = format!("{ctx}, {}", trail[trail.len() - 1]);
        walk.compare_state(&ctx).await;
    }
}
