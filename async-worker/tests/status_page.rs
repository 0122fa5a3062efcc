//! `/status` in headless Chromium, and `/status.json`: a real worker over a private redis-server with pending, claimed and dead entries; both show queue names, counts, the oldest pending age, the owner token and its pod, dead reasons, and no payload.
//!
//! Two queues: `intake` (a fast gateway; its requests name a result list
//! that holds a string, so each ack dead-letters them, and one member is
//! not JSON) and `slow` (a gateway that answers after a minute, with two
//! workers: two claims held, the rest pending). Skips locally without
//! `chromium` or `redis-server`; fails when `CI` is set.
//!
//! `UPDATE_STATUS_SCREENSHOT=1 cargo test -p async-worker --test status_page`
//! also writes the screenshot to `docs/images/status.png` (docs/OPERATIONS.md
//! shows it); otherwise it goes to a temporary directory.

#[path = "common/chromium.rs"]
mod chromium;
mod common;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use claim_core::wire::Envelope;
use common::worker::{BINARY, DRAIN, Worker};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const INTAKE: &str = "intake";
const SLOW: &str = "slow";
/// A result list that is not a list: every ack to it dead-letters its request.
const BAD_LIST: &str = "not-a-list";
/// Text only payloads hold; the page must never show it.
const SECRET: &str = "PAYLOAD-SECRET-7f3a";
/// Requests to the slow queue; two are claimed (the concurrency), the rest pend.
const SLOW_REQUESTS: usize = 6;
const CONCURRENCY: usize = 2;
/// The worker's host name (`HOSTNAME`, as Kubernetes sets it to the pod's).
const POD: &str = "status-pod-1";

/// Submits as the Go producer does to `queue`, created a minute ago, with
/// the secret in the payload.
async fn submit(
    conn: &mut MultiplexedConnection,
    queue: &str,
    id: &str,
    result_list: Option<&str>,
) {
    let payload = serde_json::json!({"model": "m", "prompt": SECRET});
    let deadline = common::unix_now() + 3600;
    let mut envelope = Envelope::new(id, common::token(id), deadline, payload);
    envelope.internal.request_queue_name = queue.to_owned();
    if let Some(list) = result_list {
        envelope.internal.result_queue_name = list.to_owned();
    }
    envelope.data.created = common::unix_now() - 60;
    let _: () = conn
        .zadd(queue, envelope.to_bytes(), deadline)
        .await
        .expect("ZADD");
}

async fn hlen(conn: &mut MultiplexedConnection, key: &str) -> usize {
    conn.hlen(key).await.expect("HLEN")
}

async fn zcard(conn: &mut MultiplexedConnection, key: &str) -> usize {
    conn.zcard(key).await.expect("ZCARD")
}

/// The status code of `<method> <path>` on `port` (HTTP/1.0, no body).
async fn status_code(port: u16, method: &str, path: &str) -> u16 {
    answer(port, method, path).await.0
}

/// The status code and body of `<method> <path>` on `port` (HTTP/1.0, no body).
async fn answer(port: u16, method: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the health port");
    let request =
        format!("{method} {path} HTTP/1.0\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut response = String::new();
    let read = stream.read_to_string(&mut response);
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("an answer within 5 s")
        .expect("read the answer");
    let code = response.split(' ').nth(1).and_then(|c| c.parse().ok());
    let code = code.unwrap_or_else(|| panic!("not an HTTP answer: {response}"));
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (code, body.to_owned())
}

/// The processor on `config`'s queues with [`CONCURRENCY`] workers, 30 s
/// leases and a drain timeout of `drain`.
fn start_worker(redis_url: &str, config: &str, drain: &str) -> Worker {
    let metrics_port = common::free_port();
    let health_port = common::free_port();
    let mut command = Command::new(BINARY);
    #[rustfmt::skip]
    command
        .args([
            "--redis-url", redis_url,
            "--transport-config", config,
            "--claim-lease-ttl", "30s",
            "--drain-timeout", drain,
            "--concurrency", &CONCURRENCY.to_string(),
            "--metrics-port", &metrics_port.to_string(),
            "--health-port", &health_port.to_string(),
            "--bind-address", "127.0.0.1",
        ])
        .env_remove("REDIS_URL")
        .env("HOSTNAME", POD)
        .env("RUST_LOG", "info");
    Worker::spawn(command, metrics_port, health_port)
}

/// The `<tr data-queue="…">` row of `queue` in the DOM.
fn queue_row<'a>(dom: &'a str, queue: &str) -> &'a str {
    let start = dom
        .find(&format!("<tr data-queue=\"{queue}\">"))
        .unwrap_or_else(|| panic!("no row for queue {queue}:\n{dom}"));
    let row = &dom[start..];
    &row[..row.find("</tr>").expect("the row ends")]
}

