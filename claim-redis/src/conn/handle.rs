//! One checked-out connection: a pooled multiplexed connection (standalone, Sentinel) or a handle on the cluster client, behind redis-rs's `ConnectionLike` so every call site sends the same way.
//!
//! The cluster client sends a pipeline to one node and refuses one whose
//! commands name keys in different slots. The store's non-atomic
//! pipelines (one command per slot, pipelined for fewer round trips) are
//! therefore split here by slot: each slot's commands go as one pipeline
//! to that slot's node, all at once, and the replies are put back in
//! order. A non-atomic pipeline promises no order between slots, so
//! nothing changes for the caller. MULTI/EXEC pipelines are sent as they
//! are (they must stay in one slot).

use super::Source;
use deadpool::managed::Object;
use redis::aio::ConnectionLike;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::Slot;
use redis::{Arg, Cmd, Pipeline, RedisFuture, RedisResult, Value};

/// What a call runs on. Both variants hand the command to the connection's
/// own (already boxed) future, so the standalone hot path pays one `match`.
pub(crate) enum Handle {
    Pooled(Object<Source>),
    Cluster(ClusterConnection),
}

impl Handle {
    /// Drops a pooled connection that failed or timed out instead of
    /// returning it to the pool. A cluster handle is a clone of the client,
    /// which replaces broken node connections itself.
    pub(crate) fn discard(self) {
        if let Handle::Pooled(conn) = self {
            drop(Object::take(conn));
        }
    }
}

impl ConnectionLike for Handle {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Handle::Pooled(conn) => (**conn).req_packed_command(cmd),
            Handle::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Handle::Pooled(conn) => (**conn).req_packed_commands(pipeline, offset, count),
            Handle::Cluster(conn) => {
                let groups = slot_groups(pipeline);
                if pipeline.is_transaction() || groups.len() < 2 {
                    return conn.req_packed_commands(pipeline, offset, count);
                }
                Box::pin(split(conn.clone(), pipeline, groups))
            }
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Handle::Pooled(conn) => (**conn).get_db(),
            Handle::Cluster(conn) => conn.get_db(),
        }
    }
}

/// The slot a command's key hashes to (`EVAL`/`EVALSHA`: the first key
/// after the key count; otherwise the first argument), `None` for a
/// command without one.
fn slot_of(cmd: &Cmd) -> Option<Slot> {
    let args: Vec<&[u8]> = cmd
        .args_iter()
        .filter_map(|a| match a {
            Arg::Simple(bytes) => Some(bytes),
            _ => None,
        })
        .collect();
    let name = args.first()?.to_ascii_uppercase();
    let key = match name.as_slice() {
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" => {
            let count: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
            if count == 0 {
                return None;
            }
            args.get(3)?
        }
        _ => args.get(1)?,
    };
    Some(Slot::for_key(key))
}

/// The pipeline's command indexes grouped by slot, in order of first use;
/// keyless commands join the first group.
fn slot_groups(pipeline: &Pipeline) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Option<Slot>, Vec<usize>)> = Vec::new();
    for (i, cmd) in pipeline.cmd_iter().enumerate() {
        let slot = slot_of(cmd);
        // A keyless group takes the slot of the first keyed command to join.
        match groups
            .iter_mut()
            .find(|(s, _)| slot.is_none() || *s == slot || s.is_none())
        {
            Some((s, group)) => {
                *s = s.or(slot);
                group.push(i);
            }
            None => groups.push((slot, vec![i])),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

/// Sends each group as its own pipeline, all at once, and returns every
/// reply at its command's index.
async fn split(
    conn: ClusterConnection,
    pipeline: &Pipeline,
    groups: Vec<Vec<usize>>,
) -> RedisResult<Vec<Value>> {
    let cmds: Vec<&Cmd> = pipeline.cmd_iter().collect();
    let mut subs: Vec<(Pipeline, ClusterConnection)> = groups
        .iter()
        .map(|group| {
            let mut sub = redis::pipe();
            for &i in group {
                sub.add_command(cmds[i].clone());
            }
            (sub, conn.clone())
        })
        .collect();
    let sends = subs
        .iter_mut()
        .map(|(sub, conn)| conn.req_packed_commands(sub, 0, sub.len()));
    let answers = futures::future::join_all(sends).await;
    let mut out = vec![Value::Nil; cmds.len()];
    for (group, answer) in groups.iter().zip(answers) {
        let values = answer?;
        if values.len() != group.len() {
            return Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "a split pipeline's reply has the wrong length",
            )));
        }
        for (&i, v) in group.iter().zip(values) {
            out[i] = v;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipeline_is_grouped_by_the_slot_of_each_commands_key_in_order_of_first_use() {
        let mut p = redis::pipe();
        p.cmd("DEL").arg("request-cancel:a");
        p.cmd("SET").arg("request-active:a").arg("t");
        p.cmd("HDEL").arg("{request-cancel:a}").arg("x");
        p.cmd("TIME");
        p.cmd("EVALSHA")
            .arg("sha")
            .arg(1)
            .arg("request-active:a")
            .arg("v");
        let groups = slot_groups(&p);
        assert_eq!(groups, vec![vec![0, 2, 3], vec![1, 4]]);
    }

    #[test]
    fn a_pipeline_in_one_slot_is_one_group() {
        let mut p = redis::pipe();
        p.cmd("ZADD").arg("{q}").arg(1).arg("m");
        p.cmd("HSET").arg("{q}:claimed").arg("f").arg("v");
        assert_eq!(slot_groups(&p).len(), 1);
    }
}
