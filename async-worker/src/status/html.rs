//! The status page as HTML: one self-contained document (inline style, no script), reloaded by a meta refresh, every value from Redis escaped.

use super::format::{age, duration_ms, escape, lease_left, utc};
use super::{REFRESH_SECS, Snapshot, StoreView};
use std::fmt::Write;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}\
.meta{color:#666;margin:0}table{border-collapse:collapse}\
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}\
th{background:#f3f3f3}td.n{text-align:right}code{font-size:.95em}\
.bad{color:#b00;font-weight:600}.ok{color:#070;font-weight:600}\
tr.mine td{background:#eef6ff}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dt{color:#555}dd{margin:0}";

/// The page for `snapshot`.
pub fn render(snapshot: &Snapshot) -> String {
    let mut page = String::with_capacity(8192);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\">\
<title>async-worker status</title><style>{STYLE}</style></head><body>\n\
<h1>async-worker status</h1>\n"
    );
    let read_at = match &snapshot.store {
        Ok(view) => format!("Read at {} (Redis time)", utc(view.at_ms)),
        Err(_) => "Redis could not be read".to_owned(),
    };
    let _ = writeln!(
        page,
        "<p class=\"meta\">{read_at} · reloads every {REFRESH_SECS} s · read-only: \
change things with <code>async-worker admin</code></p>"
    );
    replica(&mut page, snapshot);
    match &snapshot.store {
        Ok(view) => {
            queues(&mut page, view);
            claims(&mut page, view, &snapshot.replica.owner);
            dead(&mut page, view);
        }
        Err(e) => {
            let _ = writeln!(
                page,
                "<p id=\"store-error\" class=\"bad\">Redis is unreachable: {}</p>",
                escape(e)
            );
        }
    }
    page.push_str("</body></html>\n");
    page
}

fn replica(page: &mut String, snapshot: &Snapshot) {
    let r = &snapshot.replica;
    let ready = match &r.not_ready_because {
        None => "<span class=\"ok\">ready</span>".to_owned(),
        Some(why) => format!("<span class=\"bad\">not ready: {}</span>", escape(why)),
    };
    let _ = writeln!(
        page,
        "<section id=\"replica\"><h2>This replica</h2><dl>\
<dt>Owner token</dt><dd><code id=\"owner\">{}</code></dd>\
<dt>Pod</dt><dd id=\"pod\">{}</dd>\
<dt>In flight</dt><dd id=\"in-flight\">{}</dd>\
<dt>Readiness</dt><dd>{ready}</dd></dl></section>",
        escape(&r.owner),
        escape(r.pod.as_deref().unwrap_or("-")),
        r.in_flight
    );
}

fn queues(page: &mut String, view: &StoreView) {
    page.push_str(
        "<section id=\"queues\"><h2>Queues</h2><table><thead><tr>\
<th>Queue</th><th>Pending</th><th>Claimed</th><th>Expiring within a lease</th>\
<th>Expired</th><th>Oldest pending</th><th>Oldest claim</th><th>Parked retries</th>\
<th>Dead</th><th>Result lists</th><th>Claiming</th></tr></thead><tbody>\n",
    );
    for q in &view.queues {
        let lists: Vec<String> = q
            .result_lists
            .iter()
            .map(|l| format!("{} ({})", escape(&l.list), l.len))
            .collect();
        let claiming = if q.paused {
            "<span class=\"bad\">paused</span>"
        } else {
            "on"
        };
        let _ = writeln!(
            page,
            "<tr data-queue=\"{queue}\"><td>{queue}</td><td class=\"n pending\">{}</td>\
<td class=\"n claimed\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
<td class=\"n oldest-pending\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
<td class=\"n dead\">{}</td><td>{}</td><td>{claiming}</td></tr>",
            q.pending,
            q.claimed,
            q.expiring_within_lease,
            q.expired,
            age(q.oldest_pending_age_ms),
            age(q.oldest_claim_age_ms),
            q.parked_retries,
            q.dead,
            lists.join(", "),
            queue = escape(&q.queue),
        );
    }
    page.push_str("</tbody></table></section>\n");
}

fn claims(page: &mut String, view: &StoreView, own: &str) {
    page.push_str(
        "<section id=\"claims\"><h2>Oldest claims</h2>\n<table><thead><tr>\
<th>Queue</th><th>Request id</th><th>Token</th><th>Pod</th><th>Owner</th><th>Lease left</th>\
<th>Redeliveries</th><th>Age</th></tr></thead><tbody>\n",
    );
    if view.claims.is_empty() {
        page.push_str("<tr><td colspan=\"8\">no live claims</td></tr>\n");
    }
    for c in &view.claims {
        let (class, whose) = if c.owner == own {
            (" class=\"mine\"", " (this replica)")
        } else {
            ("", "")
        };
        let _ = writeln!(
            page,
            "<tr{class}><td>{}</td><td>{}</td><td><code>{}</code></td><td class=\"pod\">{}</td>\
<td><code>{}</code>{whose}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&c.queue),
            escape(&c.id),
            escape(&c.token),
            escape(c.pod.as_deref().unwrap_or("-")),
            escape(&c.owner),
            lease_left(c.lease_left_ms),
            c.redeliveries,
            age(c.age_ms),
        );
    }
    page.push_str("</tbody></table></section>\n");
}

fn dead(page: &mut String, view: &StoreView) {
    page.push_str(
        "<section id=\"dead\"><h2>Recent dead entries</h2>\n<table><thead><tr>\
<th>Queue</th><th>Request id</th><th>Reason</th><th>When</th></tr></thead><tbody>\n",
    );
    if view.dead.is_empty() {
        page.push_str("<tr><td colspan=\"4\">no dead entries</td></tr>\n");
    }
    for d in &view.dead {
        let id =
            d.id.as_deref()
                .map_or_else(|| "(unparsable)".to_owned(), escape);
        let ago = duration_ms(view.at_ms.saturating_sub(d.at_ms));
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{id}</td><td class=\"reason\">{}</td><td>{} ({ago} ago)</td></tr>",
            escape(&d.queue),
            escape(&d.reason),
            utc(d.at_ms),
        );
    }
    page.push_str("</tbody></table></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::stats::{ClaimRow, DeadRow, ListLen, QueueStats};
    use crate::status::Replica;

    fn snapshot(evil: &str) -> Snapshot {
        let queue = QueueStats {
            queue: evil.to_owned(),
            at_ms: 1_000_000,
            pending: 3,
            claimed: 1,
            expiring_within_lease: 1,
            expired: 0,
            oldest_pending_age_ms: Some(5_000),
            oldest_claim_age_ms: None,
            parked_retries: 0,
            dead: 1,
            result_lists: vec![ListLen {
                list: evil.to_owned(),
                len: 2,
            }],
            paused: true,
        };
        Snapshot {
            replica: Replica {
                owner: "me".into(),
                pod: None,
                in_flight: 1,
                not_ready_because: None,
            },
            store: Ok(StoreView {
                at_ms: 1_000_000,
                queues: vec![queue],
                claims: vec![ClaimRow {
                    queue: evil.to_owned(),
                    id: evil.to_owned(),
                    token: evil.to_owned(),
                    owner: "me".into(),
                    pod: Some("pod-a".into()),
                    lease_left_ms: 4_000,
                    redeliveries: 2,
                    age_ms: Some(61_000),
                }],
                dead: vec![DeadRow {
                    queue: evil.to_owned(),
                    id: None,
                    token: None,
                    reason: evil.to_owned(),
                    at_ms: 990_000,
                }],
            }),
        }
    }

    #[test]
    fn every_value_from_redis_is_escaped() {
        let evil = "<script>alert(1)</script>\"'&";
        let page = render(&snapshot(evil));
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains(evil), "{page}");
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;";
        // Queue (row and attribute), result list, claim queue, id, token, dead queue, reason.
        assert_eq!(page.matches(escaped).count(), 8, "{page}");
    }

    #[test]
    fn the_page_reloads_itself_and_shows_counts_owner_claims_and_reasons() {
        let page = render(&snapshot("q"));
        assert!(page.contains("http-equiv=\"refresh\" content=\"10\""));
        assert!(page.contains("<code id=\"owner\">me</code>"), "{page}");
        assert!(page.contains("<td class=\"n pending\">3</td>"), "{page}");
        assert!(page.contains("(this replica)"), "{page}");
        assert!(page.contains("<td class=\"pod\">pod-a</td>"), "{page}");
        assert!(page.contains("<dd id=\"pod\">-</dd>"), "{page}");
        assert!(page.contains("<td class=\"reason\">q</td>"), "{page}");
        assert!(page.contains("paused"), "{page}");
        assert!(page.contains("1 m 01 s"), "{page}");
        assert!(
            !page.contains("<form") && !page.contains("<script"),
            "{page}"
        );
    }

    #[test]
    fn an_unreachable_store_still_shows_the_replica_and_says_why() {
        let mut s = snapshot("q");
        s.store = Err("connection refused <x>".into());
        let page = render(&s);
        assert!(page.contains("<code id=\"owner\">me</code>"), "{page}");
        assert!(page.contains("Redis is unreachable: connection refused &lt;x&gt;"));
    }
}
