//! The runs at scale, summarized after the table against the goals: the backlog ratio, the idle cost per queue and the busy queues' rate, the memory an answered request still holds.

use super::table::{Row, get};

/// The figures of these runs that are not table columns, carried through
/// [`super::table::medians`].
pub(super) const KEYS: [&str; 11] = [
    "backlog",
    "fill_s",
    "idle_us_per_queue_s",
    "idle_calls_per_queue_s",
    "idle_us_s_configured",
    "idle_us_s_baseline",
    "configured_queues",
    "busy_queues",
    "answered_bytes_per_request",
    "waited_s",
    "keys_left",
];

/// Of [`KEYS`], those in words, not numbers: a median takes the last round's.
pub(super) const TEXT_KEYS: [&str; 1] = ["keys_left"];

/// The backlog drain ratio the issue asks for (large over small).
const BACKLOG_GOAL: f64 = 0.9;
/// Bytes an answered request may still hold once its dedup window passed.
const ANSWERED_GOAL: f64 = 32.0;

fn figure(row: &Row, key: &str) -> Option<f64> {
    get(row, key).parse().ok()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "missed" }
}

pub(super) fn print_summary(rows: &[Row]) {
    print_backlog(rows);
    print_queues(rows);
    print_answered(rows);
}

/// The smallest and the largest backlog's rates, and their ratio.
fn print_backlog(rows: &[Row]) {
    let mut sized: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((figure(r, "backlog")?, figure(r, "jobs_per_s")?)))
        .collect();
    sized.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (Some(small), Some(large)) = (sized.first(), sized.last()) else {
        return;
    };
    if small.0 == large.0 {
        return;
    }
    let ratio = large.1 / small.1;
    println!(
        "\nbacklog: {} pending drain {} jobs/s, {} pending {} jobs/s: ratio {ratio:.3} (goal >= {BACKLOG_GOAL}: {})",
        large.0,
        large.1,
        small.0,
        small.1,
        verdict(ratio >= BACKLOG_GOAL)
    );
}

/// Idle Redis CPU per idle queue, and the busy queues' rate beside the
/// idle ones against their rate alone.
fn print_queues(rows: &[Row]) {
    let Some(beside) = rows
        .iter()
        .find(|r| figure(r, "idle_us_per_queue_s").is_some())
    else {
        return;
    };
    let busy = get(beside, "busy_queues");
    let configured = get(beside, "configured_queues");
    println!(
        "\nqueues: idle Redis CPU per idle queue {} µs/s ({} calls/s each; {configured} configured idle {} µs/s, 1 configured {} µs/s)",
        get(beside, "idle_us_per_queue_s"),
        get(beside, "idle_calls_per_queue_s"),
        get(beside, "idle_us_s_configured"),
        get(beside, "idle_us_s_baseline"),
    );
    let alone = rows.iter().find(|r| {
        get(r, "busy_queues") == busy
            && get(r, "configured_queues") == busy
            && figure(r, "idle_us_per_queue_s").is_none()
    });
    let rate = |r: &Row| figure(r, "jobs_per_s");
    if let (Some(with_idle), Some(only)) = (rate(beside), alone.and_then(rate)) {
        println!(
            "queues: {busy} busy of {configured} drain {with_idle} jobs/s, {:.3} of the {only} jobs/s with only them configured",
            with_idle / only
        );
    }
}

fn print_answered(rows: &[Row]) {
    for row in rows {
        let Some(bytes) = figure(row, "answered_bytes_per_request") else {
            continue;
        };
        println!(
            "\nanswered memory: {bytes} B held per answered request after {} s (goal <= {ANSWERED_GOAL}: {}); keys left: {}",
            get(row, "waited_s"),
            verdict(bytes <= ANSWERED_GOAL),
            get(row, "keys_left")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{medians, pairs};
    use super::*;

    #[test]
    fn the_figures_at_scale_survive_medians_and_words_take_the_last_round() {
        let round = |jobs: u32, keys: &str| {
            pairs(&format!(
                "name=a jobs_per_s={jobs} backlog=1000000 keys_left={keys}"
            ))
        };
        let m = medians(&[
            round(9, "x:*=1/9B"),
            round(7, "y:*=2/8B"),
            round(8, "z:*=3/7B"),
        ]);
        assert_eq!(get(&m[0], "backlog"), "1000000");
        assert_eq!(get(&m[0], "jobs_per_s"), "8");
        assert_eq!(get(&m[0], "keys_left"), "z:*=3/7B");
    }
}
