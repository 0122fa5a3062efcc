//! The conformance suite: plain generic async checks every `ClaimStore` must pass.
//!
//! Each check takes a [`StoreFactory`], builds fresh stores on a manual
//! clock (explicit time, no sleeps) and asserts one behaviour the worker
//! relies on: every row of the outcome table and every guarantee of the
//! design brief. A backend runs the whole list with [`run_all`], one line.
//!
//! Around the checks: [`unreliable::UnreliableStore`] wraps any store and
//! injects seeded determinate and indeterminate faults;
//! [`retrying::Retrying`] is a client that retries and reconciles them;
//! [`faults::run_all`] runs every check through both, and
//! [`model_based`] runs random workloads against the claim-core model,
//! with or without faults.

mod acks;
mod claims;
pub mod faults;
pub mod model_based;
mod poison;
pub mod retrying;
mod returns;
mod support;
pub mod unreliable;

pub use support::{T0, at, fixture};

use crate::store::{ClaimStore, StoreConfig};
use crate::types::ManualClock;
use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Builds fresh, empty stores for the checks.
///
/// Each call must return a store that shares nothing with earlier ones (a
/// Redis factory gives each a random key prefix), with `config` and time
/// taken from `clock`.
#[async_trait]
pub trait StoreFactory: Send + Sync {
    type Store: ClaimStore;
    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> Self::Store;
}

/// One check: its name and its body.
pub struct Check<F: StoreFactory> {
    pub name: &'static str,
    pub run: for<'a> fn(&'a F) -> BoxFuture<'a, ()>,
}

impl<F: StoreFactory> std::fmt::Debug for Check<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! checks {
    ($($module:ident :: $name:ident),* $(,)?) => {
        /// Every check, in a stable order.
        pub fn checks<F: StoreFactory>() -> Vec<Check<F>> {
            vec![$(Check {
                name: stringify!($name),
                run: |f| Box::pin($module::$name(f)),
            }),*]
        }
    };
}

checks![
    claims::peek_lists_members_earliest_deadline_first_without_removing_them,
    claims::peek_honours_offset_and_limit,
    claims::claim_moves_a_member_from_pending_into_a_claim_of_its_owner,
    claims::claim_of_a_member_no_longer_pending_reports_not_pending,
    claims::of_two_owners_claiming_one_member_exactly_one_wins,
    claims::concurrent_claims_never_dispatch_a_member_twice,
    claims::claim_reports_cancelled_when_the_cancel_marker_holds_this_token,
    claims::cancelling_an_old_generation_does_not_cancel_a_resubmission,
    claims::claim_drops_a_pending_duplicate_of_a_terminal_generation,
    claims::resubmitted_id_with_a_new_token_is_not_suppressed_by_the_old_marker,
    claims::lease_expiry_is_now_plus_ttl_capped_at_deadline_plus_thirty_seconds,
    claims::a_cancel_after_the_claim_is_seen_by_the_holder,
    claims::renew_extends_the_lease_of_the_owner,
    claims::renew_by_another_owner_is_lost_and_changes_nothing,
    claims::renew_after_the_claim_was_reclaimed_is_lost,
    claims::members_travel_byte_for_byte_through_claim_release_and_reclaim,
    claims::depth_counts_claims_not_bookkeeping_entries,
    acks::ack_pushes_the_record_writes_the_marker_and_drops_the_claim,
    acks::acking_twice_pushes_exactly_one_record,
    acks::ack_by_a_non_owner_pushes_the_first_record_but_keeps_the_owners_claim,
    acks::ack_after_the_lease_was_lost_still_delivers_exactly_one_record,
    acks::ack_clears_producer_keys_only_for_its_own_generation,
    acks::results_come_out_oldest_first,
    acks::batch_operations_answer_item_by_item_in_order,
    acks::a_repeated_ack_of_the_same_record_says_its_own_record_landed,
    poison::a_marker_lives_the_dedup_ttl_past_the_deadline_plus_the_lease_cap,
    poison::ack_to_an_unusable_result_list_dead_letters_the_member_alone_and_pushes_nothing,
    poison::an_unusable_result_list_of_an_answered_generation_suppresses_without_dead_lettering,
    poison::a_stale_owner_leaves_an_unusable_list_to_the_claim_holder,
    poison::reclaim_at_the_limit_with_an_unusable_result_list_dead_letters_with_why_and_moves_the_rest,
    poison::a_stale_owners_ack_after_a_reclaim_removes_the_pending_copy_so_no_second_record_follows,
    poison::promote_drops_a_parked_copy_of_a_generation_answered_while_it_waited,
    poison::promote_never_moves_a_retry_entry_into_a_bookkeeping_key,
    returns::release_returns_a_claim_to_pending_at_its_original_score,
    returns::release_by_a_non_owner_changes_nothing,
    returns::sweep_returns_held_claims_without_counting_a_delivery,
    returns::park_retry_moves_the_claim_into_the_retry_set_and_nowhere_else,
    returns::park_retry_by_a_non_owner_is_refused,
    returns::promote_due_returns_only_due_retries_at_their_deadline_score,
    returns::promote_due_moves_go_parked_entries_to_their_named_queue,
    returns::reclaim_leaves_live_leases_alone,
    returns::reclaim_returns_an_expired_claim_to_pending_and_counts_the_redelivery,
    returns::a_crashed_owners_request_is_redelivered_and_acked_exactly_once,
    returns::reclaim_at_the_delivery_limit_writes_one_record_and_dead_letters,
    returns::delivery_limit_record_goes_to_the_queues_configured_list,
    returns::unlimited_deliveries_never_dead_letter,
    returns::reclaim_works_in_batches_and_says_when_more_remain,
    returns::an_expired_claim_of_an_answered_generation_is_dropped_not_redelivered,
    returns::redelivery_counts_survive_release_and_retry,
    returns::earliest_deadline_first_is_restored_on_every_return_to_pending,
    returns::dead_letter_moves_an_unparsable_member_with_its_reason,
    returns::dead_letter_of_a_member_no_longer_pending_is_refused,
];

