//! `admin inspect ID` and `admin cancel ID`. Inspect: where each generation of a request is now (pending, claimed by whom, parked, dead with reason; answered: marker present) and its envelope without the payload.
//!
//! It reads every configured queue's pending set in pages, so on a very
//! long queue it takes a while; it changes nothing.
//!
//! `admin cancel ID [--queue Q]` cancels request ID as the Go producer
//! does (its active token copied into `request-cancel:ID`), then says
//! where the cancelled generation is and what ends it. The write is the
//! producer's own (`ClaimProducer::cancel`), so every processor, ours or
//! Go's, honours it: a claim of that generation answers `CANCELLED`
//! without calling the gateway, and a worker holding it already sees the
//! key at its next heartbeat, aborts the call and answers `CANCELLED`.
//! Finding the generation pages through the pending sets, as `inspect`
//! does.

use super::output::{Table, json, lease_left, utc};
use super::{AdminError, Ctx};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation, Member, wire};
use serde::Serialize;
use std::collections::BTreeSet;

/// Pending members read per call.
const PAGE: usize = 1000;

/// One place a generation of the request is.
#[derive(Debug, Default, Serialize)]
struct Location {
    token: String,
    /// `pending`, `claimed`, `parked` (retry set) or `dead`.
    place: &'static str,
    queue: Option<String>,
    owner: Option<String>,
    lease_left_ms: Option<i64>,
    redeliveries: Option<u32>,
    reason: Option<String>,
    /// Unix ms: when it was dead-lettered, or when a parked retry is due.
    at_ms: Option<u64>,
    /// The envelope, its payload left out unless `--show-payload`.
    envelope: serde_json::Value,
}

/// The whole answer of `inspect`.
#[derive(Debug, Serialize)]
struct Report {
    id: String,
    locations: Vec<Location>,
    /// Generations with a live terminal marker (their record was delivered).
    answered: Vec<String>,
}

pub(super) async fn inspect(ctx: &Ctx, id: &str) -> Result<(), AdminError> {
    let store = &ctx.store;
    let locations = locate(ctx, id, None).await?;
    let tokens: BTreeSet<String> = locations.iter().map(|l| l.token.clone()).collect();
    let mut answered = Vec::new();
    for token in tokens {
        if store
            .is_terminal(&Generation::new(id, token.clone()))
            .await?
        {
            answered.push(token);
        }
    }
    let report = Report {
        id: id.to_owned(),
        locations,
        answered,
    };
    if ctx.json {
        return json(&report);
    }
    print(&report)
}

/// Every place a generation of request `id` is, in the configured queues
/// (or `only`, and the retries bound for it): pending (paging through the
/// whole set), claimed, dead, parked.
async fn locate(ctx: &Ctx, id: &str, only: Option<&str>) -> Result<Vec<Location>, AdminError> {
    let store = &ctx.store;
    let now = store.now().await?;
    let mut locations = Vec::new();
    let mine = |m: &Member| {
        wire::parse_member(m.as_bytes())
            .ok()
            .filter(|p| p.id == id)
            .map(|p| p.token)
    };
    for q in ctx.queues(only)? {
        let queue = Some(q.queue.clone());
        let mut offset = 0;
        loop {
            let page = store.peek(&q.queue, offset, PAGE).await?;
            for e in &page {
                if let Some(token) = mine(&e.member) {
                    locations.push(at(ctx, token, "pending", queue.clone(), &e.member));
                }
            }
            if page.len() < PAGE {
                break;
            }
            offset += PAGE;
        }
        for c in store.claims(&q.queue).await? {
            if c.generation.id == id {
                let mut l = at(
                    ctx,
                    c.generation.token.clone(),
                    "claimed",
                    queue.clone(),
                    &c.member,
                );
                l.owner = Some(c.owner.as_str().to_owned());
                l.lease_left_ms = Some(c.lease_expiry.0 as i64 - now.0 as i64);
                l.redeliveries = Some(c.redeliveries);
                locations.push(l);
            }
        }
        for d in store.dead_entries(&q.queue).await? {
            if let Some(token) = mine(&d.member) {
                let mut l = at(ctx, token, "dead", queue.clone(), &d.member);
                l.reason = Some(d.reason.clone());
                l.at_ms = Some(d.at.0);
                locations.push(l);
            }
        }
    }
    for r in store.retry_entries().await? {
        if let Some(token) = mine(&r.member) {
            let queue = wire::parse_member(r.member.as_bytes())
                .ok()
                .and_then(|p| p.request_queue_name);
            let bound_for = queue.as_deref().unwrap_or(&store.config().default_queue);
            if only.is_some_and(|o| o != bound_for) {
                continue;
            }
            let mut l = at(ctx, token, "parked", queue.clone(), &r.member);
            l.at_ms = Some(r.score.as_millis().0);
            locations.push(l);
        }
    }
    Ok(locations)
}

