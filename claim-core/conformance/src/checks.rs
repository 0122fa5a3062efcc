//! The checks, one file per group of behaviour, and what a check is: each file lists its own in a `checks()` function.
//!
//! A check is a plain generic async function over a [`StoreFactory`]; its
//! file names it once, under what it needs from the run ([`Needs`]), in a
//! [`checks!`] list (operator checks in an [`admin_checks!`] list), and the
//! runner ([`crate::run`]) makes one trial of it per pass it belongs to.

/// Writes a file's `checks()` from its check functions, each named once
/// under what it needs: `checks! { clock_free: a, b; clocked: c; }`
/// (either section may be left out).
macro_rules! checks {
    (
        $(clock_free: $($free:ident),+ $(,)?;)?
        $(clocked: $($clocked:ident),+ $(,)?;)?
    ) => {
        /// This file's checks, for the runner.
        pub fn checks<F: $crate::StoreFactory + 'static>() -> Vec<$crate::checks::Check<F>> {
            use $crate::checks::Check;
            vec![
                $($(Check::clock_free($free),)+)?
                $($(Check::clocked($clocked),)+)?
            ]
        }
    };
}

/// Writes a file's `admin_checks()`, its checks of the operator's
/// operations: `admin_checks! { admin: a, b; }`.
macro_rules! admin_checks {
    (admin: $($admin:ident),+ $(,)?;) => {
        /// This file's checks of the operator's operations, for the runner.
        pub fn admin_checks<F: $crate::StoreFactory + 'static>() -> Vec<$crate::checks::Check<F>>
        where
            F::Store: claim_core::ClaimAdmin,
        {
            vec![$($crate::checks::Check::admin($admin)),+]
        }
    };
}

pub(crate) use {admin_checks, checks};

pub mod acks;
pub mod admin;
pub mod answered;
pub mod claims;
pub mod hostile;
pub mod leases;
pub mod payloads;
pub mod poison;
pub mod reclaims;
pub mod retry_now;
pub mod returns;
pub mod routing;
pub mod support;

pub use crate::StoreFactory;

use futures::future::LocalBoxFuture;
use std::fmt;

/// Which passes a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Neither moves the clock nor asserts an exact instant: plain, through
    /// faults, and on a server's own clock.
    ClockFree,
    /// Sets the manual clock or asserts instants: plain and through faults.
    Clock,
    /// An operator's operation (`ClaimAdmin`): once, on a fresh store (an
    /// operator command is run once and reported, never retried).
    Admin,
}

/// A check as the runner calls it: on a factory, to completion.
pub type RunCheck<F> = Box<dyn for<'a> Fn(&'a F) -> LocalBoxFuture<'a, ()> + Send + Sync>;

/// One check: its name (`<file>::<function>`), its passes and the function.
pub struct Check<F> {
    pub name: &'static str,
    pub needs: Needs,
    pub run: RunCheck<F>,
}

impl<F: StoreFactory + 'static> Check<F> {
    pub fn clock_free<C: AsyncFn(&F) + Copy + Send + Sync + 'static>(check: C) -> Self {
        Check::new(Needs::ClockFree, check)
    }

    pub fn clocked<C: AsyncFn(&F) + Copy + Send + Sync + 'static>(check: C) -> Self {
        Check::new(Needs::Clock, check)
    }

    pub fn admin<C: AsyncFn(&F) + Copy + Send + Sync + 'static>(check: C) -> Self {
        Check::new(Needs::Admin, check)
    }

    fn new<C: AsyncFn(&F) + Copy + Send + Sync + 'static>(needs: Needs, check: C) -> Self {
        Check {
            name: name_of::<C>(),
            needs,
            run: Box::new(move |factory| Box::pin(async move { check(factory).await })),
        }
    }

    /// The function's own name, without its file: what seeds its faults.
    pub fn function(&self) -> &'static str {
        self.name.rsplit("::").next().unwrap_or(self.name)
    }
}

/// `<file>::<function>` of a check function's type, whose name is its path
/// (`claim_conformance::checks::<file>::<function><generics>`): the
/// function is named once, where it is listed.
fn name_of<C>() -> &'static str {
    let path = std::any::type_name::<C>();
    let path = path.split('<').next().unwrap_or(path);
    let mut from = path.len();
    for _ in 0..2 {
        from = path[..from].rfind("::").unwrap_or(0);
    }
    path[from..].trim_start_matches("::")
}

impl<F> fmt::Debug for Check<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .field("needs", &self.needs)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::name_of;

    fn listed<T>() {}

    fn name_of_val<C>(_: &C) -> &'static str {
        name_of::<C>()
    }

    #[test]
    fn a_check_is_named_by_its_module_and_function_without_generics() {
        assert_eq!(name_of_val(&listed::<Vec<u8>>), "tests::listed");
    }
}
