//! `async-worker admin pending`, `retries` and `retry-now` as an operator runs them (the real binary, against a redis-server the test starts): pages by rank and by score, payloads never printed, a parked retry promoted at once; exit codes 1 and 2.

mod common;

use claim_core::wire::Envelope;
use common::admin::{Ran, admin};
use common::{QUEUE, RETRIES};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;

/// Every payload of these tests carries it; no output may.
const SECRET: &str = "top-secret-payload";

/// Submits `n` requests `r-0`.. as the Go producer does, one second of
/// deadline apart, created a minute ago; returns their deadlines.
async fn submit(conn: &mut MultiplexedConnection, n: usize) -> Vec<i64> {
    let now = common::unix_now();
    let mut deadlines = Vec::new();
    for i in 0..n {
        let deadline = now + 600 + i as i64;
        let id = format!("r-{i}");
        let mut e = Envelope::new(
            &id,
            common::token(&id),
            deadline,
            serde_json::json!({ "prompt": SECRET }),
        );
        e.data.created = now - 60;
        common::go_submit_envelope(conn, &e).await;
        deadlines.push(deadline);
    }
    deadlines
}

/// Parks `id` in the shared retry set as a Go processor does (retry count
/// 1, bound for the default queue), due `due_in` seconds from now; returns
/// its due score.
async fn park(conn: &mut MultiplexedConnection, id: &str, due_in: i64) -> i64 {
    let now = common::unix_now();
    let mut e = Envelope::new(
        id,
        common::token(id),
        now + 3600,
        serde_json::json!({ "prompt": SECRET }),
    );
    e.internal.retry_count = 1;
    e.data.created = now - 120;
    let due = now + due_in;
    let _: () = conn.zadd(RETRIES, e.to_bytes(), due).await.unwrap();
    due
}

/// The ids in a table's first column after the header, skipping the `next page` line.
fn ids(ran: &Ran) -> Vec<String> {
    ran.ok()
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("next page"))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
        .collect()
}

/// The `--after` value of a table's `next page` line.
fn next_after(ran: &Ran) -> String {
    let line = ran
        .ok()
        .lines()
        .find(|l| l.starts_with("next page"))
        .unwrap_or_else(|| panic!("no next page line: {}", ran.stdout));
    line.split("--after ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn pending_and_retries_page_earliest_first_by_rank_or_by_score_and_never_print_a_payload() {
    let Some((_server, url, mut conn)) = common::server_and_conn().await else {
        return;
    };
    let deadlines = submit(&mut conn, 5).await;
    let dues = [
        park(&mut conn, "parked-0", 100).await,
        park(&mut conn, "parked-1", 200).await,
    ];

    let first = admin(&url, &["pending", "--limit", "2"]);
    assert_eq!(ids(&first), ["r-0", "r-1"], "{}", first.stdout);
    assert!(first.stdout.starts_with("QUEUE  "), "{}", first.stdout);
    let after = next_after(&first);
    assert_eq!(after.parse::<f64>().unwrap(), deadlines[1] as f64);
    let second = admin(&url, &["pending", "--limit", "2", "--after", &after]);
    assert_eq!(ids(&second), ["r-2", "r-3"], "{}", second.stdout);
    let last = admin(&url, &["pending", "--limit", "2", "--offset", "4"]);
    assert_eq!(ids(&last), ["r-4"], "{}", last.stdout);
    assert!(
        !last.stdout.contains("next page"),
        "the last page: {}",
        last.stdout
    );

    let rows = admin(&url, &["--json", "pending", "--queue", QUEUE]).json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["id"], "r-0");
    assert_eq!(rows[0]["token"], common::token("r-0"));
    assert_eq!(rows[0]["queue"], QUEUE);
    assert_eq!(rows[0]["deadline"], deadlines[0]);
    assert_eq!(rows[0]["score"], deadlines[0] as f64);
    assert_eq!(rows[0]["retry_count"], 0);
    assert!(rows[0]["age_ms"].as_u64().unwrap() >= 60_000, "{}", rows[0]);

    let retries = admin(&url, &["retries"]);
    assert_eq!(
        ids(&retries),
        ["parked-0", "parked-1"],
        "{}",
        retries.stdout
    );
    let one = admin(&url, &["--json", "retries", "--limit", "1"]).json();
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["id"], "parked-0");
    assert_eq!(one[0]["due_ms"], dues[0] as u64 * 1000);
    assert_eq!(one[0]["retry_count"], 1);
    assert_eq!(one[0]["queue"], QUEUE, "bound for the default queue");
    let later = admin(&url, &["retries", "--after", &dues[0].to_string()]);
    assert_eq!(ids(&later), ["parked-1"], "{}", later.stdout);

    for ran in [&first, &second, &last, &retries, &later] {
        assert!(
            !ran.stdout.contains(SECRET),
            "a payload printed: {}",
            ran.stdout
        );
    }
    let printed = admin(&url, &["--json", "retries"]);
    assert!(!printed.stdout.contains(SECRET), "{}", printed.stdout);
    let d = common::depths(&mut conn).await;
    assert_eq!(
        (d.pending, d.retry),
        (5, 2),
        "browsing changes nothing: {d:?}"
    );
}

