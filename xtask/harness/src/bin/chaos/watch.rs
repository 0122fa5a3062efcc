//! What runs beside the faults: the result reader, the supervisor and scraper, and the waits with bounds.

use crate::faults::stamp;
use crate::fleet::Fleet;
use crate::producer::Ledger;
use crate::raw::{Raw, Target};
use crate::results::{self, Leftovers, Records};
use claim_redis::RedisStore;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Polls until every worker has logged its owner token (bounded).
pub async fn wait_until_up(
    fleet: &tokio::sync::Mutex<Fleet>,
    workers: usize,
) -> Result<(), String> {
    let give_up = Instant::now() + Duration::from_secs(20);
    while Instant::now() < give_up {
        if fleet.lock().await.owners_known() == workers {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("the workers did not start within 20 s (see their logs)".into())
}

/// Reads new records every 100 ms until `stop`.
pub async fn read_results(target: Target, records: Arc<Mutex<Records>>, stop: CancellationToken) {
    let mut raw = Raw::new(&target);
    while !stop.is_cancelled() {
        let _ = results::read_new(&mut raw, &records).await;
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
            () = stop.cancelled() => {}
        }
    }
}

/// Every second: restart workers that exited on their own, scrape the
/// rest, and note when lease expiries were counted (time, how many).
pub async fn supervise(
    fleet: Arc<tokio::sync::Mutex<Fleet>>,
    expiries: Arc<Mutex<Vec<(Duration, f64)>>>,
    start: Instant,
    stop: CancellationToken,
) {
    let mut counted = 0.0;
    while !stop.is_cancelled() {
        {
            let mut fleet = fleet.lock().await;
            for note in fleet.supervise() {
                println!("{} {note}", stamp(start));
            }
            fleet.scrape_all().await;
            let total = fleet.totals().claims_expired;
            if total > counted {
                let new = (start.elapsed(), total - counted);
                expiries.lock().expect("expiries lock").push(new);
                counted = total;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            () = stop.cancelled() => {}
        }
    }
}

/// Waits (bounded) until every accepted generation has a record and nothing
/// is left pending, claimed or parked. False when the bound ran out.
pub async fn settle(
    ledger: &Mutex<Ledger>,
    records: &Mutex<Records>,
    store: &RedisStore,
    start: Instant,
    short: bool,
) -> bool {
    let bound = Duration::from_secs(if short { 90 } else { 180 });
    let give_up = Instant::now() + bound;
    let mut next_note = Instant::now() + Duration::from_secs(5);
    loop {
        let missing = records
            .lock()
            .expect("records lock")
            .unanswered(&ledger.lock().expect("ledger lock"));
        let left = if missing == 0 {
            results::leftovers(store).await.ok()
        } else {
            None
        };
        if left.is_some_and(|l: Leftovers| l.settled()) {
            println!(
                "{} every accepted generation has a record; nothing pending, claimed or parked",
                stamp(start)
            );
            return true;
        }
        if Instant::now() > give_up {
            println!(
                "{} gave up after {bound:?}: {missing} generations without a record, Redis holds {left:?}",
                stamp(start)
            );
            return false;
        }
        if Instant::now() > next_note {
            println!(
                "{} waiting: {missing} generations without a record yet",
                stamp(start)
            );
            next_note += Duration::from_secs(5);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
