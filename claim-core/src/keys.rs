//! Key names a configuration implies, and the check that no two of them collide.
//!
//! A queue `q` implies its pending set `q` and five bookkeeping keys
//! (`q:claimed`, `q:claim-owners`, `q:claims-idx`, `q:deliveries`, `q:dead`);
//! the store also writes per-request keys under fixed prefixes (terminal
//! markers, the producer's active and cancel keys). Every store derives its
//! names from here (claim-redis adds its test prefix in front), the model
//! uses [`role_of`] to decide which names cannot take a record, and the
//! processor calls [`check_names`] at startup so a configuration whose names
//! meet fails before anything is written.

use crate::wire;

/// Prefix of terminal markers, `result-terminal:<generation key>`.
pub const MARKER_PREFIX: &str = "result-terminal:";

/// Suffixes of the bookkeeping keys of a queue, in the order [`bookkeeping`] lists them.
pub const BOOKKEEPING_SUFFIXES: [&str; 5] = [
    ":claimed",
    ":claim-owners",
    ":claims-idx",
    ":deliveries",
    ":dead",
];

/// Suffix of a queue's pause flag (`<queue>:paused`, written by
/// `async-worker admin pause`): checked like a bookkeeping key, so no
/// result list, queue or retry set can be named like it (a list there
/// would read as a pause).
pub const PAUSE_SUFFIX: &str = ":paused";

/// Prefixes of keys written per request: a configured name that starts with
/// one of them could meet a key the store or the producer writes.
pub const PER_REQUEST_PREFIXES: [&str; 5] = [
    MARKER_PREFIX,
    wire::ACTIVE_KEY_PREFIX,
    wire::CANCEL_KEY_PREFIX,
    wire::PAYLOAD_KEY_PREFIX,
    wire::SEQ_KEY_PREFIX,
];

/// The bookkeeping keys of `queue`: claimed, claim-owners, claims-idx, deliveries, dead.
pub fn bookkeeping(queue: &str) -> [String; 5] {
    BOOKKEEPING_SUFFIXES.map(|suffix| format!("{queue}{suffix}"))
}

/// What a configured or requested name already is, when it is not free to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The pending set of this queue.
    Queue(String),
    /// A bookkeeping key (`<queue><suffix>`) of this queue.
    Bookkeeping { queue: String, suffix: &'static str },
    /// The retry set.
    RetrySet,
    /// Starts with a per-request prefix (marker, active or cancel key).
    PerRequest(&'static str),
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Role::Queue(q) => write!(f, "the pending set of queue \"{q}\""),
            Role::Bookkeeping { queue, suffix } => {
                write!(f, "the {} key of queue \"{queue}\"", &suffix[1..])
            }
            Role::RetrySet => f.write_str("the retry set"),
            Role::PerRequest(prefix) => write!(f, "a per-request key (prefix \"{prefix}\")"),
        }
    }
}

/// The role `name` plays among the given queues and retry set, if any. A
/// name that ends like a bookkeeping key of a queue that is not listed is
/// still reported: that queue may exist on another replica's config.
pub fn role_of(name: &str, queues: &[&str], retry_set: &str) -> Option<Role> {
    if queues.contains(&name) {
        return Some(Role::Queue(name.to_owned()));
    }
    if name == retry_set {
        return Some(Role::RetrySet);
    }
    for suffix in BOOKKEEPING_SUFFIXES.into_iter().chain([PAUSE_SUFFIX]) {
        if let Some(queue) = name.strip_suffix(suffix) {
            return Some(Role::Bookkeeping {
                queue: queue.to_owned(),
                suffix,
            });
        }
    }
    PER_REQUEST_PREFIXES
        .into_iter()
        .find(|p| name.starts_with(p))
        .map(Role::PerRequest)
}

/// Checks that queue names, the retry set and every configured result list
/// are distinct from each other and from every key they imply. The error
/// names both sides of the first collision and the fix.
pub fn check_names(queues: &[&str], retry_set: &str, result_lists: &[&str]) -> Result<(), String> {
    for (i, q) in queues.iter().enumerate() {
        if q.is_empty() {
            return Err("a queue name is empty: give every queue a key name".into());
        }
        if queues[..i].contains(q) {
            return Err(format!(
                "queue name \"{q}\" is listed twice: give each queue its own name"
            ));
        }
        let others: Vec<&str> = queues.iter().copied().filter(|o| o != q).collect();
        if let Some(role) = role_of(q, &others, retry_set) {
            return Err(format!(
                "queue name \"{q}\" is also {role}: rename the queue so its keys cannot meet"
            ));
        }
    }
    if let Some(role) = role_of(retry_set, queues, "") {
        return Err(format!(
            "retry set \"{retry_set}\" is also {role}: rename retry_queue_name"
        ));
    }
    for list in result_lists {
        if list.is_empty() {
            return Err("a result list name is empty: set result_queue_name to a key name".into());
        }
        if let Some(role) = role_of(list, queues, retry_set) {
            return Err(format!(
                "result list \"{list}\" is also {role}: set result_queue_name to a name of its own"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_names_pass() {
        let ok = check_names(
            &["request-sortedset", "b"],
            "retry-sortedset",
            &["result-list", "b-results"],
        );
        assert_eq!(ok, Ok(()));
    }

    #[test]
    fn a_result_list_named_like_a_queue_or_its_bookkeeping_is_refused_with_both_names() {
        let err = check_names(&["q"], "retry", &["q"]).unwrap_err();
        assert!(
            err.contains("result list \"q\"") && err.contains("queue \"q\""),
            "{err}"
        );
        let err = check_names(&["q"], "retry", &["q:dead"]).unwrap_err();
        assert!(err.contains("dead key of queue \"q\""), "{err}");
        let err = check_names(&["q"], "retry", &["retry"]).unwrap_err();
        assert!(err.contains("retry set"), "{err}");
        let err = check_names(&["q"], "retry", &["q:paused"]).unwrap_err();
        assert!(err.contains("paused key of queue \"q\""), "{err}");
    }

    #[test]
    fn a_queue_named_like_another_queues_bookkeeping_key_is_refused() {
        let err = check_names(&["x", "x:claimed"], "retry", &[]).unwrap_err();
        assert!(err.contains("claimed key of queue \"x\""), "{err}");
        let err = check_names(&["a", "a"], "retry", &[]).unwrap_err();
        assert!(err.contains("twice"), "{err}");
    }

    #[test]
    fn a_retry_set_or_list_under_a_per_request_prefix_is_refused() {
        let err = check_names(&["q"], "result-terminal:x", &[]).unwrap_err();
        assert!(err.contains("per-request"), "{err}");
        let err = check_names(&["q"], "retry", &["request-cancel:l"]).unwrap_err();
        assert!(err.contains("per-request"), "{err}");
        // The Go producer's payload and sequence keys are per-request too.
        for list in ["request-payload:l", "request-seq:l"] {
            let err = check_names(&["q"], "retry", &[list]).unwrap_err();
            assert!(err.contains("per-request"), "{list}: {err}");
        }
    }

    #[test]
    fn bookkeeping_keys_are_the_go_names() {
        assert_eq!(
            bookkeeping("q"),
            [
                "q:claimed",
                "q:claim-owners",
                "q:claims-idx",
                "q:deliveries",
                "q:dead"
            ]
            .map(String::from)
        );
    }
}
