//! Where a Redis run's keys live: one server, or the primaries of a private local cluster, and which queue (and node) each request goes to.
//!
//! A standalone target is one server and one queue, as every run but the
//! cluster ones and `queues` has (`queues` configures many on one server,
//! requests dealt over the first few). A cluster target is three primaries (no replicas, so
//! no replication traffic shares the CPU) started by the run itself on
//! free loopback ports, with `queues` queues, each on its own primary and
//! each with its result list in its own slot (`{<queue>}:results`), so an
//! ack stays one script. Request `seq` goes to queue `seq % busy` (every
//! queue is busy unless told otherwise). The
//! Go-style producer's per-request keys (`request-active:<id>`, ...) hash
//! wherever their id puts them, on any primary, as they would in
//! production. The bench reads every node on its own: CPU and command
//! counters per primary.

use crate::Settings;
use crate::members::{Payloads, enqueue_batches, fill_parts, producer_commands};
use crate::server::{Admin, Delta, Snapshot};
use async_worker::QueueSpec;
use claim_core::store::StoreConfig;
use claim_core::wire::DEFAULT_RETRY_SET;
use claim_redis::keys::{Keys, QueueKeys};
use claim_redis::slots::hash_slot;
use claim_redis::testing::RedisCluster;
use claim_redis::{KeyLayout, RedisStoreOptions, Topology};
use std::ops::Range;

/// One server the run reads counters from.
pub struct Node {
    pub admin: Admin,
    pub port: u16,
    /// Slot ranges it serves, inclusive (empty on a standalone server).
    pub slots: Vec<(u16, u16)>,
}

/// One queue the runtime drains, and the node that holds it.
#[derive(Debug, Clone)]
pub struct TargetQueue {
    pub name: String,
    pub list: String,
    pub node: usize,
}

pub struct Target {
    url: String,
    topology: Topology,
    pub layout: KeyLayout,
    pub nodes: Vec<Node>,
    pub queues: Vec<TargetQueue>,
    /// Requests are dealt over the first `busy` queues only (all of them
    /// unless [`Target::with_queues`] said otherwise).
    pub busy: usize,
    /// The store settings every fresh store starts from (lease and dedup
    /// TTLs); the result routing is this target's own.
    pub store_config: StoreConfig,
    /// The private cluster this target started: its processes live as long
    /// as the target and are killed on drop.
    cluster: Option<RedisCluster>,
}

impl Target {
    /// One server at `url` (the bench's own), one queue: `set.queue`.
    pub async fn standalone(url: &str, set: &Settings) -> Target {
        let admin = Admin::connect(url).await.expect("connect to Redis");
        let port = url.rsplit(':').next().and_then(|p| p.parse().ok());
        Target {
            url: url.to_owned(),
            topology: Topology::Standalone,
            layout: KeyLayout::Plain,
            nodes: vec![Node {
                admin,
                port: port.unwrap_or(0),
                slots: Vec::new(),
            }],
            queues: vec![TargetQueue {
                name: set.queue.clone(),
                list: set.list.clone(),
                node: 0,
            }],
            busy: 1,
            store_config: StoreConfig::default(),
            cluster: None,
        }
    }

    /// This one-server target with `count` queues (`bench-q:000`, …, all
    /// answering to `list`), requests dealt over the first `busy` of them.
    pub fn with_queues(mut self, count: usize, busy: usize, list: &str) -> Target {
        assert!(
            !self.is_cluster() && (1..=count).contains(&busy),
            "bench: {busy} busy queues of {count}: give 1 to {count} busy queues on one server"
        );
        self.queues = (0..count)
            .map(|i| TargetQueue {
                name: format!("bench-q:{i:03}"),
                list: list.to_owned(),
                node: 0,
            })
            .collect();
        self.busy = busy;
        self
    }

    /// Starts a private cluster of three primaries and places `queues`
    /// queues on the first `queues` of them (in slot order), one each.
    pub async fn cluster(queues: usize) -> Target {
        let cluster = RedisCluster::start_with_replicas(0)
            .expect("start a private Redis Cluster (are redis-server and redis-cli on PATH?)");
        let infos = cluster.nodes().expect("CLUSTER NODES");
        let mut nodes = Vec::new();
        for port in cluster.primaries().expect("the cluster's primaries") {
            let url = format!("redis://127.0.0.1:{port}");
            let slots = infos
                .iter()
                .find(|n| n.port == port)
                .map(|n| n.slots.clone())
                .unwrap_or_default();
            let admin = Admin::connect(&url).await.expect("connect to a primary");
            nodes.push(Node { admin, port, slots });
        }
        assert!(
            (1..=nodes.len()).contains(&queues),
            "bench: --queues {queues}: the cluster has {} primaries; give 1 to {0}",
            nodes.len()
        );
        let mut target = Target {
            url: cluster.url(),
            topology: Topology::Cluster {
                seeds: cluster.seeds(),
            },
            layout: KeyLayout::HashTagged,
            nodes,
            queues: Vec::new(),
            busy: queues,
            store_config: StoreConfig::default(),
            cluster: None,
        };
        for node in 0..queues {
            let name = (0..)
                .map(|n| format!("bench:{n}"))
                .find(|name| target.node_of(name) == node)
                .expect("some name hashes to every primary");
            let list = format!("{{{name}}}:results");
            target.queues.push(TargetQueue { name, list, node });
        }
        target.cluster = Some(cluster);
        target
    }

    pub fn is_cluster(&self) -> bool {
        self.cluster.is_some()
    }

