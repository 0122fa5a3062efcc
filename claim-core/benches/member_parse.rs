//! `cargo bench -p claim-core --bench member_parse`: what reading one member costs, the worker's largest single step per job.
//!
//! Times `wire::parse_member` on members shaped as the Go producer writes
//! them (the `cargo xtask bench` member, and the same with a 16 KiB
//! payload), and beside it a generic read of the same bytes into a
//! `serde_json::Value`, for scale. Five rounds each, nanoseconds per member
//! per round and their median. A plain program, not a test: it asserts
//! nothing about time, it measures (compare builds by running it on each,
//! alternated).

use claim_core::wire::{Envelope, parse_member};
use std::hint::black_box;
use std::time::Instant;

const ROUNDS: usize = 5;

fn member(prompt_bytes: usize) -> Vec<u8> {
    let prompt = "x".repeat(prompt_bytes);
    let payload = serde_json::json!({ "model": "m", "prompt": prompt });
    Envelope::new(
        "req-000000001",
        "tok-0123456789abcdef",
        1_900_000_000,
        payload,
    )
    .to_bytes()
}

/// Nanoseconds per call of `read` on `bytes`, over `iterations` calls.
fn round<T>(bytes: &[u8], iterations: u32, read: impl Fn(&[u8]) -> T) -> f64 {
    let started = Instant::now();
    for _ in 0..iterations {
        black_box(read(black_box(bytes)));
    }
    started.elapsed().as_nanos() as f64 / f64::from(iterations)
}

/// Five timed rounds after a warm-up: each round's figure, and the median.
fn rounds<T>(bytes: &[u8], iterations: u32, read: impl Fn(&[u8]) -> T) -> String {
    round(bytes, iterations / 10, &read);
    let mut all: Vec<f64> = (0..ROUNDS)
        .map(|_| round(bytes, iterations, &read))
        .collect();
    let shown: Vec<String> = all.iter().map(|ns| format!("{ns:.0}")).collect();
    all.sort_by(f64::total_cmp);
    format!("{} (median {:.0})", shown.join(" / "), all[ROUNDS / 2])
}

fn main() {
    for (name, bytes, iterations) in [
        ("small", member(11), 1_000_000),
        ("16 KiB payload", member(16 * 1024), 20_000),
    ] {
        let parsed = rounds(&bytes, iterations, |b| {
            parse_member(b).expect("the bench member parses")
        });
        let generic = rounds(&bytes, iterations, |b| {
            serde_json::from_slice::<serde_json::Value>(b).expect("the member is JSON")
        });
        println!("{name} member ({} B), ns per member:", bytes.len());
        println!("  parse_member          {parsed}");
        println!("  serde_json::Value     {generic}");
    }
}
