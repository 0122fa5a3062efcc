//! The claim-core conformance suite on the Redis store, each test on its own private redis-server: every check plainly, through faults (2 seeds) and on the server's TIME, and the model-based test.
//!
//! A `harness = false` target: `main` is `claim_conformance::run`.
//! `cargo test -p claim-redis --test conformance -- --list` lists every
//! trial (`plain::`, `through_faults::`, `server_time::`, `admin::` and
//! `model_based::`); a name filter runs the matching ones. Plain and through-faults stores get a
//! fresh random key prefix and the check's manual clock (explicit time);
//! server-time stores read the server's `TIME`, and run the checks that
//! need no clock of their own, starting at that time. Without
//! `redis-server` on PATH every test is skipped, unless `CI` is set, when
//! they fail.

mod common;
mod suite;

use claim_redis::KeyLayout;
use suite::Redis;

/// Today's keys, byte for byte.
const LAYOUT: KeyLayout = KeyLayout::Plain;

fn main() {
    let options = suite::options(|| Box::pin(Redis::on_server_time(LAYOUT)), 32);
    claim_conformance::run(|| Redis::start(LAYOUT), options)
}