/// Asserts `html` holds every one of `fragments`.
fn assert_holds(html: &str, fragments: &[String]) {
    for fragment in fragments {
        assert!(
            html.contains(fragment.as_str()),
            "lacks {fragment:?}: {html}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_in_chromium_and_status_json_show_queues_counts_claims_owner_and_dead_reasons_and_no_payload()
 {
    let Some(browser) = chromium::find_or_skip() else {
        return;
    };
    let Some(server) = common::redis_server() else {
        return;
    };
    let fast = StandInGateway::start(GatewayBehaviour::default())
        .await
        .expect("start the fast gateway");
    let slow = StandInGateway::start(GatewayBehaviour::answering_after(Duration::from_secs(60)))
        .await
        .expect("start the slow gateway");
    let config = serde_json::json!({
        "poll_interval_ms": 100,
        "queues": [
            {"id": "intake-q", "queue_name": INTAKE, "igw_base_url": fast.base_url()},
            {"id": "slow-q", "queue_name": SLOW, "igw_base_url": slow.base_url()},
        ],
    })
    .to_string();
    let drain = "1s";
    let mut worker = start_worker(&server.url(), &config, drain);
    worker.metrics_when_up().await;

    let mut conn = common::connect(&server.url()).await;
    let _: () = conn.set(BAD_LIST, "a string").await.expect("SET");
    // Dead first, while both workers are free: two unusable result lists
    // and one member that is not JSON.
    for id in ["dead-1", "dead-2"] {
        submit(&mut conn, INTAKE, id, Some(BAD_LIST)).await;
    }
    let _: () = conn
        .zadd(INTAKE, "not json at all", common::unix_now())
        .await
        .expect("ZADD");
    let dead_key = format!("{INTAKE}:dead");
    common::eventually("three dead entries", Duration::from_secs(30), async || {
        hlen(&mut conn, &dead_key).await == 3
    })
    .await;
    // Then the slow queue: two claims held, the rest pending.
    for i in 0..SLOW_REQUESTS {
        submit(&mut conn, SLOW, &format!("slow-{i}"), None).await;
    }
    let claimed_key = format!("{SLOW}:claimed");
    common::eventually(
        "two claims and the rest pending",
        Duration::from_secs(30),
        async || {
            hlen(&mut conn, &claimed_key).await == CONCURRENCY
                && zcard(&mut conn, SLOW).await == SLOW_REQUESTS - CONCURRENCY
        },
    )
    .await;
    let owner = worker
        .owner_token()
        .expect("the worker logs its owner token");

    let url = format!("http://127.0.0.1:{}/status", worker.health_port());
    let scratch = std::env::temp_dir().join(format!("status-page-{}", std::process::id()));
    let dom = chromium::dump_dom(&browser, &url, &scratch.join("dom"));

    assert_holds(&dom, &["<h1>async-worker status</h1>".into()]);
    let pending = SLOW_REQUESTS - CONCURRENCY;
    assert_holds(
        queue_row(&dom, SLOW),
        &[
            format!("<td class=\"n pending\">{pending}</td>"),
            format!("<td class=\"n claimed\">{CONCURRENCY}</td>"),
            // Submitted a minute ago: the head of pending is that old.
            "<td class=\"n oldest-pending\">1 m ".into(),
        ],
    );
    assert_holds(
        queue_row(&dom, INTAKE),
        &["<td class=\"n dead\">3</td>".into()],
    );
    assert_holds(
        &dom,
        &[
            format!("<code id=\"owner\">{owner}</code>"),
            format!("<dd id=\"in-flight\">{CONCURRENCY}</dd>"),
            format!("<dd id=\"pod\">{POD}</dd>"),
        ],
    );
    assert!(owner.starts_with(&format!("{POD}/")), "{owner}");
    // Both claims, owned by this replica, in the claims table.
    let claims = &dom[dom.find("id=\"claims\"").expect("claims section")..];
    let claims = &claims[..claims.find("</section>").expect("section end")];
    assert_eq!(
        claims.matches("(this replica)").count(),
        CONCURRENCY,
        "{claims}"
    );
    assert_eq!(claims.matches("<td>slow-").count(), CONCURRENCY, "{claims}");
    let pod_cell = format!("<td class=\"pod\">{POD}</td>");
    assert_eq!(claims.matches(&pod_cell).count(), CONCURRENCY, "{claims}");
    // Dead entries with their reasons, the unparsable one without an id.
    let dead = &dom[dom.find("id=\"dead\"").expect("dead section")..];
    let reason = format!("result list \"{BAD_LIST}\" holds a string");
    let escaped = reason.replace('"', "&quot;");
    assert_eq!(
        dead.matches(&reason).count() + dead.matches(&escaped).count(),
        2,
        "{dead}"
    );
    assert!(
        dead.contains("dead-1") && dead.contains("(unparsable)"),
        "{dead}"
    );
    assert!(!dom.contains(SECRET), "a payload reached the page:\n{dom}");
    assert!(!dom.contains("<form"), "the page offers a mutation:\n{dom}");

    let png = match std::env::var_os("UPDATE_STATUS_SCREENSHOT") {
        Some(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/images/status.png"),
        None => scratch.join("status.png"),
    };
    if let Some(dir) = png.parent() {
        std::fs::create_dir_all(dir).expect("create the screenshot dir");
    }
    chromium::screenshot(&browser, &url, &png, &scratch.join("shot"));
    let _ = std::fs::remove_dir_all(&scratch);

    // The same snapshot as JSON, for scripts: the counts, the owner's
    // claims, the dead reasons, and no payload either.
    let (code, body) = answer(worker.health_port(), "GET", "/status.json").await;
    assert_eq!(code, 200, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).expect("/status.json is JSON");
    assert_eq!(json["replica"]["owner"], owner.as_str(), "{json:#}");
    assert_eq!(json["replica"]["in_flight"], CONCURRENCY, "{json:#}");
    assert_eq!(json["replica"]["pod"], POD, "{json:#}");
    let queues = json["store"]["queues"].as_array().expect("queues");
    let slow = queues
        .iter()
        .find(|q| q["queue"] == SLOW)
        .expect("the slow queue");
    assert_eq!(
        (slow["pending"].clone(), slow["claimed"].clone()),
        (pending.into(), CONCURRENCY.into())
    );
    let age = slow["oldest_pending_age_ms"]
        .as_u64()
        .expect("an oldest pending age");
    assert!((60_000..600_000).contains(&age), "{slow:#}");
    let claim_rows = json["store"]["claims"].as_array().expect("claims");
    assert_eq!(claim_rows.len(), CONCURRENCY);
    assert!(claim_rows.iter().all(|c| c["pod"] == POD), "{json:#}");
    assert!(body.contains(&reason.replace('"', "\\\"")), "{body}");
    assert!(
        !body.contains(SECRET),
        "a payload reached /status.json:\n{body}"
    );

    // Nothing but GET is served: there is nothing to post.
    for method in ["POST", "PUT", "DELETE"] {
        for path in ["/status", "/status.json"] {
            let code = status_code(worker.health_port(), method, path).await;
            assert_eq!(code, 405, "{method} {path}");
        }
    }
    // Reading the page changed nothing.
    assert_eq!(hlen(&mut conn, &dead_key).await, 3);
    assert_eq!(hlen(&mut conn, &claimed_key).await, CONCURRENCY);
    worker.signal("TERM");
    let status = worker.exit_within(DRAIN + Duration::from_secs(5)).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log_tail());
}
