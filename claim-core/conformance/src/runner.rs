//! The runner: every check of every file as a trial of one libtest-compatible test binary, in four passes, plus the model-based tests.
//!
//! A backend's conformance target is `harness = false` and its `main` is
//! one call of [`run`]; [`libtest_mimic`] gives it libtest's command line
//! and output (`--list`, name filters, `test <name> ... ok`, `test
//! result:`). Each trial builds its own factory and runs on its own
//! current-thread tokio runtime.

use crate::checks::{self, Check, Needs};
use crate::factory::{Started, StoreFactory, T0};
use crate::faults::through_faults::{Faulty, through_faults};
use crate::faults::unreliable::FaultRates;
use crate::model_based::{self, Driver};
use claim_core::admin::ClaimAdmin;
use claim_core::types::Millis;
use futures::future::LocalBoxFuture;
use libtest_mimic::{Arguments, Failed, Trial};
use std::future::Future;
use std::sync::Arc;

/// Makes the factory a trial runs on, or `None` to skip (a missing server
/// outside CI): the trial then passes without running.
pub type MakeFactory<F> = fn() -> Option<F>;

/// Makes a factory of stores that read their server's own clock, with what
/// that clock reads now, or `None` to skip.
pub type ServerTime<F> = fn() -> LocalBoxFuture<'static, Option<(F, Millis)>>;

/// What a backend runs besides the plain and admin passes.
#[derive(Debug)]
pub struct Options<F> {
    /// Run seeds of the through-faults pass: every check once per seed.
    pub fault_seeds: &'static [u64],
    /// The server-time pass: the clock-free checks on stores that read the
    /// server's clock, with fixtures starting at that clock's time.
    pub server_time: Option<ServerTime<F>>,
    /// The two model-based tests (plain and through faults).
    pub model_based: Option<ModelBased>,
}

/// The model-based tests of a backend.
#[derive(Debug, Clone, Copy)]
pub struct ModelBased {
    /// The store's name in the tests' names: `the_<store>_store_follows_...`.
    pub store: &'static str,
    /// Cases per test (`PROPTEST_CASES` may raise it).
    pub cases: u32,
}

/// Every check of every file but the operator's, in file order.
pub fn all_checks<F: StoreFactory + 'static>() -> Vec<Check<F>> {
    joined([
        checks::claims::checks(),
        checks::acks::checks(),
        checks::poison::checks(),
        checks::returns::checks(),
        checks::answered::checks(),
        checks::reclaims::checks(),
        checks::payloads::checks(),
        checks::hostile::checks(),
        checks::leases::checks(),
        checks::routing::checks(),
    ])
}

/// Every check of the operator's operations.
pub fn all_admin_checks<F: StoreFactory + 'static>() -> Vec<Check<F>>
where
    F::Store: ClaimAdmin,
{
    joined([
        checks::admin::admin_checks(),
        checks::answered::admin_checks(),
        checks::retry_now::admin_checks(),
    ])
}

/// The checks of several files, in order.
fn joined<F, const N: usize>(files: [Vec<Check<F>>; N]) -> Vec<Check<F>> {
    files.into_iter().flatten().collect()
}

/// Runs the suite on stores of `make`'s factories as a libtest-compatible
/// test binary, and exits with its verdict. Call it from the target's
/// `main` (its file places the model-based tests' regressions file).
///
/// Trials, by name: `plain::<file>::<check>` (every check but the admin
/// ones), `through_faults::<file>::<check>` (the same, once per fault
/// seed: [`through_faults`]), `server_time::<file>::<check>` (the
/// clock-free ones, with [`Options::server_time`]), `admin::<file>::<check>`
/// and `model_based::the_<store>_store_follows_the_model_...`.
#[track_caller]
pub fn run<F: StoreFactory + 'static>(make: MakeFactory<F>, options: Options<F>) -> !
where
    F::Store: ClaimAdmin,
{
    let caller = std::panic::Location::caller().file();
    let args = Arguments::from_args();
    let mut trials = check_trials(make, &options);
    trials.extend(all_admin_checks::<Started<F>>().into_iter().map(|check| {
        let name = format!("admin::{}", check.name);
        trial(name, move || async move {
            let Some(factory) = make() else { return };
            (check.run)(&Started { factory, start: T0 }).await;
        })
    }));
    if let Some(model) = options.model_based {
        trials.extend(model_based_trials(make, model, caller));
    }
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    libtest_mimic::run(&args, trials).exit()
}

