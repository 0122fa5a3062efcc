//! The run's report: its `row` and `json` lines, from the drain's counts, latencies and the held phase's readings.

use crate::Settings;
use crate::counting;
use crate::members;
use crate::protected::{Drain, Held};
use crate::server::round;

pub fn percentile(sorted: &[u32], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i] as f64 / 1000.0)
}

pub fn field(x: Option<f64>, digits: i32) -> serde_json::Value {
    x.map_or(serde_json::Value::Null, |x| round(x, digits).into())
}

/// Prints `row` as the `row` line xtask reads: `key=value`, `-` for null.
pub fn print_row(row: &serde_json::Value) {
    let mut line = String::from("row");
    for (k, v) in row.as_object().expect("object") {
        let v = match v {
            serde_json::Value::Null => "-".to_owned(),
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        line.push_str(&format!(" {k}={v}"));
    }
    println!("{line}");
}

/// Prints the run's `row` and `json` lines.
pub fn emit(name: &str, set: &Settings, drain: &Drain, latency: &[u32], held: Option<&Held>) {
    emit_with(name, set, drain, latency, held, serde_json::json!({}));
}

/// [`emit`], with `extra`'s fields (an object of a run's own figures)
/// added to the row.
pub fn emit_with(
    name: &str,
    set: &Settings,
    drain: &Drain,
    latency: &[u32],
    held: Option<&Held>,
    extra: serde_json::Value,
) {
    let jobs = drain.jobs as f64;
    let c = &drain.counts;
    let get = counting::Counts::get;
    let jobs_per_s = jobs / drain.elapsed.as_secs_f64();
    let d = drain.delta.as_ref();
    // Round trips: every store call is one; the pool's checkout pings
    // (UNWATCH + PING, pipelined) are one more each.
    let pings = d.map_or(0, |d| d.calls_of("unwatch"));
    let (member, stored) = members::member(0, async_worker::clock::unix_now(), set.payloads);
    let payload_bytes = match stored {
        Some(stored) => stored.len(),
        None => members::payload(set.payloads.bytes).to_string().len(),
    };
    // A cluster store call is several round trips (the claim reads the
    // producer's keys slot by slot before its script; the ack deletes them
    // one `del_if` per key after its own), so calls are not round trips there.
    let clustered = !drain.by_primary.is_empty();
    let round_trips = d
        .filter(|_| !clustered)
        .map(|_| (get(&c.calls) + pings) as f64 / jobs);
    let by_primary: Vec<String> = drain
        .by_primary
        .iter()
        .map(|p| match p.jobs {
            0 => "-".to_owned(),
            n => format!("{:.2}", p.delta.cpu_us / n as f64),
        })
        .collect();
    let by_primary = if clustered {
        by_primary.join("/")
    } else {
        "-".to_owned()
    };
    let row = serde_json::json!({
        "name": name,
        "jobs_per_s": jobs_per_s.round() as u64,
        "p50_ms": field(percentile(latency, 0.50), 2),
        "p99_ms": field(percentile(latency, 0.99), 2),
        "redis_cpu_us_per_job": field(d.map(|d| d.cpu_us / jobs), 2),
        "redis_calls_per_job": field(d.map(|d| d.calls() as f64 / jobs), 2),
        "round_trips_per_job": field(round_trips, 4),
        "redis_cpu_us_per_served_job_by_primary": by_primary,
        "worker_cpu_us_per_job": round(drain.worker_cpu_s * 1e6 / jobs, 2),
        "machine_busy": round(drain.machine_busy, 2),
        "claim_bytes": field(held.and_then(|h| h.claim_bytes), 0),
        "member_bytes": member.len(),
        "payload_bytes": payload_bytes,
        "by_reference": set.payloads.by_reference,
        "rss_mib": field(held.map(|h| h.rss_kib as f64 / 1024.0), 1),
        "lost_claims": get(&c.lost),
        "wasted_round_trips": 2 * get(&c.empty_claims),
        "payload_keys_left": drain.payload_keys_left,
    });
    let mut row = row;
    if let (Some(row), Some(extra)) = (row.as_object_mut(), extra.as_object()) {
        row.extend(extra.clone());
    }
    print_row(&row);
    let mut full = row;
    full["jobs"] = drain.jobs.into();
    full["elapsed_s"] = round(drain.elapsed.as_secs_f64(), 3).into();
    full["latency_samples"] = latency.len().into();
    full["claim_calls"] = get(&c.claim_calls).into();
    full["ack_calls"] = get(&c.ack_calls).into();
    full["peeks"] = get(&c.peeks).into();
    full["pool_pings"] = pings.into();
    full["store_calls_per_job"] = round(get(&c.calls) as f64 / jobs, 4).into();
    if clustered {
        full["primaries"] = drain
            .by_primary
            .iter()
            .map(|p| {
                serde_json::json!({
                    "port": p.port,
                    "jobs_served": p.jobs,
                    "cpu_us": round(p.delta.cpu_us, 0),
                    "cpu_us_per_served_job": field((p.jobs > 0).then(|| p.delta.cpu_us / p.jobs as f64), 2),
                    "cpu_us_per_job_of_run": round(p.delta.cpu_us / jobs, 2),
                    "calls_per_job_of_run": round(p.delta.calls() as f64 / jobs, 3),
                })
            })
            .collect();
    }
    if let Some(by_key) = held.and_then(|h| h.claim_bytes_by_key) {
        full["claim_bytes_by_key"] = serde_json::json!({
            "claimed": round(by_key[0], 0),
            "claim_owners": round(by_key[1], 0),
            "claims_idx": round(by_key[2], 0),
        });
    }
    let f = &drain.in_flight;
    if !f.is_empty() {
        full["in_flight_during_drain"] = serde_json::json!({
            "p10": f[f.len() / 10], "p50": f[f.len() / 2], "p90": f[f.len() * 9 / 10], "max": f[f.len() - 1],
        });
    }
    full["settings"] = format!("{set:?}").into();
    if let Some(d) = d {
        full["redis_cpu_sys_us_per_job"] = round(d.sys_us / jobs, 2).into();
        full["redis_commands"] = d.per_job_json(drain.jobs);
    }
    println!("json {full}");
}
