//! The Redis key layout: every key the store touches is derived here, from the prefix, the names and the [`KeyLayout`].
//!
//! With the production prefix (empty) and [`KeyLayout::Plain`] the keys are
//! exactly the Go producer's and consumer's: the pending set is the queue
//! name itself, `request-active:<id>` and `request-cancel:<id>` are the
//! producer's, and result lists are the configured names. Tests use a
//! random prefix (`test:<random>:`) so many stores share one server
//! without meeting.
//!
//! [`KeyLayout::HashTagged`] is the Redis Cluster layout (Go's, upstream
//! section 5, extended to our keys): a queue's base is its prefixed name
//! as is when that already holds a non-empty hash tag, else `{<name>}`.
//! The pending key stays the plain name (a key without a tag hashes by its
//! whole name, `{<name>}:x` by `<name>`: one slot), and every per-queue key
//! is `<base>:<suffix>`, so each queue's bookkeeping, dead set, parked
//! retries (`<base>:retry`) and pause flag share the pending key's slot and
//! every per-queue script stays one atomic call. The sequence counter is
//! `request-seq:<base>:<deadline>` (Go's `request-seq:{<q>}:<deadline>`).
//! Per-request keys (`request-active:`, `request-cancel:`,
//! `request-payload:`) stay where the producer puts them, untagged; the
//! store reads and writes them with single-key (or per-slot) commands. A
//! terminal marker lives in its result list's slot,
//! `result-terminal:{<tag of the list key>}:<len(id)>:<id>:<token>`, so
//! the push of a record and its marker is one script there
//! ([`Keys::marker_for`]). In explicit-time mode (tests) each slot has its
//! own side hash of logical expiries ([`Keys::clock_side_for`]).
//!
//! Scripts receive every key in `KEYS` and never build a key name
//! themselves; with the hash-tagged layout every call is checked to stay in
//! one slot before it is sent ([`crate::slots`]).

use crate::slots::{carried_tag, hash_slot, hash_tag};
use claim_core::Generation;
use claim_core::keys::bookkeeping;
use claim_core::wire;
use std::fmt;

pub use claim_core::keys::MARKER_PREFIX;

/// How per-queue and per-slot keys are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyLayout {
    /// Today's keys, byte for byte: `<q>:claimed`, one shared retry set,
    /// `result-terminal:<generation>`. Standalone and Sentinel.
    #[default]
    Plain,
    /// Redis Cluster: every per-queue key in the pending key's slot, a
    /// retry set per queue, markers in their result list's slot (see the
    /// module docs).
    HashTagged,
}

/// Store-wide keys (retry set, markers, producer keys, result lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
    retry: String,
    layout: KeyLayout,
}

impl Keys {
    /// The [`KeyLayout::Plain`] keys.
    pub fn new(prefix: &str, retry_set: &str) -> Self {
        Keys::with_layout(prefix, retry_set, KeyLayout::Plain)
    }

