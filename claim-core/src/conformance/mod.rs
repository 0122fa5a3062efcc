//! The conformance suite: plain generic async checks every `ClaimStore` must pass, and the macro that makes each a test.
//!
//! Each check (in [`claims`], [`leases`], [`acks`], [`poison`], [`returns`],
//! [`answered`], [`reclaims`], [`payloads`], [`hostile`], [`routing`],
//! [`admin`]) takes a
//! [`StoreFactory`], builds fresh stores on a manual clock (explicit time,
//! no sleeps) and asserts one behaviour the worker relies on: every row of
//! the outcome table and every guarantee of the design brief. A failed
//! assertion panics, as in any test.
//!
//! A backend runs them with one line in its one test target,
//! [`conformance_tests!`](crate::conformance_tests), which turns every check
//! into its own `#[tokio::test]`, three times over:
//!
//! - `plain::<check>`: on a fresh store from the factory;
//! - `through_faults::<check>`: on [`unreliable::UnreliableStore`] behind
//!   [`retrying::Retrying`], once per seed ([`faults`]);
//! - `server_time::<check>` (when asked): the checks that neither move the
//!   clock nor assert an exact instant, on stores that read the server's
//!   own clock, with fixtures starting at that clock's time;
//! - `admin::<check>`: the operator's operations ([`admin`],
//!   `ClaimAdmin`), once each on a fresh store.
//!
//! so `cargo test -p <backend> -- --list` lists every check and a name
//! filter runs one. Adding a check is writing it and naming it once in the
//! list below. [`model_based`] runs random workloads against the claim-core
//! model, with or without faults.

pub mod acks;
pub mod admin;
pub mod answered;
pub mod claims;
pub mod faults;
pub mod hostile;
pub mod leases;
pub mod lists;
pub mod model_based;
pub mod payloads;
pub mod poison;
pub mod reclaims;
pub mod retrying;
pub mod returns;
pub mod routing;
mod support;
pub mod unreliable;

pub use support::{T0, at, fixture, start};

pub use lists::ListReads;

use crate::producer::ClaimProducer;
use crate::store::{ClaimStore, StoreConfig};
use crate::types::{ManualClock, Millis};
use async_trait::async_trait;
use std::sync::Arc;

/// What the checks ask of a store: work the queue ([`ClaimStore`]),
/// produce into it ([`ClaimProducer`]) and read result lists whole
/// ([`ListReads`]). Every type with the three is one.
pub trait CheckedStore: ClaimStore + ClaimProducer + ListReads {}

impl<S: ClaimStore + ClaimProducer + ListReads + ?Sized> CheckedStore for S {}

/// Builds fresh, empty stores for the checks.
///
/// Each call must return a store that shares nothing with earlier ones (a
/// Redis factory gives each a random key prefix), with `config` and time
/// taken from `clock`. The `admin` checks also ask for `ClaimAdmin`.
#[async_trait]
pub trait StoreFactory: Send + Sync {
    type Store: CheckedStore;
    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> Self::Store;
}

/// Runs one server-time check: its fixtures start at `server_now` (the
/// time the store's server reads) instead of [`T0`].
pub async fn on_server_time<Fut: std::future::Future<Output = ()>>(server_now: Millis, check: Fut) {
    support::set_start(server_now);
    check.await;
}