/// Generation `token` at `place`, its envelope from `m`; the rest is the caller's to fill.
fn at(
    ctx: &Ctx,
    token: String,
    place: &'static str,
    queue: Option<String>,
    m: &Member,
) -> Location {
    Location {
        token,
        place,
        queue,
        envelope: envelope(m, ctx.show_payload),
        ..Location::default()
    }
}

/// The member as JSON, `data.payload` replaced by a note of its size
/// unless `show` (an unparsable member: its length only).
fn envelope(m: &Member, show: bool) -> serde_json::Value {
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(m.as_bytes()) else {
        return serde_json::json!(format!("(not JSON, {} bytes)", m.as_bytes().len()));
    };
    if !show
        && let Some(payload) = v.pointer_mut("/data/payload")
        && !payload.is_null()
    {
        let size = payload.to_string().len();
        *payload = serde_json::json!(format!("(omitted, {size} bytes; --show-payload prints it)"));
    }
    v
}

fn print(report: &Report) -> Result<(), AdminError> {
    if report.locations.is_empty() {
        println!(
            "request {:?}: not pending, claimed, parked or dead in the configured queues (an answered request leaves only its record and marker)",
            report.id
        );
        return Ok(());
    }
    let mut t = Table::new(&["GENERATION", "WHERE", "QUEUE", "DETAIL", "ANSWERED"]);
    for l in &report.locations {
        let detail = match l.place {
            "claimed" => format!(
                "owner {}, lease left {}, {} earlier deliveries",
                l.owner.as_deref().unwrap_or("-"),
                lease_left(l.lease_left_ms.unwrap_or(0)),
                l.redeliveries.unwrap_or(0)
            ),
            "dead" => format!(
                "{} (at {})",
                l.reason.as_deref().unwrap_or("-"),
                utc(l.at_ms.unwrap_or(0))
            ),
            "parked" => format!("due {}", utc(l.at_ms.unwrap_or(0))),
            _ => String::new(),
        };
        let answered = report.answered.contains(&l.token);
        t.row(vec![
            l.token.clone(),
            l.place.to_owned(),
            l.queue.clone().unwrap_or_else(|| "-".into()),
            detail,
            if answered {
                "yes: marker present"
            } else {
                "no"
            }
            .into(),
        ]);
    }
    t.print();
    for l in &report.locations {
        println!("\nenvelope ({} {}):", l.place, l.token);
        json(&l.envelope)?;
    }
    Ok(())
}

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

/// The whole answer of `cancel`.
#[derive(Debug, Serialize)]
struct Cancelled {
    id: String,
    /// Always true when printed: an id without an active generation is
    /// refused (nothing written).
    cancel_key_written: bool,
    /// Where the cancelled generation is; empty when it is in none of the
    /// configured queues' sets (unknown).
    found: Vec<Found>,
}

pub(super) async fn cancel(ctx: &Ctx, id: &str, queue: Option<&str>) -> Result<(), AdminError> {
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
    let report = Cancelled {
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
