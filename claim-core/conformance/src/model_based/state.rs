//! The reference state: the claim-core model plus what producers and workers believe, and the test's fixed setup.

use claim_core::model::Model;
use claim_core::store::{StoreConfig, Submission};
use claim_core::types::{Generation, Member, Millis, OwnerToken, Score};
use std::collections::BTreeMap;

/// The two queues; the second has its own result list.
pub const QUEUES: [&str; 2] = ["mb-queue-a", "mb-queue-b"];
/// Every result list a record can reach: the default, queue b's, and one members name.
pub const LISTS: [&str; 3] = ["mb-results", "mb-results-b", "mb-results-member"];
/// Workers (replicas) taking part.
pub const WORKERS: usize = 3;
/// Time at the start of every case.
pub const START: Millis = Millis(1_700_000_000_000);
/// The lease TTL: short, so time jumps expire leases.
pub const LEASE_TTL_MS: u64 = 30_000;
/// Terminal markers outlive any case (30 days).
pub const DEDUP_TTL_MS: u64 = 30 * 24 * 3_600_000;

/// The store settings of a case.
pub fn config(max_deliveries: u32) -> StoreConfig {
    StoreConfig {
        lease_ttl_ms: LEASE_TTL_MS,
        result_dedup_ttl_ms: DEDUP_TTL_MS,
        max_deliveries,
        retry_set: "mb-retry".to_owned(),
        default_queue: QUEUES[0].to_owned(),
        default_result_list: LISTS[0].to_owned(),
        queue_result_lists: BTreeMap::from([(QUEUES[1].to_owned(), LISTS[1].to_owned())]),
        ..StoreConfig::default()
    }
}

/// A claim a worker believes it holds (or held, once lost).
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub queue: String,
    pub member: Member,
    /// The pending score the claim answered.
    pub score: Score,
    pub cancelled: bool,
}

/// One worker process; a crash or restart starts a new incarnation.
#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    pub index: usize,
    pub incarnation: u32,
    /// Claims it believes it holds.
    pub held: BTreeMap<Generation, Held>,
    /// Claims a renewal reported lost, whose results it may still offer.
    pub lost: BTreeMap<Generation, Held>,
    /// Members it saw in a peek and has not tried to claim yet.
    pub peeked: Vec<(String, Member)>,
}

impl Worker {
    fn new(index: usize) -> Self {
        Worker {
            index,
            incarnation: 0,
            held: BTreeMap::new(),
            lost: BTreeMap::new(),
            peeked: Vec::new(),
        }
    }

    /// This incarnation's owner token.
    pub fn owner(&self) -> OwnerToken {
        OwnerToken::new(format!("w{}.{}", self.index, self.incarnation))
    }

    /// A new process: new owner token, nothing remembered.
    pub fn restart(&mut self) {
        *self = Worker {
            incarnation: self.incarnation + 1,
            ..Worker::new(self.index)
        };
    }
}

/// A generation the producer submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    pub queue: String,
    pub submission: Submission,
    /// How many times the producer submitted it (a retried submit adds one).
    pub copies: u32,
}

/// Everything the test knows: the model and every participant's beliefs.
#[derive(Debug, Clone)]
pub struct RefState {
    pub model: Model,
    pub now: Millis,
    pub workers: Vec<Worker>,
    pub generations: BTreeMap<Generation, Submitted>,
    /// Unparsable members submitted, with their queue.
    pub garbage: Vec<(String, Member)>,
    /// Numbers ids and tokens.
    pub serial: u32,
    /// The first rule of the design a model answer broke (see `oracle`).
    pub violation: Option<String>,
}

impl RefState {
    pub fn new(max_deliveries: u32) -> Self {
        RefState {
            model: Model::new(config(max_deliveries)),
            now: START,
            workers: (0..WORKERS).map(Worker::new).collect(),
            generations: BTreeMap::new(),
            garbage: Vec::new(),
            serial: 0,
            violation: None,
        }
    }

    /// The current time in whole Unix seconds (deadlines are whole seconds).
    pub fn now_secs(&self) -> i64 {
        (self.now.0 / 1000) as i64
    }

    pub fn next_serial(&mut self) -> u32 {
        self.serial += 1;
        self.serial
    }
}

/// How a member is shaped, besides its id, token and deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// `internal.result_queue_name` names [`LISTS`]\[2\].
    pub own_list: bool,
    /// `internal.result_queue_name` names [`QUEUES`]\[0\], a queue: the
    /// list is unusable, so a member of queue a is dead-lettered on ack
    /// (queue b's configured list overrides it).
    pub poison_list: bool,
    /// `internal.request_queue_name` names the queue, as the Go producer writes it.
    pub named_queue: bool,
    /// Fields this code does not know, which must survive byte for byte.
    pub unknown_fields: bool,
    /// `internal.enqueue_seq` when not 0: the pending score is then the
    /// deadline plus its fraction (capped), on every return to pending.
    pub enqueue_seq: i64,
}

/// A member in the Go producer's shape.
pub fn member(g: &Generation, queue: &str, deadline: i64, shape: Shape) -> Member {
    let mut internal = serde_json::json!({"request_token": g.token, "retry_count": 0});
    if shape.own_list {
        internal["result_queue_name"] = LISTS[2].into();
    }
    if shape.poison_list {
        internal["result_queue_name"] = QUEUES[0].into();
    }
    if shape.named_queue {
        internal["request_queue_name"] = queue.into();
    }
    if shape.enqueue_seq != 0 {
        internal["enqueue_seq"] = shape.enqueue_seq.into();
    }
    let mut data = serde_json::json!({
        "id": g.id, "created": deadline - 600, "deadline": deadline,
        "payload": {"model": "m", "prompt": format!("prompt of {g}")},
    });
    if shape.unknown_fields {
        data["x_future_field"] = serde_json::json!({"nested": [1, 2.5, "three"]});
        internal["x_hop"] = 7.into();
    }
    let envelope = serde_json::json!({"internal": internal, "request_kind": "redis", "data": data});
    Member::from(envelope.to_string().into_bytes())
}

/// A member nobody can parse: not JSON, not an object, or without `data.id`.
pub fn garbage(kind: u8, serial: u32) -> Member {
    let text = match kind % 4 {
        0 => format!("not json at all #{serial}"),
        1 => format!("[\"an\", \"array\", {serial}]"),
        2 => format!(
            r#"{{"request_kind":"redis","data":{{"deadline":1,"payload":{{}}}},"n":{serial}}}"#
        ),
        _ => format!(r#"{{"data":{{"id":"","deadline":1}},"n":{serial}}}"#),
    };
    Member::from(text.into_bytes())
}

/// The tag a worker puts into each result it writes, naming the generation,
/// so records can be counted per generation (records carry only the id).
pub fn tag(g: &Generation) -> String {
    format!("[gen {}]", g.key())
}

/// The generation a record's tag names, if it has one.
pub fn tagged(text: &str) -> Option<Generation> {
    let start = text.find("[gen ")? + "[gen ".len();
    let end = start + text[start..].find(']')?;
    Generation::from_key(&text[start..end])
}