/// Makes every check a test of the calling crate: see the module docs.
///
/// ```text
/// claim_core::conformance_tests! {
///     factory: Memory::new(),            // an expression of Option<F: StoreFactory>; None skips
///     fault_seeds: &[1, 2, 3],           // seeds of the through-faults pass
///     server_time: Some((factory, now)), // optional: Option<(F, Millis)>, None skips
/// }
/// ```
///
/// Expands to modules `plain`, `through_faults` and, with `server_time`,
/// `server_time`, with one `#[tokio::test]` per check each. The factory
/// expressions are evaluated in each test.
#[macro_export]
macro_rules! conformance_tests {
    ($($config:tt)*) => {
        $crate::__conformance_generate! {
            [$($config)*]
            clock_free {
            claims::peek_lists_members_earliest_deadline_first_without_removing_them,
            claims::peek_honours_offset_and_limit,
            claims::claim_of_a_member_no_longer_pending_reports_not_pending,
            claims::of_two_owners_claiming_one_member_exactly_one_wins,
            claims::concurrent_claims_never_dispatch_a_member_twice,
            claims::a_pushed_job_is_peeked_and_claimed_with_its_payload,
            claims::claim_reports_cancelled_when_the_cancel_marker_holds_this_token,
            claims::cancelling_an_old_generation_does_not_cancel_a_resubmission,
            claims::claim_drops_a_pending_duplicate_of_a_terminal_generation,
            claims::resubmitted_id_with_a_new_token_is_not_suppressed_by_the_old_marker,
            claims::a_cancel_after_the_claim_is_seen_by_the_holder,
            acks::ack_pushes_the_record_writes_the_marker_and_drops_the_claim,
            acks::acking_twice_pushes_exactly_one_record,
            acks::ack_by_a_non_owner_pushes_the_first_record_but_keeps_the_owners_claim,
            acks::ack_clears_producer_keys_only_for_its_own_generation,
            acks::results_come_out_oldest_first,
            acks::batch_operations_answer_item_by_item_in_order,
            acks::a_repeated_ack_of_the_same_record_says_its_own_record_landed,
            poison::ack_to_an_unusable_result_list_dead_letters_the_member_alone_and_pushes_nothing,
            poison::an_unusable_result_list_of_an_answered_generation_suppresses_without_dead_lettering,
            returns::release_returns_a_claim_to_pending_at_its_original_score,
            returns::release_by_a_non_owner_changes_nothing,
            returns::a_release_of_a_whole_batch_returns_every_claim_in_order_without_counting_a_delivery,
            returns::park_retry_by_a_non_owner_is_refused,
            reclaims::reclaim_leaves_live_leases_alone,
            returns::dead_letter_of_a_member_no_longer_pending_is_refused,
            payloads::fetch_returns_stored_payloads_in_order_and_none_where_missing,
            payloads::the_owners_ack_deletes_the_payload_key,
            payloads::a_stale_owners_ack_leaves_the_payload_to_the_holder,
            payloads::a_repeated_submit_of_an_answered_request_leaves_no_payload_once_claim_drops_it,
            payloads::a_dead_lettered_ack_leaves_the_payload_for_a_redrive,
            payloads::retry_parking_leaves_the_payload,
            payloads::a_result_ttl_expires_the_list_only_when_a_record_is_pushed,
            payloads::enqueue_stamps_one_two_three_per_queue_and_deadline_and_ties_keep_submission_order,
            payloads::members_are_scored_by_deadline_plus_their_sequence_fraction,
            payloads::enqueue_refuses_a_member_that_is_not_an_object_and_changes_nothing,
            hostile::a_duplicate_of_an_answered_generation_naming_an_internal_key_as_its_payload_deletes_nothing,
            hostile::ids_and_tokens_with_odd_bytes_each_get_exactly_one_record,
            hostile::a_generation_whose_id_and_token_split_differently_is_not_suppressed,
            }
            clocked {
            reclaims::a_resolved_members_delivery_limit_record_keeps_its_own_list_as_go_routes,
            routing::a_resolved_member_without_a_list_gets_its_delivery_limit_record_on_the_default_list_as_its_answer,
            routing::an_unresolved_members_delivery_limit_record_sets_the_queues_list_ttl,
            routing::an_ack_to_a_list_outside_the_allow_list_dead_letters_the_member_and_writes_no_key,
            routing::a_delivery_limit_record_for_a_list_outside_the_allow_list_is_not_written,
            routing::a_member_whose_list_ttl_is_beyond_ten_years_is_routed_as_unreadable_at_the_delivery_limit,
            routing::an_ack_whose_list_ttl_is_beyond_any_expire_redis_takes_lands_once_with_the_ttl_clamped,
            payloads::a_stale_owners_late_ack_that_takes_the_reclaimed_pending_copy_deletes_the_payload,
            claims::claim_moves_a_member_from_pending_into_a_claim_of_its_owner,
            claims::lease_expiry_is_now_plus_ttl_capped_at_deadline_plus_thirty_seconds,
            claims::renew_extends_the_lease_of_the_owner,
            leases::a_member_scored_far_below_its_deadline_is_not_reclaimed_while_its_holder_renews,
            leases::a_member_scored_below_its_deadline_keeps_its_place_and_its_deadline_caps_the_lease,
            leases::a_marker_follows_the_deadline_of_a_member_scored_below_it,
            leases::a_member_whose_deadline_cannot_be_read_is_leased_for_the_ttl_whatever_its_score,
            claims::renew_by_another_owner_is_lost_and_changes_nothing,
            claims::renew_after_the_claim_was_reclaimed_is_lost,
            claims::members_travel_byte_for_byte_through_claim_release_and_reclaim,
            claims::depth_counts_claims_not_bookkeeping_entries,
            acks::ack_after_the_lease_was_lost_still_delivers_exactly_one_record,
            acks::a_late_ack_of_a_generation_no_longer_anywhere_pushes_nothing_even_after_its_marker_expired,
            poison::a_marker_lives_the_dedup_ttl_past_the_deadline_plus_the_lease_cap,
            poison::a_stale_owner_leaves_an_unusable_list_to_the_claim_holder,
            poison::a_stale_owners_ack_to_an_unusable_list_leaves_a_parked_generation_in_the_retry_set_alone,
            poison::a_stale_owners_ack_to_an_unusable_list_leaves_the_pending_copy_for_its_next_holder,
            poison::reclaim_at_the_limit_with_an_unusable_result_list_dead_letters_with_why_and_moves_the_rest,
            poison::a_stale_owners_ack_after_a_reclaim_removes_the_pending_copy_so_no_second_record_follows,
            poison::a_stale_owners_ack_of_a_parked_generation_is_suppressed_and_the_parked_copy_answers,
            poison::promote_never_moves_a_retry_entry_into_a_bookkeeping_key,
            returns::park_retry_moves_the_claim_into_the_retry_set_and_nowhere_else,
            returns::promote_due_returns_only_due_retries_at_their_deadline_score,
            returns::promote_due_moves_go_parked_entries_to_their_named_queue,
            answered::a_release_of_a_claim_whose_generation_was_answered_drops_it_instead_of_returning_it,
            answered::parking_a_claim_whose_generation_was_answered_drops_it_and_parks_nothing,
            answered::a_due_retry_entry_whose_generation_was_answered_is_dropped_not_promoted,
            reclaims::reclaim_returns_an_expired_claim_to_pending_and_counts_the_redelivery,
            reclaims::a_crashed_owners_request_is_redelivered_and_acked_exactly_once,
            reclaims::reclaim_at_the_delivery_limit_writes_one_record_and_dead_letters,
            reclaims::delivery_limit_record_goes_to_the_queues_configured_list,
            reclaims::unlimited_deliveries_never_dead_letter,
            reclaims::reclaim_works_in_batches_and_says_when_more_remain,
            reclaims::an_expired_claim_of_an_answered_generation_is_dropped_not_redelivered,
            reclaims::redelivery_counts_survive_release_and_retry,
            reclaims::a_request_ended_at_the_delivery_limit_leaves_no_payload_key_and_a_redelivered_one_keeps_it,
            reclaims::an_expired_claim_of_an_answered_generation_leaves_no_payload_key,
            returns::earliest_deadline_first_is_restored_on_every_return_to_pending,
            returns::dead_letter_moves_an_unparsable_member_with_its_reason,
            payloads::a_promoted_retry_returns_at_its_deadline_plus_sequence_score,
            payloads::a_stored_payload_expires_ten_minutes_after_the_deadline,
            payloads::released_and_reclaimed_members_keep_their_sequence_score_exactly,
            payloads::the_sequence_restarts_once_its_counter_expires_an_hour_after_the_deadline,
            hostile::a_member_naming_an_internal_key_as_its_payload_reaches_the_delivery_limit_deleting_nothing,
            hostile::a_claim_of_a_generation_whose_id_or_token_holds_a_nul_claims_nothing,
            }
            admin {
            admin::redrive_moves_dead_entries_back_at_their_original_score_with_the_delivery_count_reset,
            admin::redrive_leaves_answered_unparsable_and_missing_entries_where_they_are,
            admin::a_member_repeated_in_one_redrive_moves_once,
            admin::purge_deletes_dead_entries_and_says_which,
            admin::release_claim_ends_any_owners_claim_at_once_without_counting_a_delivery,
            admin::a_release_racing_the_stale_owners_ack_still_yields_exactly_one_record,
            answered::an_admin_release_of_a_claim_whose_generation_was_answered_drops_it_instead_of_returning_it,
            admin::a_redrive_racing_a_reclaim_loses_nothing_and_yields_one_record,
            admin::pause_and_resume_are_read_back_per_queue_and_say_whether_they_changed,
            admin::a_pause_racing_a_claim_loses_nothing_and_held_claims_finish,
            admin::list_len_counts_a_result_lists_records,
            }
        }
    };
}