/// The trials of the plain, through-faults and server-time passes.
fn check_trials<F: StoreFactory + 'static>(
    make: MakeFactory<F>,
    options: &Options<F>,
) -> Vec<Trial> {
    let seeds = options.fault_seeds;
    let server_time = options.server_time;
    let mut trials = Vec::new();
    for (check, faulty) in all_checks::<Started<F>>()
        .into_iter()
        .zip(all_checks::<Faulty<F>>())
    {
        let (name, needs) = (check.name, check.needs);
        let check = Arc::new(check);
        if let (Needs::ClockFree, Some(server_time)) = (needs, server_time) {
            let check = check.clone();
            trials.push(trial(format!("server_time::{name}"), move || async move {
                let Some((factory, start)) = server_time().await else {
                    return;
                };
                (check.run)(&Started { factory, start }).await;
            }));
        }
        trials.push(trial(
            format!("through_faults::{name}"),
            move || async move {
                let Some(factory) = make() else { return };
                through_faults(Arc::new(factory), faulty.function(), seeds, &faulty.run).await;
            },
        ));
        trials.push(trial(format!("plain::{name}"), move || async move {
            let Some(factory) = make() else { return };
            (check.run)(&Started { factory, start: T0 }).await;
        }));
    }
    trials
}

/// A trial that runs `check` on its own current-thread tokio runtime; a
/// panic fails it (libtest-mimic reports the message).
fn trial<Fut: Future<Output = ()>>(
    name: String,
    check: impl FnOnce() -> Fut + Send + 'static,
) -> Trial {
    Trial::test(name, move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failed::from(format!("a tokio runtime: {e}")))?
            .block_on(check());
        Ok(())
    })
}

/// The model-based tests: random workloads against the claim-core model,
/// without and with faults (at 15% of each kind) behind a retrying client.
fn model_based_trials<F: StoreFactory + 'static>(
    make: MakeFactory<F>,
    model: ModelBased,
    caller: &'static str,
) -> Vec<Trial> {
    let prefix = format!(
        "model_based::the_{}_store_follows_the_model_through_",
        model.store
    );
    let runs = [
        (
            "random_workloads_and_drains_to_one_record_per_generation",
            None,
        ),
        (
            "determinate_and_indeterminate_faults",
            Some(FaultRates::new(0.15, 0.15)),
        ),
    ];
    runs.into_iter()
        .map(|(what, faults)| {
            Trial::test(format!("{prefix}{what}"), move || {
                let Some(factory) = make() else { return Ok(()) };
                let mut options = model_based::Options::cases(model.cases);
                options.faults = faults;
                // The regressions file belongs to the calling target, as if it
                // had called `model_based::run` itself.
                options.regressions = model_based::regressions_file(caller);
                let driver = Tokio(
                    tokio::runtime::Runtime::new().map_err(|e| format!("a tokio runtime: {e}"))?,
                );
                model_based::run(&factory, &driver, options);
                Ok(())
            })
        })
        .collect()
}

/// One tokio runtime for every case of a model-based test: the stores'
/// connection pools live on it.
struct Tokio(tokio::runtime::Runtime);

impl Driver for Tokio {
    fn block_on<Fut: Future>(&self, future: Fut) -> Fut::Output {
        self.0.block_on(future)
    }
}