/// Checks that neither move the clock nor assert an exact instant: they
/// hold on a store that reads the server's own clock, which no test can
/// set, started at that clock's time (see [`run_on_server_time`]).
pub const CLOCK_FREE: [&str; 25] = [
    "peek_lists_members_earliest_deadline_first_without_removing_them",
    "peek_honours_offset_and_limit",
    "claim_of_a_member_no_longer_pending_reports_not_pending",
    "of_two_owners_claiming_one_member_exactly_one_wins",
    "concurrent_claims_never_dispatch_a_member_twice",
    "claim_reports_cancelled_when_the_cancel_marker_holds_this_token",
    "cancelling_an_old_generation_does_not_cancel_a_resubmission",
    "claim_drops_a_pending_duplicate_of_a_terminal_generation",
    "resubmitted_id_with_a_new_token_is_not_suppressed_by_the_old_marker",
    "a_cancel_after_the_claim_is_seen_by_the_holder",
    "ack_pushes_the_record_writes_the_marker_and_drops_the_claim",
    "acking_twice_pushes_exactly_one_record",
    "ack_by_a_non_owner_pushes_the_first_record_but_keeps_the_owners_claim",
    "ack_clears_producer_keys_only_for_its_own_generation",
    "results_come_out_oldest_first",
    "batch_operations_answer_item_by_item_in_order",
    "a_repeated_ack_of_the_same_record_says_its_own_record_landed",
    "ack_to_an_unusable_result_list_dead_letters_the_member_alone_and_pushes_nothing",
    "an_unusable_result_list_of_an_answered_generation_suppresses_without_dead_lettering",
    "release_returns_a_claim_to_pending_at_its_original_score",
    "release_by_a_non_owner_changes_nothing",
    "sweep_returns_held_claims_without_counting_a_delivery",
    "park_retry_by_a_non_owner_is_refused",
    "dead_letter_of_a_member_no_longer_pending_is_refused",
    "reclaim_leaves_live_leases_alone",
];

/// Runs the [`CLOCK_FREE`] checks (or those whose name contains `filter`)
/// on a store that reads its server's clock, with fixtures starting at
/// `server_now`, printing one line each and `server time: N passed, N
/// failed` (a line the suite's `N passed, N failed` parser ignores, so the
/// counts of the main pass stay comparable across stores).
pub async fn run_on_server_time<F: StoreFactory>(
    factory: &F,
    filter: Option<&str>,
    server_now: crate::types::Millis,
) -> Vec<CheckResult> {
    let mut results = Vec::new();
    let _quiet = QuietPanics::install();
    support::set_start(server_now);
    for check in checks::<F>() {
        if !CLOCK_FREE.contains(&check.name) || filter.is_some_and(|f| !check.name.contains(f)) {
            continue;
        }
        let failure = run_check(&check, factory).await;
        print_result(check.name, &failure, " [server time]");
        results.push(CheckResult {
            name: check.name,
            failure,
        });
    }
    support::set_start(support::T0);
    if filter.is_none() && results.len() != CLOCK_FREE.len() {
        let failure = Some("CLOCK_FREE names a check that is not in the suite".to_owned());
        print_result("clock_free_list_matches_the_suite", &failure, "");
        results.push(CheckResult {
            name: "clock_free_list_matches_the_suite",
            failure,
        });
    }
    let failed = results.iter().filter(|r| r.failure.is_some()).count();
    println!(
        "server time: {} passed, {} failed",
        results.len() - failed,
        failed
    );
    results
}