#[tokio::test]
async fn retry_now_moves_a_parked_retry_to_pending_at_its_deadline_score_at_once_and_only_once() {
    let Some((_server, url, mut conn)) = common::server_and_conn().await else {
        return;
    };
    park(&mut conn, "parked-0", 3600).await;
    park(&mut conn, "parked-1", 3600).await;
    let parked: Vec<(Vec<u8>, f64)> = conn.zrange_withscores(RETRIES, 0, 0).await.unwrap();
    let member = parked[0].0.clone();

    let ran = admin(&url, &["retry-now", "parked-0"]);
    let out = ran.ok();
    assert!(
        out.contains("parked-0") && out.contains("promoted to pending"),
        "{out}"
    );
    assert!(out.contains("promoted 1 of 1 parked retries"), "{out}");
    let score: Option<f64> = conn.zscore(QUEUE, &member).await.unwrap();
    let deadline = claim_core::wire::parse_member(&member).unwrap().deadline;
    assert_eq!(
        score,
        Some(deadline as f64),
        "pending at its deadline score"
    );
    assert_eq!(common::member_ids(&mut conn, RETRIES).await, ["parked-1"]);

    let again = admin(&url, &["retry-now", "parked-0"]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("no parked retry of request \"parked-0\""),
        "{}",
        again.stderr
    );
    let moved = admin(&url, &["--json", "retry-now", "parked-1", "--queue", QUEUE]).json();
    assert_eq!(moved[0]["outcome"], "promoted");
    assert_eq!(moved[0]["token"], common::token("parked-1"));
    let d = common::depths(&mut conn).await;
    assert_eq!((d.pending, d.retry), (2, 0), "{d:?}");
}

#[tokio::test]
async fn the_browse_cancel_and_retry_now_commands_exit_1_when_redis_is_down_and_2_on_bad_input() {
    let unreachable = format!("redis://127.0.0.1:{}", common::free_port());
    let down = [
        &["pending"][..],
        &["retries"],
        &["cancel", "x"],
        &["retry-now", "x"],
    ]
    .map(|args| (unreachable.as_str(), args, 1, "cannot reach Redis"));
    let Some(server) = common::redis_server() else {
        return;
    };
    let url = server.url();
    let bad = [
        (
            &["pending", "--queue", "no-such-queue"][..],
            "not in the transport config",
        ),
        (
            &["retries", "--queue", "no-such-queue"],
            "not in the transport config",
        ),
        (
            &["cancel", "x", "--queue", "no-such-queue"],
            "not in the transport config",
        ),
        (
            &["retry-now", "x", "--queue", "no-such-queue"],
            "not in the transport config",
        ),
        (&["cancel", "no-such-id"], "has no active generation"),
        (&["retry-now", "no-such-id"], "no parked retry of request"),
        (&["pending", "--after", "NaN"], "not a finite number"),
        (&["pending", "--limit", "0"], "--limit"),
        (
            &["retries", "--after", "1", "--offset", "2"],
            "cannot be used with",
        ),
    ]
    .map(|(args, says)| (url.as_str(), args, 2, says));
    for (target, args, code, says) in down.into_iter().chain(bad) {
        let ran = admin(target, args);
        assert_eq!(ran.code, code, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(says), "{args:?}: {}", ran.stderr);
    }
    let mut conn = common::connect(&url).await;
    let written: bool = conn
        .exists(claim_core::wire::cancel_key("no-such-id"))
        .await
        .unwrap();
    assert!(!written, "a refused cancel writes nothing");
}

#[tokio::test]
async fn retry_now_of_an_entry_bound_for_a_bookkeeping_key_dead_letters_it_and_touches_nothing_else()
 {
    let Some((_server, url, mut conn)) = common::server_and_conn().await else {
        return;
    };
    // A hostile producer names the queue's claim hash as the entry's queue.
    let claimed = format!("{QUEUE}:claimed");
    let _: () = conn.hset(&claimed, "someone-else", "kept").await.unwrap();
    let mut e = Envelope::new(
        "hostile",
        common::token("hostile"),
        common::unix_now() + 3600,
        serde_json::json!({}),
    );
    e.internal.request_queue_name = claimed.clone();
    let _: () = conn
        .zadd(RETRIES, e.to_bytes(), common::unix_now() + 3600)
        .await
        .unwrap();

    let ran = admin(&url, &["retry-now", "hostile"]);
    let out = ran.ok();
    assert!(
        out.contains("cannot be promoted: moved to the dead set"),
        "{out}"
    );
    assert!(out.contains("promoted 0 of 1"), "{out}");
    let dead = admin(&url, &["--json", "dead", "list"]).json();
    assert_eq!(dead[0]["id"], "hostile", "{dead}");
    assert!(
        dead[0]["reason"].as_str().unwrap().contains(&claimed),
        "{dead}"
    );
    let kept: Vec<(String, String)> = conn.hgetall(&claimed).await.unwrap();
    assert_eq!(kept, [("someone-else".to_owned(), "kept".to_owned())]);
    let d = common::depths(&mut conn).await;
    assert_eq!((d.pending, d.retry), (0, 0), "{d:?}");
}
