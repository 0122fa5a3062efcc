//! The path the runtime replaces: ZPOPMIN a batch, run the handler, LPUSH the records in batches. Nothing protects a popped request.
//!
//! Same batching and concurrency as the runtime: a consumer pops up to
//! `batch` members while permits are free, one task per request runs the
//! handler, and one writer pushes up to `ack_batch` records per LPUSH.

use crate::counting::{Counts, Latency};
use crate::protected::{Drain, Held};
use crate::server::Admin;
use crate::{Hold, NoOp, Settings, send_at_rate, sorted_micros};
use async_worker::{Handler, HandlerOutcome, Request};
use claim_core::wire::{self, ResultRecord};
use claim_core::{Generation, Member, Millis};
use redis::aio::MultiplexedConnection;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

struct Record {
    list: String,
    id: String,
    bytes: Vec<u8>,
}

/// Runs until `stop` fires, then lets the popped work finish and pushes its records.
pub async fn run(
    conn: MultiplexedConnection,
    set: Arc<Settings>,
    concurrency: usize,
    handler: Arc<dyn Handler>,
    counts: Arc<Counts>,
    stop: CancellationToken,
) {
    let (tx, rx) = mpsc::channel(concurrency.max(set.ack_batch) * 2);
    let writer = tokio::spawn(write(conn.clone(), set.ack_batch, rx, counts.clone()));
    consume(conn, &set, concurrency, handler, tx, &counts, &stop).await;
    writer.await.expect("writer");
}

async fn consume(
    mut conn: MultiplexedConnection,
    set: &Settings,
    concurrency: usize,
    handler: Arc<dyn Handler>,
    tx: mpsc::Sender<Record>,
    counts: &Counts,
    stop: &CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(concurrency));
    while !stop.is_cancelled() {
        let free = permits.available_permits();
        if free == 0 {
            tokio::select! {
                p = permits.clone().acquire_owned() => drop(p),
                () = stop.cancelled() => break,
            }
            continue;
        }
        let want = set.batch.min(free);
        counts.calls.fetch_add(1, Ordering::Relaxed);
        let popped: Vec<(Vec<u8>, f64)> = redis::cmd("ZPOPMIN")
            .arg(&set.queue)
            .arg(want)
            .query_async(&mut conn)
            .await
            .expect("ZPOPMIN");
        let partial = popped.len() < want;
        for (raw, _) in popped {
            let Ok(parsed) = wire::parse_member(&raw) else {
                continue;
            };
            let permit = permits.clone().acquire_owned().await.expect("permits");
            let request = Request {
                queue_id: set.queue.clone(),
                queue_name: set.queue.clone(),
                generation: Generation::new(parsed.id.clone(), parsed.token.clone()),
                deadline: Millis((parsed.deadline.max(0) as u64) * 1000),
                member: Member::from(raw),
                score: parsed.score(),
                parsed,
                redeliveries: 0,
            };
            let (handler, tx, list) = (handler.clone(), tx.clone(), set.list.clone());
            tokio::spawn(async move {
                let outcome = handler.handle(&request, CancellationToken::new()).await;
                let id = request.generation.id;
                let record = match outcome {
                    HandlerOutcome::Success { status, body } => {
                        ResultRecord::success(id.clone(), status, body)
                    }
                    HandlerOutcome::Error { code, message, .. } => {
                        ResultRecord::error(id.clone(), code, message)
                    }
                    HandlerOutcome::Retry { reason, .. } => {
                        ResultRecord::error(id.clone(), wire::ErrorCode::InferenceError, reason)
                    }
                };
                let bytes = record.to_json_bytes();
                drop(permit);
                let _ = tx.send(Record { list, id, bytes }).await;
            });
        }
        if partial {
            tokio::select! {
                () = tokio::time::sleep(set.poll) => {}
                () = stop.cancelled() => {}
            }
        }
    }
}

async fn write(
    mut conn: MultiplexedConnection,
    ack_batch: usize,
    mut rx: mpsc::Receiver<Record>,
    counts: Arc<Counts>,
) {
    let mut batch = Vec::with_capacity(ack_batch);
    while rx.recv_many(&mut batch, ack_batch).await > 0 {
        let mut lists: BTreeMap<String, Vec<Record>> = BTreeMap::new();
        for record in batch.drain(..) {
            lists.entry(record.list.clone()).or_default().push(record);
        }
        for (list, records) in lists {
            counts.calls.fetch_add(1, Ordering::Relaxed);
            let mut cmd = redis::cmd("LPUSH");
            cmd.arg(&list);
            for r in &records {
                cmd.arg(&r.bytes);
            }
            let _: u64 = cmd.query_async(&mut conn).await.expect("LPUSH");
            counts
                .pushed
                .fetch_add(records.len() as u64, Ordering::Relaxed);
            if let Some(latency) = &counts.latency {
                latency.record(records.iter().map(|r| r.id.as_str()));
            }
        }
    }
}