/// The outcome of one check.
#[derive(Debug)]
pub struct CheckResult {
    pub name: &'static str,
    pub failure: Option<String>,
}

/// Runs every check (or those whose name contains `filter`), printing one
/// line each and returning the results. Panics inside a check (failed
/// assertions) are caught and reported as that check's failure.
pub async fn run_all<F: StoreFactory>(factory: &F, filter: Option<&str>) -> Vec<CheckResult> {
    let mut results = Vec::new();
    let _quiet = QuietPanics::install();
    for check in checks::<F>() {
        if filter.is_some_and(|f| !check.name.contains(f)) {
            continue;
        }
        let failure = run_check(&check, factory).await;
        print_result(check.name, &failure, "");
        results.push(CheckResult {
            name: check.name,
            failure,
        });
    }
    print_summary(&results);
    results
}

/// libtest options that take a value: their value is not a name filter.
const OPTIONS_WITH_VALUES: [&str; 8] = [
    "--test-threads",
    "--skip",
    "--format",
    "--color",
    "--logfile",
    "--report-time",
    "-Z",
    "--shuffle-seed",
];

/// The name filter in a suite binary's arguments (`cargo test --test
/// conformance -- <filter>`): the first argument that is neither an option
/// nor the value of one (`--test-threads 2` filters nothing).
pub fn filter_from_args(args: impl IntoIterator<Item = String>) -> Option<String> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if OPTIONS_WITH_VALUES.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return Some(arg);
        }
    }
    None
}

/// The exit status of a suite run: failure when a check failed, or when no
/// check ran at all (a filter that matches nothing must not pass).
pub fn exit_code(results: &[CheckResult], filter: Option<&str>) -> std::process::ExitCode {
    if results.is_empty() {
        println!(
            "no check ran: the filter {:?} matches no check name",
            filter.unwrap_or("")
        );
        return std::process::ExitCode::FAILURE;
    }
    if results.iter().any(|r| r.failure.is_some()) {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// Runs one check, returning the message of the assertion it failed, if any.
pub(crate) async fn run_check<F: StoreFactory>(check: &Check<F>, factory: &F) -> Option<String> {
    let outcome = AssertUnwindSafe((check.run)(factory)).catch_unwind().await;
    outcome.err().map(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "check panicked".to_owned())
    })
}

pub(crate) fn print_result(name: &str, failure: &Option<String>, note: &str) {
    match failure {
        None => println!("ok   {name}{note}"),
        Some(why) => println!("FAIL {name}{note}: {}", why.replace('\n', "\n     ")),
    }
}

pub(crate) fn print_summary(results: &[CheckResult]) {
    let failed = results.iter().filter(|r| r.failure.is_some()).count();
    println!("{} passed, {} failed", results.len() - failed, failed);
}

/// Failed assertions are reported on the check's line; the default hook
/// would print a backtrace for each. The hook is restored on drop.
pub(crate) struct QuietPanics(Option<PanicHook>);

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send>;

impl QuietPanics {
    pub(crate) fn install() -> Self {
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        QuietPanics(Some(default_hook))
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        if let Some(hook) = self.0.take() {
            std::panic::set_hook(hook);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_value_of_test_threads_is_not_taken_for_a_filter() {
        assert_eq!(filter_from_args(args(&["--test-threads", "2"])), None);
        assert_eq!(
            filter_from_args(args(&["--test-threads", "2", "ack_"])).as_deref(),
            Some("ack_")
        );
        assert_eq!(
            filter_from_args(args(&["--nocapture", "claim"])).as_deref(),
            Some("claim")
        );
    }

    #[test]
    fn a_run_that_executed_no_check_fails() {
        assert_eq!(exit_code(&[], Some("2")), std::process::ExitCode::FAILURE);
        let ok = [CheckResult {
            name: "x",
            failure: None,
        }];
        assert_eq!(exit_code(&ok, None), std::process::ExitCode::SUCCESS);
    }
}