    /// The index of the node serving `key` (0 on a standalone server).
    pub fn node_of(&self, key: &str) -> usize {
        if self.nodes.len() == 1 {
            return 0;
        }
        let slot = hash_slot(key.as_bytes());
        self.nodes
            .iter()
            .position(|n| n.slots.iter().any(|&(a, b)| (a..=b).contains(&slot)))
            .unwrap_or_else(|| panic!("bench: no primary serves slot {slot} of `{key}`"))
    }

    /// A fresh store's options: this target's URL and topology, and each
    /// queue's own result list (the routing the runtime takes from the store).
    pub fn store_options(&self) -> RedisStoreOptions {
        let config = StoreConfig {
            queue_result_lists: self
                .queues
                .iter()
                .map(|q| (q.name.clone(), q.list.clone()))
                .collect(),
            ..self.store_config.clone()
        };
        RedisStoreOptions {
            topology: self.topology.clone(),
            ..RedisStoreOptions::new(self.url.clone(), config)
        }
    }

    /// The runtime's queue list: each queue with its own result list.
    pub fn queue_specs(&self) -> Vec<QueueSpec> {
        self.queues
            .iter()
            .map(|q| QueueSpec {
                result_queue_name: Some(q.list.clone()),
                ..QueueSpec::new(q.name.clone())
            })
            .collect()
    }

    /// The bookkeeping keys of queue `i` in this target's layout.
    pub fn queue_keys(&self, i: usize) -> QueueKeys {
        Keys::with_layout("", DEFAULT_RETRY_SET, self.layout).queue(&self.queues[i].name)
    }

    /// How many of requests `0..count` go to each node.
    pub fn jobs_by_node(&self, count: usize) -> Vec<u64> {
        let mut jobs = vec![0u64; self.nodes.len()];
        for seq in 0..count {
            jobs[self.queues[seq % self.busy].node] += 1;
        }
        jobs
    }

    /// Empties every node (a standalone server keeps the bench's mark).
    pub async fn flush(&self) {
        for node in &self.nodes {
            let flushed = if self.is_cluster() {
                node.admin.flush_node().await
            } else {
                node.admin.flush().await
            };
            flushed.expect("FLUSHALL");
        }
    }

    pub async fn reset_stats(&self) {
        for node in &self.nodes {
            node.admin.reset_stats().await.expect("CONFIG RESETSTAT");
        }
    }

    pub async fn snapshots(&self) -> Vec<Snapshot> {
        let mut out = Vec::new();
        for node in &self.nodes {
            out.push(node.admin.snapshot().await.expect("INFO"));
        }
        out
    }

    /// Each node's delta between two [`Target::snapshots`].
    pub fn deltas(before: &[Snapshot], after: &[Snapshot]) -> Vec<Delta> {
        before
            .iter()
            .zip(after)
            .map(|(b, a)| Admin::delta(b, a))
            .collect()
    }

    /// Keys matching `pattern`, over every node.
    pub async fn count_keys(&self, pattern: &str) -> u64 {
        let mut total = 0;
        for node in &self.nodes {
            total += node.admin.count_keys(pattern).await.expect("SCAN");
        }
        total
    }

    /// Enqueues requests `seqs` Go-style, request `seq` on queue
    /// `seq % busy`, each command pipelined to the node serving its key,
    /// 1,000 requests at a time; calls `mark` for each just before its
    /// batch is sent.
    pub async fn enqueue(
        &self,
        seqs: Range<usize>,
        deadline: i64,
        payloads: Payloads,
        mut mark: impl FnMut(usize),
    ) -> redis::RedisResult<()> {
        for batch in enqueue_batches(seqs) {
            let mut pipes: Vec<redis::Pipeline> =
                self.nodes.iter().map(|_| redis::pipe()).collect();
            for seq in batch {
                let queue = &self.queues[seq % self.busy].name;
                for (key, cmd) in producer_commands(queue, seq, deadline, payloads) {
                    pipes[self.node_of(&key)].add_command(cmd).ignore();
                }
                mark(seq);
            }
            let sends = self
                .nodes
                .iter()
                .zip(&pipes)
                .filter(|(_, pipe)| !pipe.is_empty())
                .map(|(node, pipe)| node.admin.send(pipe));
            for sent in futures::future::join_all(sends).await {
                sent?;
            }
        }
        Ok(())
    }

    /// Fills the one queue of a one-server target with requests `seqs`
    /// fast, for a backlog: per 1,000 requests the producer's active-key
    /// `SET`s and one `ZADD` of all their members, [`FILL_PIPELINES`]
    /// pipelines in flight at once. What the queue then holds is what the
    /// Go producer leaves (its cancel-key `DEL` finds nothing to delete on
    /// a flushed server, so it is left out).
    pub async fn fill(&self, seqs: Range<usize>, deadline: i64) -> redis::RedisResult<()> {
        assert!(!self.is_cluster(), "bench: a fill is for one server");
        let queue = &self.queues[0].name;
        let batches: Vec<Range<usize>> = enqueue_batches(seqs).collect();
        for group in batches.chunks(FILL_PIPELINES) {
            let pipes: Vec<redis::Pipeline> = group
                .iter()
                .map(|batch| {
                    let mut pipe = redis::pipe();
                    let mut zadd = redis::cmd("ZADD");
                    zadd.arg(queue);
                    for seq in batch.clone() {
                        let (set_active, member) = fill_parts(seq, deadline);
                        pipe.add_command(set_active).ignore();
                        zadd.arg(deadline).arg(member);
                    }
                    pipe.add_command(zadd).ignore();
                    pipe
                })
                .collect();
            let admin = &self.nodes[0].admin;
            for sent in futures::future::join_all(pipes.iter().map(|p| admin.send(p))).await {
                sent?;
            }
        }
        Ok(())
    }
}

/// Pipelines a [`Target::fill`] keeps in flight.
const FILL_PIPELINES: usize = 4;
