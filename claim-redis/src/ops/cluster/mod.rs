//! The hash-tagged (Redis Cluster) layout's shared plumbing for keys outside the queue's slot: per-request keys read and deleted one call per node (`node_keys`, per slot what a node refuses: `request_keys`), and records pushed once in a result list's slot (`push_once`). Each operation's hash-tagged body lives beside its plain one (`ops::<role>_cluster`).

pub(crate) mod node_keys;
pub(crate) mod push_once;
pub(crate) mod request_keys;