/// The generator behind [`conformance_tests!`]: the list above is its input.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_generate {
    (
        [factory: $factory:expr, fault_seeds: $seeds:expr, server_time: $server:expr $(,)?]
        clock_free { $($fm:ident :: $free:ident,)* }
        clocked { $($cm:ident :: $clocked:ident,)* }
        admin { $($am:ident :: $admin:ident,)* }
    ) => {
        $crate::__conformance_each! { $factory, $seeds; $($fm::$free,)* $($cm::$clocked,)* }
        $crate::__conformance_admin! { $factory; $($am::$admin,)* }

        /// The clock-free checks on stores that read the server's clock.
        mod server_time {
            #[allow(unused_imports)]
            use super::*;
            $( #[tokio::test]
            async fn $free() {
                let Some((factory, now)) = $server else { return };
                $crate::conformance::on_server_time(now, $crate::conformance::$fm::$free(&factory))
                    .await;
            } )*
        }
    };
    (
        [factory: $factory:expr, fault_seeds: $seeds:expr $(,)?]
        clock_free { $($fm:ident :: $free:ident,)* }
        clocked { $($cm:ident :: $clocked:ident,)* }
        admin { $($am:ident :: $admin:ident,)* }
    ) => {
        $crate::__conformance_each! { $factory, $seeds; $($fm::$free,)* $($cm::$clocked,)* }
        $crate::__conformance_admin! { $factory; $($am::$admin,)* }
    };
}

