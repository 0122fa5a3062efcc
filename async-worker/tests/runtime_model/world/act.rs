//! Each step acted out on the world.

use super::World;
use crate::reference::Step;
use claim_conformance::CheckedStore;
use claim_conformance::unreliable::{FaultRates, Op};

impl<S: CheckedStore + Clone> World<S> {
    /// Acts out one step.
    pub async fn apply(&mut self, step: &Step) {
        let pace = self.setting.pace.clone();
        match step {
            Step::Submit {
                deadline_in,
                script,
                gates,
            } => self.submit(*deadline_in, script.clone(), gates).await,
            Step::SubmitBad { garbage } => self.submit_bad(*garbage).await,
            Step::Cancel { req } => {
                let id = self.requests[*req].generation.id.clone();
                if self.base.cancel(&id).await.expect("producer cancel") {
                    self.cancelled.insert(id);
                }
            }
            Step::SetGate { mode } => self.gates.set(*mode),
            Step::Start { slot } => {
                self.kill(*slot).await;
                self.start(*slot);
            }
            Step::Crash { slot } => self.kill(*slot).await,
            Step::CrashAt { slot, op, before } => self.crash_at(*slot, *op, *before).await,
            Step::ShutdownDuringClaim { slot, crash } => {
                if let Some(tap) = self.tap(*slot).cloned() {
                    tap.arm(Op::Claim, false);
                    self.wait_for_trap(&tap).await;
                    self.shut_down(*slot, false).await;
                    if *crash {
                        tap.arm(Op::Release, false);
                        self.crash_at(*slot, Op::Release, false).await;
                    } else {
                        tap.untrap();
                    }
                }
            }
            Step::CrashWhileDraining { slot, op, before } => {
                if let Some(tap) = self.tap(*slot) {
                    tap.arm(*op, *before);
                }
                self.shut_down(*slot, false).await;
                self.crash_at(*slot, *op, *before).await;
            }
            Step::Shutdown { slot, wait } => self.shut_down(*slot, *wait).await,
            Step::Unblock { req, yields } => {
                self.handler.unblock(&self.requests[*req].generation.id, 1);
                pace.turns(*yields).await;
            }
            Step::Advance { ms } => pace.advance(*ms).await,
            Step::Stall { slot, ms } => {
                let tap = self.tap(*slot).cloned();
                if let Some(tap) = &tap {
                    tap.stall();
                }
                self.track_health();
                pace.advance(*ms).await;
                if let Some(tap) = &tap {
                    tap.resume();
                }
            }
            Step::Settle { yields } => pace.turns(*yields).await,
            Step::Faults {
                slot,
                determinate,
                indeterminate,
            } => {
                if let Some(tap) = self.tap(*slot) {
                    let pct = |p: u8| f64::from(p) / 100.0;
                    tap.faulty
                        .set_rates(FaultRates::new(pct(*determinate), pct(*indeterminate)));
                }
            }
            Step::FailNext { slot, op, fault } => {
                if let Some(tap) = self.tap(*slot) {
                    tap.faulty.fail_next(*op, *fault);
                }
            }
            Step::Heal { slot } => {
                if let Some(tap) = self.tap(*slot) {
                    tap.faulty.set_rates(FaultRates::NONE);
                    tap.faulty.clear_scripted();
                }
            }
            Step::Trap { slot, op, before } => {
                if let Some(tap) = self.tap(*slot) {
                    tap.arm(*op, *before);
                }
            }
            Step::Untrap { slot, yields } => {
                if let Some(tap) = self.tap(*slot) {
                    tap.untrap();
                }
                pace.turns(*yields).await;
            }
        }
        self.reap();
        self.track_health();
    }
}