    pub fn with_layout(prefix: &str, retry_set: &str, layout: KeyLayout) -> Self {
        Keys {
            prefix: prefix.to_owned(),
            retry: format!("{prefix}{retry_set}"),
            layout,
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn layout(&self) -> KeyLayout {
        self.layout
    }

    /// Whether keys are hash-tagged (every call must stay in one slot).
    pub fn tagged(&self) -> bool {
        self.layout == KeyLayout::HashTagged
    }

    /// One queue's keys.
    pub fn queue(&self, queue: &str) -> QueueKeys {
        QueueKeys::build(&self.prefix, queue, &self.retry, self.layout)
    }

    /// Why `queue` cannot be served in this layout, if it cannot: with the
    /// hash-tagged layout a name without a non-empty hash tag that holds
    /// `}` (or an empty `{}`) gets a base whose tag is only part of it, so
    /// its bookkeeping keys would hash to another slot than its pending key
    /// (Go has the same limit).
    pub fn queue_refusal(&self, queue: &str) -> Option<String> {
        if !self.tagged() {
            return None;
        }
        let q = self.queue(queue);
        let home = hash_slot(q.pending.as_bytes());
        (hash_slot(q.claimed.as_bytes()) != home).then(|| {
            format!(
                "queue \"{queue}\" cannot share one Redis Cluster slot with its bookkeeping keys \
                 (it holds `}}` or an empty `{{}}` and no hash tag); rename it or give it a hash \
                 tag of its own, e.g. \"{{{}}}\"",
                queue.replace(['{', '}'], "")
            )
        })
    }

    /// Why the result list `list` (unprefixed) cannot take records in this
    /// layout, if it cannot: hash-tagged, its generations' markers must lie
    /// in its slot, whatever the generation. A marker's hash tag is decided
    /// before its generation part (`<prefix>result-terminal:{<tag>}`) unless
    /// the key prefix holds braces of its own, so checking that head proves
    /// it for every generation. With a brace-free prefix every name passes
    /// ([`crate::slots::carried_tag`]); the check keeps the rule where the
    /// prefix breaks it.
    pub fn list_refusal(&self, list: &str) -> Option<String> {
        let KeyLayout::HashTagged = self.layout else {
            return None;
        };
        let list_key = self.list(list);
        let tag = carried_tag(&list_key);
        let head = format!("{}{MARKER_PREFIX}{{{tag}}}", self.prefix);
        let decided = hash_tag(head.as_bytes()).len() < head.len();
        let home = hash_slot(list_key.as_bytes());
        (!decided || hash_slot(head.as_bytes()) != home).then(|| {
            format!(
                "result list \"{list}\" cannot share one Redis Cluster slot with its terminal \
                 markers (key prefix \"{}\"): use a key prefix without braces",
                self.prefix
            )
        })
    }

    /// The shared retry set (Go: `retry-sortedset`). With the hash-tagged
    /// layout our processors park in [`QueueKeys::retry`] instead and only
    /// drain this one (Go processors park here).
    pub fn retry(&self) -> &str {
        &self.retry
    }

    /// Hash-tagged layout only: the set of queue names that may hold
    /// parked retries in their own retry set (added before each park, read
    /// by promotion and the retry inspections).
    pub fn retry_queues(&self) -> String {
        format!("{}claim-redis:retry-queues", self.prefix)
    }

    /// `result-terminal:<len(id)>:<id>:<token>`: the generation's terminal
    /// marker in the [`KeyLayout::Plain`] layout. With the hash-tagged
    /// layout a marker depends on its result list: [`Keys::marker_for`].
    pub fn marker(&self, generation: &Generation) -> String {
        self.marker_key(generation).to_string()
    }

    /// The generation's terminal marker for a record on the list whose
    /// key (prefixed, as [`Keys::list`] gives it) is `list_key`: Plain
    /// ignores the list; hash-tagged, the marker takes the list key's hash
    /// tag, `result-terminal:{<tag>}:<len(id)>:<id>:<token>` (prefix
    /// first), and so lies in the list's slot. The tag is the list key's
    /// own by Redis's rule, or, when that cannot sit between braces (it
    /// holds a `}`, as the whole of `a}b` or `{}x` does), a short tag of
    /// the same slot ([`crate::slots::carried_tag`]). [`Keys::list_refusal`]
    /// says whether the marker shares the list's slot for every generation.
    pub fn marker_for(&self, list_key: &str, generation: &Generation) -> String {
        self.marker_key_for(list_key, generation).to_string()
    }

    /// `request-active:<id>`: the token the producer submitted last.
    pub fn active(&self, id: &str) -> String {
        self.active_key(id).to_string()
    }

    /// `request-cancel:<id>`: the token a cancel targets.
    pub fn cancel(&self, id: &str) -> String {
        self.cancel_key(id).to_string()
    }

    /// [`Keys::marker`], written where it is displayed (no String of its own):
    /// the hot path writes thousands of keys per call straight into the command.
    pub(crate) fn marker_key<'a>(&'a self, generation: &'a Generation) -> impl fmt::Display + 'a {
        Joined(&self.prefix, MARKER_PREFIX, GenerationKey(generation))
    }

    /// [`Keys::marker_for`], written where it is displayed.
    pub(crate) fn marker_key_for<'a>(
        &'a self,
        list_key: &'a str,
        generation: &'a Generation,
    ) -> impl fmt::Display + 'a {
        let tag = match self.layout {
            KeyLayout::Plain => None,
            KeyLayout::HashTagged => Some(carried_tag(list_key)),
        };
        TaggedMarker(&self.prefix, tag, GenerationKey(generation))
    }

    /// [`Keys::active`], written where it is displayed.
    pub(crate) fn active_key<'a>(&'a self, id: &'a str) -> impl fmt::Display + 'a {
        Joined(&self.prefix, wire::ACTIVE_KEY_PREFIX, id)
    }

    /// [`Keys::cancel`], written where it is displayed.
    pub(crate) fn cancel_key<'a>(&'a self, id: &'a str) -> impl fmt::Display + 'a {
        Joined(&self.prefix, wire::CANCEL_KEY_PREFIX, id)
    }

    /// A payload stored apart, at a member's `internal.payload_ref`
    /// (`request-payload:<id>:<token>`), with the prefix.
    pub fn payload(&self, payload_ref: &str) -> String {
        format!("{}{payload_ref}", self.prefix)
    }

    /// `request-seq:<queue>:<deadline>`: the enqueue counter of one queue
    /// and deadline. Hash-tagged: `request-seq:<base>:<deadline>`, Go's
    /// `request-seq:{<queue>}:<deadline>` for an untagged queue name, in
    /// the pending key's slot.
    pub fn seq(&self, queue: &str, deadline: i64) -> String {
        match self.layout {
            KeyLayout::Plain => format!("{}{}", self.prefix, wire::seq_key(queue, deadline)),
            KeyLayout::HashTagged => format!(
                "{}{}{}:{deadline}",
                self.prefix,
                wire::SEQ_KEY_PREFIX,
                base(&self.prefix, queue)
            ),
        }
    }

