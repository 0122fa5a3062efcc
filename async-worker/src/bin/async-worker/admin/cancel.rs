//! `admin cancel ID [--queue Q]`: cancels request ID as the Go producer does (its active token copied into `request-cancel:ID`), then says where the cancelled generation is and what ends it.
//!
//! The write is the producer's own (`ClaimProducer::cancel`), so every
//! processor, ours or Go's, honours it: a claim of that generation answers
//! `CANCELLED` without calling the gateway, and a worker holding it
//! already sees the key at its next heartbeat, aborts the call and answers
//! `CANCELLED`. Finding the generation pages through the pending sets, as
//! `inspect` does.

use super::inspect::{Location, locate};
use super::output::{Table, json, utc};
use super::{AdminError, Ctx};
use claim_core::{ClaimProducer, ClaimStore, Generation};
use serde::Serialize;

/// Where the cancelled generation is, and what ends it.
#[derive(Debug, Serialize)]
struct Found {
    token: String,
    /// `pending`, `claimed`, `parked` or `dead`.
    place: &'static str,
    queue: Option<String>,
    owner: Option<String>,
    /// What happens to it now.
    then: String,
}

/// The whole answer.
#[derive(Debug, Serialize)]
struct Report {
    id: String,
    /// Always true when printed: an id without an active generation is
    /// refused (nothing written).
    cancel_key_written: bool,
    /// Where the cancelled generation is; empty when it is in none of the
    /// configured queues' sets (unknown).
    found: Vec<Found>,
}

pub(super) async fn run(ctx: &Ctx, id: &str, queue: Option<&str>) -> Result<(), AdminError> {
    // A queue not in the config is refused before anything is written.
    ctx.queues(queue)?;
    if !ctx.store.cancel(id).await? {
        return Err(AdminError::BadInput(format!(
            "request {id:?} has no active generation (no live request-active:{id}: never submitted, or past its deadline), so nothing was written; `async-worker admin inspect {id}` shows where it is"
        )));
    }
    let mut found = Vec::new();
    for l in locate(ctx, id, queue).await? {
        let g = Generation::new(id, l.token.clone());
        // Only the generation the cancel key now names is cancelled.
        if ctx.store.cancelled(std::slice::from_ref(&g)).await?[0] {
            found.push(describe(l, ctx.heartbeat()));
        }
    }
    let report = Report {
        id: id.to_owned(),
        cancel_key_written: true,
        found,
    };
    if ctx.json {
        return json(&report);
    }
    println!("cancel key written: request-cancel:{id} holds its active generation's token");
    if report.found.is_empty() {
        println!(
            "request {id:?} is not pending, claimed, parked or dead in the configured queues (answered meanwhile, or in another queue): a claim of it anywhere answers CANCELLED while the key lives (7 days)"
        );
        return Ok(());
    }
    let mut t = Table::new(&["GENERATION", "WHERE", "QUEUE", "OWNER", "THEN"]);
    for f in &report.found {
        t.row(vec![
            f.token.clone(),
            f.place.to_owned(),
            f.queue.clone().unwrap_or_else(|| "-".into()),
            f.owner.clone().unwrap_or_else(|| "-".into()),
            f.then.clone(),
        ]);
    }
    t.print();
    Ok(())
}

/// What ends the cancelled generation where `l` found it.
fn describe(l: Location, heartbeat: String) -> Found {
    let then = match l.place {
        "pending" => "its claim answers CANCELLED, without a gateway call".to_owned(),
        "claimed" => format!(
            "in flight: its owner's heartbeat (every {heartbeat}) sees the cancel, aborts the gateway call and answers CANCELLED"
        ),
        "parked" => format!(
            "answers CANCELLED once promoted and claimed (due {}; `admin retry-now` promotes it now)",
            utc(l.at_ms.unwrap_or(0))
        ),
        _ => "dead-lettered: answers CANCELLED only if redriven".to_owned(),
    };
    Found {
        token: l.token,
        place: l.place,
        queue: l.queue,
        owner: l.owner,
        then,
    }
}