async fn connect(url: &str) -> MultiplexedConnection {
    let client = redis::Client::open(url).expect("url");
    client
        .get_multiplexed_async_connection()
        .await
        .expect("connect")
}

/// Drains `set.requests` enqueued before the clock starts.
pub async fn drain(set: &Arc<Settings>, url: &str, admin: &Admin) -> Drain {
    admin.flush().await.expect("FLUSHALL");
    let deadline = async_worker::clock::unix_now() + 3600;
    admin
        .enqueue(&set.queue, 0..set.requests, deadline, set.payloads, |_| {})
        .await
        .expect("enqueue");
    let conn = connect(url).await;
    let counts = Arc::new(Counts::default());
    admin.reset_stats().await.expect("RESETSTAT");
    let before = admin.snapshot().await.expect("INFO");
    let stop = CancellationToken::new();
    let cpu = crate::cpu_seconds();
    let machine = crate::machine_jiffies();
    let started = Instant::now();
    let run = tokio::spawn(run(
        conn,
        set.clone(),
        set.concurrency,
        Arc::new(NoOp),
        counts.clone(),
        stop.clone(),
    ));
    let jobs = set.requests as u64;
    while Counts::get(&counts.pushed) < jobs {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let elapsed = started.elapsed();
    let worker_cpu_s = crate::cpu_seconds() - cpu;
    let (busy, total) = crate::machine_jiffies();
    let machine_busy = (busy - machine.0) as f64 / (total - machine.1).max(1) as f64;
    let delta = Admin::delta(&before, &admin.snapshot().await.expect("INFO"));
    stop.cancel();
    run.await.expect("loop");
    Drain {
        payload_keys_left: None,
        jobs,
        elapsed,
        worker_cpu_s,
        machine_busy,
        in_flight: Vec::new(),
        counts,
        delta: Some(delta),
        by_primary: Vec::new(),
    }
}

/// Enqueue→result latencies (µs, sorted) at a steady arrival rate.
pub async fn latency(set: &Arc<Settings>, url: &str, admin: &Admin, rate: f64) -> Vec<u32> {
    admin.flush().await.expect("FLUSHALL");
    let count = ((rate * set.latency_secs) as usize).clamp(1, set.requests);
    let counts = Arc::new(Counts {
        latency: Some(Latency::new(count)),
        ..Counts::default()
    });
    let stop = CancellationToken::new();
    let run = tokio::spawn(run(
        connect(url).await,
        set.clone(),
        set.concurrency,
        Arc::new(NoOp),
        counts.clone(),
        stop.clone(),
    ));
    let latency = counts.latency.as_ref().expect("latency");
    let deadline = async_worker::clock::unix_now() + 3600;
    send_at_rate(count, rate, async |due| {
        admin
            .enqueue(&set.queue, due, deadline, set.payloads, |seq| {
                latency.mark_enqueued(seq)
            })
            .await
            .expect("enqueue")
    })
    .await;
    while Counts::get(&counts.pushed) < count as u64 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    stop.cancel();
    run.await.expect("loop");
    sorted_micros(latency)
}

/// `hold_inflight` popped requests held by a waiting handler, the rest pending.
/// Nothing about them is in Redis: that is what the runtime fixes.
pub async fn hold(set: &Arc<Settings>, url: &str, admin: &Admin) -> Held {
    admin.flush().await.expect("FLUSHALL");
    let deadline = async_worker::clock::unix_now() + 3600;
    let total = set.hold_pending + set.hold_inflight;
    admin
        .enqueue(&set.queue, 0..total, deadline, set.payloads, |_| {})
        .await
        .expect("enqueue");
    let handler = Arc::new(Hold::default());
    let stop = CancellationToken::new();
    let run = tokio::spawn(run(
        connect(url).await,
        set.clone(),
        set.hold_inflight,
        handler.clone(),
        Arc::new(Counts::default()),
        stop.clone(),
    ));
    while handler.entered.load(Ordering::Relaxed) < set.hold_inflight {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_kib = crate::rss_kib();
    stop.cancel();
    handler.release.cancel();
    run.await.expect("loop");
    Held {
        rss_kib,
        claim_bytes: Some(0.0),
        claim_bytes_by_key: None,
    }
}