    /// A result list.
    pub fn list(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Explicit-time mode only: logical expiries of producer keys (field =
    /// key name, value = expiry ms), since Redis expires keys on its own
    /// clock. Never written when time comes from the server. The
    /// [`KeyLayout::Plain`] one; hash-tagged, see [`Keys::clock_side_for`].
    pub fn clock_side(&self) -> String {
        format!("{}claim-redis:explicit-time-expiry", self.prefix)
    }

    /// The side hash that holds `key`'s logical expiry: Plain, the one
    /// [`Keys::clock_side`]; hash-tagged, one per slot tag,
    /// `claim-redis:explicit-time-expiry:{<tag of key>}`, in `key`'s slot.
    pub fn clock_side_for(&self, key: &str) -> String {
        match self.layout {
            KeyLayout::Plain => self.clock_side(),
            KeyLayout::HashTagged => format!(
                "{}claim-redis:explicit-time-expiry:{{{}}}",
                self.prefix,
                carried_tag(key)
            ),
        }
    }
}

/// A queue's base in the hash-tagged layout: the prefixed name as is when
/// it holds a non-empty hash tag of its own, else `{<prefixed name>}`.
fn base(prefix: &str, queue: &str) -> String {
    let name = format!("{prefix}{queue}");
    if hash_tag(name.as_bytes()).len() < name.len() {
        name
    } else {
        format!("{{{name}}}")
    }
}

/// `<prefix><part><rest>`, displayed without building a String.
struct Joined<'a, T>(&'a str, &'a str, T);

impl<T: fmt::Display> fmt::Display for Joined<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.0, self.1, self.2)
    }
}

/// `<prefix>result-terminal:[{<tag>}:]<generation key>`, displayed without building a String.
struct TaggedMarker<'a>(&'a str, Option<&'a str>, GenerationKey<'a>);

impl fmt::Display for TaggedMarker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            None => write!(f, "{}{MARKER_PREFIX}{}", self.0, self.2),
            Some(tag) => write!(f, "{}{MARKER_PREFIX}{{{tag}}}:{}", self.0, self.2),
        }
    }
}

/// [`Generation::key`], `<len(id)>:<id>:<token>`, displayed without building a String.
pub(crate) struct GenerationKey<'a>(pub &'a Generation);

impl fmt::Display for GenerationKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.0;
        write!(f, "{}:{}:{}", g.id.len(), g.id, g.token)
    }
}

/// One queue's keys. The pending key is the queue name itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueKeys {
    /// Sorted set of pending members, scored by `wire::queue_score`
    /// (deadline plus the enqueue-sequence fraction).
    pub pending: String,
    /// Hash: claim key (`<id>\0<token>`, Go's) → member bytes.
    pub claimed: String,
    /// Hash: claim key → `owner|score|redeliveries` (ours) or a bare owner token (Go's).
    pub owners: String,
    /// Sorted set: claim key, scored by lease expiry (Unix seconds, ms precision).
    pub index: String,
    /// Hash: claim key → redelivery count, for generations back in
    /// pending or parked after an expired lease.
    pub deliveries: String,
    /// Hash: member → `{"reason":..,"at_ms":..}`.
    pub dead: String,
    /// String: present while an operator has paused claiming from the queue
    /// (`async-worker admin pause`; `<base>:paused`); every replica reads it
    /// once per poll interval.
    pub paused: String,
    /// Where this queue's claims are parked for a retry: Plain, the shared
    /// retry set; hash-tagged, `<base>:retry`, in the queue's slot, so
    /// parking and promotion stay one atomic script each.
    pub retry: String,
}

impl QueueKeys {
    /// The [`KeyLayout::Plain`] keys of `queue`, parking in the default
    /// retry set. The names come from [`claim_core::keys::bookkeeping`],
    /// the one list the startup collision check and the model use too.
    pub fn new(prefix: &str, queue: &str) -> Self {
        let retry = format!("{prefix}{}", wire::DEFAULT_RETRY_SET);
        QueueKeys::build(prefix, queue, &retry, KeyLayout::Plain)
    }

    /// `queue`'s keys in `layout`; `retry` is the (prefixed) shared retry set.
    fn build(prefix: &str, queue: &str, retry: &str, layout: KeyLayout) -> Self {
        let (base, retry) = match layout {
            KeyLayout::Plain => (format!("{prefix}{queue}"), retry.to_owned()),
            KeyLayout::HashTagged => {
                let base = base(prefix, queue);
                let retry = format!("{base}:retry");
                (base, retry)
            }
        };
        let [claimed, owners, index, deliveries, dead] = bookkeeping(&base);
        QueueKeys {
            pending: format!("{prefix}{queue}"),
            claimed,
            owners,
            index,
            deliveries,
            dead,
            paused: format!("{base}:paused"),
            retry,
        }
    }

    /// Pending, claimed, owners, index, deliveries and dead, in that order:
    /// the first six KEYS of `lua/ack.lua` and `lua/reclaim.lua`.
    pub fn all(&self) -> [&str; 6] {
        [
            &self.pending,
            &self.claimed,
            &self.owners,
            &self.index,
            &self.deliveries,
            &self.dead,
        ]
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
