//! Each property's candidate pool (see [`super::pool`] for what it holds and in which order) and the cut
//! points it is built from: threshold quantiles, obligation ages, and the finer cuts a chosen threshold is
//! refined on.

use rayon::prelude::*;

use laws::Atom;

use super::data::{RunRecord, Source};
use super::pool::{self, Candidate};
use super::AutoPlan;
use crate::spec::{PendingPredicate, ResolvedProperty, WINDOW_SUFFIX};

impl AutoPlan {
    /// The candidates of property `p` with where each is recorded (see [`super::pool`] for the order).
    pub(super) fn pool(&self, p: &ResolvedProperty, cuts: &Cuts) -> Vec<(Candidate, Source)> {
        let (thresholds, pending) = (&cuts.thresholds, &cuts.pending);
        let unsafe_text = &p.predicates[p.unsafe_bit];
        let mut out: Vec<(Candidate, Source)> = Vec::new();
        let push = |c: Candidate, s: Source, out: &mut Vec<(Candidate, Source)>| {
            let text = c.text();
            if text != *unsafe_text && !out.iter().any(|(d, _)| d.text() == text) {
                out.push((c, s));
            }
        };
        let atom_source = |a: &Atom| self.atoms.iter().position(|b| b == a).map(Source::Bit);
        for text in &p.predicates {
            if let Some(w) = self
                .windows
                .iter()
                .position(|w| format!("{w}{WINDOW_SUFFIX}") == *text)
            {
                push(
                    Candidate::Window(self.windows[w].clone()),
                    Source::Bit(self.atoms.len() + w),
                    &mut out,
                );
            } else if let Some(a) = Atom::parse(text).ok().map(|a| a.canonical().0) {
                if let Some(s) = atom_source(&a) {
                    push(Candidate::Atom(a), s, &mut out);
                }
            }
        }
        // Obligation memory of the property's own law and its related laws: pending, and pending for more
        // than the quantiles of the pending ages.
        let period = self.config.frame_period_s;
        for (j, law) in self.obligations.iter().enumerate() {
            let own = *law == p.law
                || p.predicates
                    .iter()
                    .any(|t| t.strip_suffix(WINDOW_SUFFIX) == Some(law));
            let Some(ages) = pending.get(j).filter(|_| own) else {
                continue;
            };
            let col = self.signals.len() + j;
            if ages.is_empty() {
                continue;
            }
            push(
                Candidate::Pending(law.clone(), None),
                Source::Above(col, -0.5),
                &mut out,
            );
            for &x in ages {
                let pd = PendingPredicate {
                    law,
                    more_than_s: Some(x),
                };
                let frames = pd.more_than_frames(period).unwrap_or(0) as f64;
                push(
                    Candidate::Pending(law.clone(), Some(x)),
                    Source::Above(col, frames),
                    &mut out,
                );
            }
        }
        for a in pool::generic_atoms() {
            if let Some(s) = atom_source(&a) {
                push(Candidate::Atom(a), s, &mut out);
            }
        }
        for (i, (&sig, cs)) in self.signals.iter().zip(thresholds).enumerate() {
            for &c in cs {
                if let Some(a) = pool::threshold_atom(sig, c) {
                    push(Candidate::Atom(a), Source::AtMost(i, c), &mut out);
                }
            }
        }
        out
    }

    /// The cut points computed from `records`: every numeric signal's thresholds and finer cuts (from one
    /// sample of its values) and every obligation's pending ages.
    pub(super) fn cuts(&self, records: &[RunRecord]) -> Cuts {
        // At most ~200k values per signal are sorted for its quantiles.
        let n_frames: usize = records.iter().map(RunRecord::len).sum();
        let stride = n_frames.div_ceil(200_000).max(1);
        let (thresholds, fine): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (0..self.signals.len())
            .into_par_iter()
            .map(|i| {
                pool::signal_cuts(
                    records
                        .iter()
                        .flat_map(|r| r.signal_values(i, stride))
                        .collect(),
                )
            })
            .unzip();
        // Pending ages (seconds) at which "pending for more than x s" candidates are cut; none for a law
        // never pending (or without obligations).
        let period = self.config.frame_period_s;
        let pending: Vec<Vec<f64>> = (0..self.obligations.len())
            .map(|j| {
                let col = self.signals.len() + j;
                let ages: Vec<f64> = records
                    .iter()
                    .flat_map(|r| r.signal_values(col, stride))
                    .filter(|&a| a >= 0.0)
                    .map(|a| a * period)
                    .collect();
                let mut cuts = pool::pending_cuts(ages);
                cuts.retain(|&x| x > 0.0);
                cuts
            })
            .collect();
        Cuts {
            thresholds,
            fine,
            pending,
        }
    }
}

/// The cut points of a plan's candidates on one set of training runs.
#[derive(Debug, Clone)]
pub(super) struct Cuts {
    /// Per numeric signal: its pool thresholds ([`pool::thresholds`]).
    pub thresholds: Vec<Vec<f64>>,
    /// Per numeric signal: the finer cuts a chosen threshold is refined on ([`pool::fine_thresholds`]).
    pub fine: Vec<Vec<f64>>,
    /// Per obligation law: the pending ages of its "pending for more than x s" candidates.
    pub pending: Vec<Vec<f64>>,
}

impl Cuts {
    /// The finer cuts of pool candidate `c` when it is a threshold atom on a recorded signal: the signal's
    /// column and its cuts.
    pub fn fine_of(&self, pool: &[(Candidate, Source)], c: usize) -> Option<(usize, &[f64])> {
        let (Candidate::Atom(_), Source::AtMost(i, _)) = pool.get(c)? else {
            return None;
        };
        Some((*i, self.fine.get(*i)?))
    }
}
