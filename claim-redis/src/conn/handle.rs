//! One checked-out connection: a pooled multiplexed connection (standalone, Sentinel) or a handle on the cluster client, behind redis-rs's `ConnectionLike` so every call site sends the same way.

use super::Manager;
use deadpool::managed::Object;
use redis::aio::ConnectionLike;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// What a call runs on. Both variants hand the command to the connection's
/// own (already boxed) future, so the standalone hot path pays one `match`.
pub(crate) enum Handle {
    Pooled(Object<Manager>),
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
            Handle::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Handle::Pooled(conn) => (**conn).get_db(),
            Handle::Cluster(conn) => conn.get_db(),
        }
    }
}
