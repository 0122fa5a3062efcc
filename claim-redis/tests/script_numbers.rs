//! Every script checks its numeric arguments before its first write: out-of-range values (huge, 1e300, ±inf, nan, negative) end in a clean error with nothing written, or in a correct clamped result (issue 17, item 2).
//!
//! Beside `poison.rs`'s no-write-before-error tests: here each script is run
//! raw (lib.lua and the script, as the store builds it) with one argument
//! replaced at a time, on a prefix holding the state the call would change,
//! and the prefix's DUMP snapshot compared.

mod common;

#[path = "script_numbers/harness.rs"]
mod harness;

use harness::Expect::{AnyNumber, Clamped, Finite, FiniteWhole, Refused};
use harness::Key::{
    Active, Cancel, Claimed, Dead, Deliveries, Index, List, Marker, Owners, Pending, Retry, Seq,
    Side,
};
use harness::{
    Case, Check, DEADLINE, EXPIRE_AT, I64_MAX, MEMBER, NOW, Setup, each_bad_value, held, int_reply,
    key, run,
};

/// `reclaim.lua`: now, dedup TTL, slack, explicit; the limit item: claim
/// key, owner entry, kind, payload flag, token, record, dead entry,
/// reason, digest, list TTL.
const RECLAIM: Case = Case {
    script: "reclaim.lua",
    prelude: "",
    keys: &[
        Pending, Claimed, Owners, Index, Deliveries, Dead, Side, Marker, List, Active, Cancel,
    ],
    args: &[
        NOW, "3600000", "0", "0", "a\0t", "w|inf|2", "l", "0", "t", "{}", "{}", "why ", "d", "0",
    ],
    expect: &[(Refused, &[0, 1, 2]), (Clamped, &[13])],
    setup: Setup::Held("inf", 2),
    check: Check::Nothing,
};

/// Every script with numeric arguments, each with a valid call, the
/// positions of its numbers and what a bad value there must do.
const CASES: &[Case] = &[
    // claim.lua: owner, now, lease TTL, prefix length; the item: member,
    // claim key, token, deadline.
    Case {
        script: "claim.lua",
        prelude: "",
        keys: &[
            Pending, Claimed, Owners, Index, Deliveries, Side, Dead, Marker, Cancel,
        ],
        args: &["w", NOW, "30000", "0", MEMBER, "a\0t", "t", DEADLINE],
        expect: &[(Refused, &[1, 2, 3, 7])],
        setup: Setup::Pending,
        check: Check::Nothing,
    },
    // renew.lua: owner, now, lease TTL; the claim key.
    Case {
        script: "renew.lua",
        prelude: "",
        keys: &[Owners, Index, Claimed],
        args: &["w", NOW, "30000", "a\0t"],
        expect: &[(Refused, &[1, 2])],
        setup: Setup::Held("inf", 0),
        check: Check::Nothing,
    },
    // ack.lua: owner, now, dedup TTL, slack, runs, prefix length; the run
    // (1 item, no refusal, list TTL); claim key, token, record, member,
    // deadline, digest.
    Case {
        script: "ack.lua",
        prelude: "local TAGGED = false\n",
        keys: &[
            Pending, Claimed, Owners, Index, Deliveries, Dead, Side, List, Marker, Active, Cancel,
        ],
        args: &[
            "w", NOW, "3600000", "0", "1", "0", "1", "", "0", "a\0t", "t", "{}", MEMBER, DEADLINE,
            "d",
        ],
        expect: &[(Refused, &[1, 2, 3, 4, 5, 6, 13]), (Clamped, &[8])],
        setup: Setup::Held(I64_MAX, 0),
        check: Check::OneRecordListTtlAndMarker,
    },
    // push_once.lua: now, dedup TTL, slack, list TTL, refusal, prefix
    // length; record, digest, deadline, may push.
    Case {
        script: "push_once.lua",
        prelude: "",
        keys: &[List, Marker],
        args: &[NOW, "3600000", "0", "0", "", "0", "{}", "d", DEADLINE, "1"],
        expect: &[(Refused, &[0, 1, 2, 5, 8]), (Clamped, &[3])],
        setup: Setup::Active,
        check: Check::ListTtlAndMarker,
    },
    RECLAIM,
    // enqueue.lua: prefix, suffix, deadline, command, its argument, token,
    // active PX, then the explicit-time values (server time: all '').
    Case {
        script: "enqueue.lua",
        prelude: "",
        keys: &[Seq, Cancel, Active, Pending, Side],
        args: &[
            "{\"s\":", "}", DEADLINE, "EXPIREAT", EXPIRE_AT, "t", "60000", "", "", "",
        ],
        expect: &[(FiniteWhole, &[2]), (AnyNumber, &[4, 6])],
        setup: Setup::Nothing,
        check: Check::SequenceAndActiveExpire,
    },
    // retry_now.lua (plain layout): member, kind, pending score, claim
    // key, now, prefix length.
    Case {
        script: "retry_now.lua",
        prelude: "",
        keys: &[Retry, Dead, Pending, Deliveries, Marker],
        args: &[MEMBER, "p", DEADLINE, "a\0t", NOW, "0"],
        expect: &[(Refused, &[4, 5]), (Finite, &[2])],
        setup: Setup::Parked,
        check: Check::PromotedToPending,
    },
];

#[tokio::test]
async fn every_script_refuses_out_of_range_numbers_writing_nothing_or_clamps_them_into_range() {
    let mut rig = rig_or_skip!();
    for case in CASES {
        each_bad_value(&mut rig, case).await;
    }
}

#[tokio::test]
async fn reclaim_writes_the_marker_of_an_infinite_score_with_an_expiry() {
    let mut rig = rig_or_skip!();
    let p = rig.store.keys().prefix().to_owned();
    held(&mut rig.raw, &p, "inf", 2).await;
    let (keys, args) = (RECLAIM.keys(&p), RECLAIM.args());
    run(&mut rig.raw, &RECLAIM.script(), &keys, &args)
        .await
        .expect("reclaim of an infinite score");
    // The record and its marker, from the member's deadline, though the
    // score is +inf.
    let px = int_reply(&mut rig.raw, "PTTL", &key(&p, Marker)).await;
    assert!(px > 0, "the marker has an expiry");
    let len = int_reply(&mut rig.raw, "LLEN", &key(&p, List)).await;
    assert_eq!(len, 1);
}
