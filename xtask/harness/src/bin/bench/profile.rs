//! Redis CPU per job of each hot-path step: peek, claim, ack and renew called on the store directly, each call between two readings of the server's counters.
//!
//! The runtime interleaves these steps, so its drain cannot say which
//! script costs what. Here one client peeks and claims a batch at a time
//! and acks the oldest claims once more than `--window` are held, as the
//! runtime does with a fast handler (the size of the claims index decides
//! how Redis encodes it, so the window matters); every 10th batch it
//! renews every held claim. The server's counters are read around every
//! call (`INFO cpu commandstats`); the cost of the reading itself,
//! measured on back-to-back readings, is subtracted.

use crate::Settings;
use crate::server::{Admin, Delta, Snapshot, round};
use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, StoreConfig};
use claim_core::wire::{self, ResultRecord};
use claim_core::{ClaimStore, Generation, OwnerToken, Score};
use claim_redis::{RedisStore, RedisStoreOptions};
use std::collections::{BTreeMap, VecDeque};

const STEPS: [&str; 4] = ["peek", "claim", "ack", "renew"];

/// Sums of the deltas of one step.
#[derive(Default)]
struct Step {
    cpu_us: f64,
    items: u64,
    calls: u64,
    commands: BTreeMap<String, (u64, u64)>,
}

impl Step {
    fn add(&mut self, d: Delta, items: usize, overhead_us: f64) {
        self.cpu_us += d.cpu_us - overhead_us;
        self.items += items as u64;
        self.calls += 1;
        for (name, (c, u)) in d.commands {
            let e = self.commands.entry(name).or_default();
            e.0 += c;
            e.1 += u;
        }
    }
}

/// Step name → figures, as JSON; prints one `step` line per step.
pub async fn run(set: &Settings, url: &str, admin: &Admin, window: usize) -> serde_json::Value {
    admin.flush().await.expect("FLUSHALL");
    let n = set.requests;
    let deadline = async_worker::clock::unix_now() + 3600;
    admin
        .enqueue(&set.queue, 0..n, deadline, set.payloads, |_| {})
        .await
        .expect("enqueue");
    let options = RedisStoreOptions::new(url, StoreConfig::default());
    let store = RedisStore::connect(options).await.expect("connect");
    // Shaped like the runtime's owner tokens (runtime/mod.rs).
    let owner = OwnerToken::new(format!("{:032x}", rand::random::<u128>()));

    let mut overhead = 0.0;
    let mut prev = admin.snapshot().await.expect("INFO");
    for _ in 0..200 {
        let next = admin.snapshot().await.expect("INFO");
        overhead += Admin::delta(&prev, &next).cpu_us / 200.0;
        prev = next;
    }
    let mut steps: BTreeMap<&str, Step> = STEPS.iter().map(|s| (*s, Step::default())).collect();
    let mut held: VecDeque<(ClaimRequest, Score)> = VecDeque::new();
    let mut batches = 0;
    loop {
        let before = snap(admin).await;
        let peeked = store.peek(&set.queue, 0, set.batch).await.expect("peek");
        let after = snap(admin).await;
        if peeked.is_empty() {
            break;
        }
        step(&mut steps, "peek", &before, &after, peeked.len(), overhead);
        let items: Vec<ClaimRequest> = peeked
            .into_iter()
            .map(|e| {
                let p = wire::parse_member(e.member.as_bytes()).expect("member");
                ClaimRequest {
                    member: e.member,
                    generation: Generation::new(p.id, p.token),
                }
            })
            .collect();
        let before = snap(admin).await;
        let outcomes = store
            .claim(owner.on(&set.queue), &items)
            .await
            .expect("claim");
        let after = snap(admin).await;
        step(&mut steps, "claim", &before, &after, items.len(), overhead);
        held.extend(
            items
                .into_iter()
                .zip(outcomes)
                .filter_map(|(i, o)| match o {
                    ClaimOutcome::Claimed { score, .. } => Some((i, score)),
                    _ => None,
                }),
        );
        batches += 1;
        if batches % 10 == 0 {
            let all: Vec<Generation> = held.iter().map(|(i, _)| i.generation.clone()).collect();
            for chunk in all.chunks(500) {
                let before = snap(admin).await;
                store
                    .renew(owner.on(&set.queue), chunk)
                    .await
                    .expect("renew");
                let after = snap(admin).await;
                step(&mut steps, "renew", &before, &after, chunk.len(), overhead);
            }
        }
        while held.len() > window {
            let take = set.ack_batch.min(held.len() - window);
            let acks: Vec<AckItem> = held.drain(..take).map(|h| ack_item(set, h)).collect();
            let before = snap(admin).await;
            store.ack(owner.on(&set.queue), &acks).await.expect("ack");
            let after = snap(admin).await;
            step(&mut steps, "ack", &before, &after, acks.len(), overhead);
        }
    }
    let acks: Vec<AckItem> = held.drain(..).map(|h| ack_item(set, h)).collect();
    for chunk in acks.chunks(set.ack_batch) {
        store.ack(owner.on(&set.queue), chunk).await.expect("ack");
    }
    let mut out = serde_json::Map::new();
    for (name, s) in steps {
        out.insert(name.to_owned(), report(name, &s));
    }
    out.into()
}

fn ack_item(set: &Settings, (claimed, score): (ClaimRequest, Score)) -> AckItem {
    let (g, member) = (claimed.generation, claimed.member);
    AckItem {
        record: ResultRecord::success(g.id.clone(), 200, "{}")
            .to_json_bytes()
            .into(),
        generation: g,
        score,
        payload_ref: wire::parse_member(member.as_bytes())
            .ok()
            .and_then(|p| p.payload_ref),
        member,
        result_list: set.list.clone(),
        result_ttl_seconds: 0,
    }
}

async fn snap(admin: &Admin) -> Snapshot {
    admin.snapshot().await.expect("INFO")
}

fn step(
    steps: &mut BTreeMap<&str, Step>,
    name: &str,
    before: &Snapshot,
    after: &Snapshot,
    items: usize,
    overhead: f64,
) {
    let d = Admin::delta(before, after);
    steps.get_mut(name).expect("step").add(d, items, overhead);
}

fn report(name: &str, s: &Step) -> serde_json::Value {
    let per = s.items.max(1) as f64;
    let mut top: Vec<(&String, &(u64, u64))> = s
        .commands
        .iter()
        .filter(|(c, _)| c.as_str() != "info")
        .collect();
    top.sort_by_key(|(_, (_, usec))| std::cmp::Reverse(*usec));
    let commands: serde_json::Map<String, serde_json::Value> = top
        .iter()
        .map(|(c, (calls, usec))| {
            let v = serde_json::json!({
                "calls_per_item": round(*calls as f64 / per, 4),
                "usec_per_item": round(*usec as f64 / per, 3),
            });
            ((*c).clone(), v)
        })
        .collect();
    let text: Vec<String> = top
        .iter()
        .take(10)
        .map(|(c, (calls, usec))| {
            format!("{c}:{:.2}us/{:.2}", *usec as f64 / per, *calls as f64 / per)
        })
        .collect();
    let items_per_call = s.items as f64 / s.calls.max(1) as f64;
    println!(
        "step name={name} us_per_item={:.2} items_per_call={items_per_call:.0} commands={}",
        s.cpu_us / per,
        text.join(",")
    );
    serde_json::json!({
        "redis_cpu_us_per_item": round(s.cpu_us / per, 3),
        "items_per_call": round(items_per_call, 1),
        "commands": commands,
    })
}
