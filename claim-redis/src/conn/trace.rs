//! The span of one Redis call (`enable_tracing`): its name, its attributes (`db.system`, `db.operation`, the store operation, the queue) and what it costs when tracing is off, one branch.
//!
//! A call's span is `redis`, target [`CALL_SPAN_TARGET`], level debug,
//! with `db.system = "redis"`, `db.operation` (the script's name, such as
//! `claim` or `push_once`, or the command's, such as `ZRANGE`; a pipeline
//! lists its commands, `MULTI` first when it is a transaction), `store.op`
//! (the `ClaimStore` method it serves) and `queue` when the call names one
//! of a queue's bookkeeping keys (`<queue>:claimed` and the others). A call
//! that touches only a pending set, result lists or producer keys carries
//! no queue: the pending set is a bare queue name, which cannot be told
//! from any other key. No span carries a key beyond that, an argument or a
//! member. With tracing off (the default) `Conn` holds no [`CallNames`] and
//! every call pays one `Option` check.

use claim_core::Op;
use claim_core::keys::{BOOKKEEPING_SUFFIXES, PAUSE_SUFFIX};
use redis::{Arg, Cmd, Pipeline, Script};
use tracing::Span;

/// The target of every Redis call span: what a subscriber's filter names.
pub const CALL_SPAN_TARGET: &str = "claim_redis::call";

/// What naming a span needs: the scripts' names by SHA and the key prefix.
#[derive(Debug)]
pub(crate) struct CallNames {
    scripts: Vec<(String, &'static str)>,
    prefix: String,
}

impl CallNames {
    pub(crate) fn new(scripts: &[(&'static str, &Script)], prefix: &str) -> Self {
        CallNames {
            scripts: scripts
                .iter()
                .map(|(name, script)| (script.get_hash().to_owned(), *name))
                .collect(),
            prefix: prefix.to_owned(),
        }
    }

    /// The span of a script call; `keys` are its KEYS, as far as known.
    pub(crate) fn script<'k>(
        &self,
        op: Op,
        script: &Script,
        keys: impl IntoIterator<Item = &'k [u8]>,
    ) -> Span {
        let hash = script.get_hash();
        let name = self
            .scripts
            .iter()
            .find(|(sha, _)| sha == hash)
            .map_or("script", |(_, name)| *name);
        self.span(op, name, self.queue_of(keys))
    }

    /// The span of an `EVALSHA` command built by `ops::call::evalsha`.
    pub(crate) fn evalsha(&self, op: Op, script: &Script, cmd: &Cmd) -> Span {
        let mut args = cmd.args_iter().map(simple);
        let numkeys = args
            .nth(2)
            .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
            .unwrap_or(0);
        self.script(op, script, args.take(numkeys))
    }

    /// The span of one command: its name; the queue of its first key.
    pub(crate) fn command(&self, op: Op, cmd: &Cmd) -> Span {
        let mut args = cmd.args_iter().map(simple);
        let name = command_name(args.next());
        self.span(op, &name, self.queue_of(args.next()))
    }

    /// The span of a pipeline: its commands' names, the first queue named.
    pub(crate) fn pipeline(&self, op: Op, pipeline: &Pipeline) -> Span {
        let mut names: Vec<String> = Vec::new();
        if pipeline.is_transaction() {
            names.push("MULTI".into());
        }
        let mut queue = None;
        for cmd in pipeline.cmd_iter() {
            let mut args = cmd.args_iter().map(simple);
            let name = command_name(args.next());
            if names.last() != Some(&name) {
                names.push(name);
            }
            queue = queue.or_else(|| self.queue_of(args.next()));
        }
        self.span(op, &names.join(" "), queue)
    }

    fn span(&self, op: Op, operation: &str, queue: Option<String>) -> Span {
        let span = tracing::debug_span!(
            target: CALL_SPAN_TARGET,
            "redis",
            db.system = "redis",
            db.operation = operation,
            store.op = op.name(),
            queue = tracing::field::Empty,
        );
        if let Some(queue) = queue {
            span.record("queue", queue);
        }
        span
    }

    /// The queue whose per-queue key is the first of `keys` to be one.
    fn queue_of<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Option<String> {
        keys.into_iter().find_map(|key| {
            let key = std::str::from_utf8(key).ok()?;
            // The suffixes of per-queue keys.
            let mut suffixes = BOOKKEEPING_SUFFIXES.iter().chain(&[PAUSE_SUFFIX, ":retry"]);
            let base = suffixes.find_map(|s| key.strip_suffix(s))?;
            // The hash-tagged base is `{<prefix><queue>}`.
            let base = base
                .strip_prefix('{')
                .and_then(|b| b.strip_suffix('}'))
                .unwrap_or(base);
            Some(base.strip_prefix(self.prefix.as_str())?.to_owned())
        })
    }
}

fn simple(arg: Arg<&[u8]>) -> &[u8] {
    match arg {
        Arg::Simple(bytes) => bytes,
        _ => &[],
    }
}

/// A command's name in capitals, as Redis documents it.
fn command_name(arg: Option<&[u8]>) -> String {
    String::from_utf8_lossy(arg.unwrap_or_default()).to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_queue_is_read_from_its_first_per_queue_key_in_either_layout_and_never_from_others() {
        let names = CallNames::new(&[], "test:1:");
        let queue = |keys: &[&str]| names.queue_of(keys.iter().map(|k| k.as_bytes()));
        assert_eq!(queue(&["test:1:q", "test:1:q:claimed"]), Some("q".into()));
        assert_eq!(queue(&["{test:1:q}:claim-owners"]), Some("q".into()));
        assert_eq!(queue(&["{test:1:q}:retry"]), Some("q".into()));
        assert_eq!(queue(&["test:1:a:dead:dead"]), Some("a:dead".into()));
        assert_eq!(queue(&["test:1:q", "test:1:result-list"]), None);
        assert_eq!(queue(&["other:q:claimed"]), None, "not this store's key");
    }
}
