//! The `backlog` run: the protected drain rate with a small and a large backlog held steady behind it, to show whether a deep queue slows the hot path.
//!
//! For each backlog size (10,000 and 1,000,000 by default) the run flushes
//! the server, fills the queue fast ([`Target::fill`]: the producer's
//! active keys and one `ZADD` per 1,000 members), then starts the runtime
//! with the `protected` run's settings and a producer that keeps the
//! backlog at its size: whenever fewer than that many are unclaimed it
//! enqueues 1,000 more the Go way (`DEL`, `SET … PX`, `ZADD`). The clock
//! runs until `--requests` records are pushed. Both sizes pay for the same
//! producer, one job's worth per job drained, so their rates compare; the
//! per-job figures include the producer's commands, unlike `protected`'s.

use crate::Settings;
use crate::counting::{Counting, Counts};
use crate::protected::{Backend, counting_stores, timed_drain};
use crate::report::emit_with;
use crate::target::Target;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Requests the refilling producer enqueues at a time.
const REFILL: usize = 1000;

/// Runs one drain per size in `sizes`, each printed as its own row
/// (`<name>-10k`, `<name>-1M`).
pub async fn run(name: &str, url: &str, set: &Settings, sizes: &[usize]) {
    let target = Arc::new(Target::standalone(url, set).await);
    let backend = Backend::Redis(target.clone());
    for &size in sizes {
        target.flush().await;
        let deadline = async_worker::clock::unix_now() + set.deadline_secs;
        let filling = Instant::now();
        target.fill(0..size, deadline).await.expect("fill");
        let fill_s = filling.elapsed().as_secs_f64();
        eprintln!("bench: {size} pending filled in {fill_s:.1} s");
        let stores = counting_stores(&backend, 1).await;
        let stop = CancellationToken::new();
        let refill = tokio::spawn(keep_backlog(
            target.clone(),
            stores[0].clone(),
            size,
            deadline,
            stop.clone(),
        ));
        let drain = timed_drain(set, &backend, &stores).await;
        stop.cancel();
        let refilled = refill.await.expect("the refilling producer");
        let extra = serde_json::json!({
            "backlog": size,
            "fill_s": crate::server::round(fill_s, 1),
            "refilled": refilled,
        });
        emit_with(
            &format!("{name}-{}", short(size)),
            set,
            &drain,
            &[],
            None,
            extra,
        );
    }
}

/// Enqueues [`REFILL`] requests whenever fewer than `size` are unclaimed,
/// numbered after the fill, until `stop`; returns how many it enqueued.
async fn keep_backlog(
    target: Arc<Target>,
    store: Arc<Counting>,
    size: usize,
    deadline: i64,
    stop: CancellationToken,
) -> usize {
    let mut next = size;
    while !stop.is_cancelled() {
        let claimed = Counts::get(&store.counts.claimed) as usize;
        if next.saturating_sub(claimed) < size {
            let batch = next..next + REFILL;
            target
                .enqueue(batch, deadline, Default::default(), |_| {})
                .await
                .expect("refill");
            next += REFILL;
        } else {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    next - size
}

/// `10000` → `10k`, `1000000` → `1M`; other sizes as they are.
pub fn short(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn backlog_sizes_are_named_in_thousands_and_millions_when_round() {
        let names = [10_000, 1_000_000, 2_500_000, 1234].map(short);
        assert_eq!(names, ["10k", "1M", "2500k", "1234"]);
    }
}
