//! The Lua scripts, compiled in from `lua/`, each prefixed with the shared helpers of `lua/lib.lua`.
//!
//! `redis::Script` runs a script by SHA (EVALSHA) and, when the server
//! answers NOSCRIPT (restarted, failed over, or SCRIPT FLUSHed), loads it
//! and runs it again, so callers never see NOSCRIPT. `connect` loads them
//! all once up front so a server that cannot run them is reported at start.

use redis::Script;

macro_rules! script {
    // `$prelude` defines the constants a script built in two variants reads
    // (ack.lua's TAGGED).
    ($file:literal $(, $prelude:literal)?) => {
        Script::new(concat!(
            include_str!("../lua/lib.lua"),
            $($prelude,)?
            include_str!(concat!("../lua/", $file))
        ))
    };
    // A script allowed to touch keys of several slots of one cluster node
    // (the per-node reads and deletes of per-request keys, the one exception
    // docs/ARCHITECTURE.md lists), with Redis 7's shebang as its first line:
    // `allow-cross-slot-keys`, plus `$flags` (`no-writes` for the read, so
    // a node refusing writes, `CLIENT PAUSE WRITE` or `min-replicas`, still
    // runs it).
    (cross_slot $file:literal, $flags:literal) => {
        Script::new(concat!(
            "#!lua flags=allow-cross-slot-keys",
            $flags,
            "\n",
            include_str!("../lua/lib.lua"),
            include_str!(concat!("../lua/", $file))
        ))
    };
}

/// Declares [`Scripts`], one field per script, with `new` building each
/// and `all` listing them by name (the names spans and the load report use).
macro_rules! scripts {
    ($($(#[$doc:meta])* $name:ident: $script:expr,)*) => {
        /// Every script the store runs.
        #[derive(Debug)]
        pub(crate) struct Scripts {
            $($(#[$doc])* pub $name: Script,)*
        }

        impl Scripts {
            pub(crate) fn new() -> Self {
                Scripts { $($name: $script,)* }
            }

            pub(crate) fn all(&self) -> Vec<(&'static str, &Script)> {
                vec![$((stringify!($name), &self.$name),)*]
            }
        }
    };
}

scripts! {
    claim: script!("claim.lua"),
    renew: script!("renew.lua"),
    ack: script!("ack.lua", "local TAGGED = false\n"),
    /// ack.lua for the hash-tagged layout: same-slot keys only.
    ack_tagged: script!("ack.lua", "local TAGGED = true\n"),
    ack_fence: script!("ack_fence.lua"),
    ack_drop: script!("ack_drop.lua"),
    push_once: script!("push_once.lua"),
    del_if: script!("del_if.lua"),
    /// Per-node reads and deletes of per-request keys (cross-slot).
    node_get: script!(cross_slot "node_get.lua", ",no-writes"),
    node_del_if: script!(cross_slot "node_del_if.lua", ""),
    release: script!("release.lua"),
    park_retry: script!("park_retry.lua"),
    promote: script!("promote.lua"),
    reclaim: script!("reclaim.lua"),
    repair_index: script!("repair_index.lua"),
    dead_letter: script!("dead_letter.lua"),
    cancel: script!("cancel.lua"),
    enqueue: script!("enqueue.lua"),
    redrive_dead: script!("redrive_dead.lua"),
    purge_dead: script!("purge_dead.lua"),
    release_claim: script!("release_claim.lua"),
    retry_now: script!("retry_now.lua"),
}
