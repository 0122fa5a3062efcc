//! The one place script calls and multi-key commands are sent through: with the hash-tagged layout, each is checked to stay in one cluster slot first.
//!
//! Every script call is built here ([`Call`], run with [`Call::run`]) or,
//! on the hot path, as an `EVALSHA` command ([`evalsha`]) sent with
//! [`run`]; both check their keys ([`crate::slots::check_one_slot`]) when the layout is
//! [`KeyLayout::HashTagged`](crate::keys::KeyLayout): a call whose keys
//! span two slots is refused before it is sent, naming the keys and their
//! slots, exactly where a cluster would answer `CROSSSLOT`. Multi-key
//! commands and transactions are checked with [`check_keys`]. The plain
//! layout checks nothing (no cost on its hot path). Batched operations
//! send their items in chunks of [`MAX_BATCH`] ([`in_batches`]).

use crate::codec::per_item;
use crate::slots::check_one_slot;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Op, StoreError};
use redis::{Cmd, FromRedisValue, Script, ScriptInvocation, ToRedisArgs};
use std::future::Future;

/// `EVALSHA <sha> <keys>`, ready for the keys and then the arguments: the
/// hot path (claim, renew, ack) writes its arguments straight into one
/// command buffer (see docs/PERFORMANCE.md).
pub(crate) fn evalsha(script: &Script, keys: usize, args: usize, bytes: usize) -> Cmd {
    let mut cmd = Cmd::with_capacity(3 + keys + args, 64 + bytes);
    cmd.arg("EVALSHA").arg(script.get_hash()).arg(keys);
    cmd
}

/// A script call being built, as a `redis::ScriptInvocation` (run as
/// before, by SHA, loaded on NOSCRIPT) whose keys are also kept, to be
/// checked, when the layout is hash-tagged (an invocation's keys cannot be
/// read back).
pub(crate) struct Call<'a> {
    script: &'a Script,
    invocation: ScriptInvocation<'a>,
    /// Kept when they are checked (hash-tagged) or name the call's span.
    keys: Option<Vec<Vec<u8>>>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(store: &RedisStore, script: &'a Script) -> Self {
        let keep = store.checks_slots() || store.conn().traced();
        Call {
            script,
            invocation: script.prepare_invoke(),
            keys: keep.then(Vec::new),
        }
    }

    /// Adds `KEYS[n]`.
    pub(crate) fn key(&mut self, key: impl ToRedisArgs) -> &mut Self {
        if let Some(keys) = &mut self.keys {
            key.write_redis_args(keys);
        }
        self.invocation.key(key);
        self
    }

    /// Adds `ARGV[n]`.
    pub(crate) fn arg(&mut self, arg: impl ToRedisArgs) -> &mut Self {
        self.invocation.arg(arg);
        self
    }

    /// Checks the slots (hash-tagged layout), then runs the script.
    pub(crate) async fn run<T: FromRedisValue>(
        &self,
        store: &RedisStore,
        op: Op,
    ) -> Result<T, StoreError> {
        let keys = self.keys.as_deref().unwrap_or_default();
        if store.checks_slots() {
            let what = format!("script call ({op:?})");
            check_one_slot(op, &what, keys.iter().map(Vec::as_slice))?;
        }
        store
            .conn()
            .script(
                op,
                self.script,
                keys.iter().map(Vec::as_slice),
                &self.invocation,
            )
            .await
    }
}

/// Runs an `EVALSHA` command of `script` (built by [`evalsha`] and
/// filled with its keys and arguments), after checking that its keys stay
/// in one slot when the layout is hash-tagged.
pub(crate) async fn run<T: FromRedisValue>(
    store: &RedisStore,
    op: Op,
    script: &Script,
    cmd: &Cmd,
) -> Result<T, StoreError> {
    if store.checks_slots() {
        check_evalsha(op, cmd)?;
    }
    store.conn().evalsha(op, script, cmd).await
}

/// [`run`] of a script that answers one integer per item: its reply,
/// checked to hold exactly `items` values.
pub(crate) async fn run_per_item(
    store: &RedisStore,
    op: Op,
    script: &Script,
    cmd: &Cmd,
    items: usize,
) -> Result<Vec<i64>, StoreError> {
    let reply: Vec<i64> = run(store, op, script, cmd).await?;
    per_item(op, reply, items)
}

/// The keys of an `EVALSHA <sha> <numkeys> <keys…> <args…>` command in one slot.
fn check_evalsha(op: Op, cmd: &Cmd) -> Result<(), StoreError> {
    let mut args = cmd.args_iter().map(|a| match a {
        redis::Arg::Simple(bytes) => bytes,
        _ => &[][..],
    });
    let numkeys = args
        .nth(2)
        .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
        .unwrap_or(0);
    let keys: Vec<&[u8]> = args.take(numkeys).collect();
    check_one_slot(op, &format!("script call ({op:?})"), keys.iter().copied())
}

/// With the hash-tagged layout, `Ok` only when `keys` (of one multi-key
/// command or one transaction, `what`) share a slot.
pub(crate) fn check_keys<K: AsRef<[u8]>>(
    store: &RedisStore,
    op: Op,
    what: &str,
    keys: &[K],
) -> Result<(), StoreError> {
    if !store.checks_slots() {
        return Ok(());
    }
    check_one_slot(op, what, keys.iter().map(AsRef::as_ref))
}

/// Runs `call` on each chunk of at most [`MAX_BATCH`] of `items`, in
/// order, and answers every chunk's answers in one list; the first error
/// is returned (later chunks are not sent).
pub(crate) async fn in_batches<'a, T, R, F, Fut>(
    items: &'a [T],
    mut call: F,
) -> Result<Vec<R>, StoreError>
where
    F: FnMut(&'a [T]) -> Fut,
    Fut: Future<Output = Result<Vec<R>, StoreError>>,
{
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        out.extend(call(chunk).await?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_evalsha_whose_keys_cross_slots_is_refused_naming_the_keys() {
        let script = Script::new("return 1");
        let mut cmd = evalsha(&script, 2, 1, 0);
        cmd.arg("{q}:claimed")
            .arg("request-cancel:abc")
            .arg("{x}:arg");
        let text = check_evalsha(Op::Claim, &cmd).unwrap_err().to_string();
        assert!(
            text.contains("\"{q}:claimed\"") && text.contains("\"request-cancel:abc\""),
            "{text}"
        );
        assert!(!text.contains("{x}:arg"), "arguments are no keys: {text}");
        let mut cmd = evalsha(&script, 2, 1, 0);
        cmd.arg("q").arg("{q}:claimed").arg("other");
        assert!(check_evalsha(Op::Claim, &cmd).is_ok());
    }
}