/// The `admin` pass: the operator's operations, once each on a fresh store
/// (operator commands are run once and reported, not retried through faults).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_admin {
    ($factory:expr; $($module:ident :: $check:ident,)*) => {
        /// Every `ClaimAdmin` check on a fresh store from the factory.
        mod admin {
            #[allow(unused_imports)]
            use super::*;
            $( #[tokio::test]
            async fn $check() {
                let Some(factory) = $factory else { return };
                $crate::conformance::$module::$check(&factory).await;
            } )*
        }
    };
}

/// The `plain` and `through_faults` passes over every check.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_each {
    ($factory:expr, $seeds:expr; $($module:ident :: $check:ident,)*) => {
        /// Every check on a fresh store from the factory.
        mod plain {
            #[allow(unused_imports)]
            use super::*;
            $( #[tokio::test]
            async fn $check() {
                let Some(factory) = $factory else { return };
                $crate::conformance::$module::$check(&factory).await;
            } )*
        }

        /// Every check through seeded faults behind a retrying client.
        mod through_faults {
            #[allow(unused_imports)]
            use super::*;
            $( #[tokio::test]
            async fn $check() {
                let Some(factory) = $factory else { return };
                let check = stringify!($check);
                $crate::conformance::faults::through_faults(&factory, check, $seeds, |f| {
                    Box::pin($crate::conformance::$module::$check(f))
                })
                .await;
            } )*
        }
    };
}
