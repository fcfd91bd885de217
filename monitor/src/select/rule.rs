//! The best small reactive rule over the same candidate pool: the comparator a safety engineer with the
//! same signals would write by hand.
//!
//! A rule is a conjunction of one or two literals (a candidate atom or its negation) and alarms on every
//! frame where it holds. Every such conjunction over the property's atom candidates is tried on the
//! training runs (the same candidates as the abstraction, obligation memory and window predicates
//! included: they are the evaluator's state at the current frame), scored like the
//! monitor is judged — a violating run counts when the rule fired strictly before its violation, with the
//! [`super::criterion::utility`] of its lead, and a safe run counts against it when the rule ever fired —
//! and the one maximising `mean utility − false-alarm fraction` (Youden-style: one point of false alarms
//! costs as much as one point of warned violations) is kept. Ties go to the shorter rule, then to the
//! earlier candidates, so the choice is deterministic.

use rayon::prelude::*;

use super::criterion::utility;
use super::data::{PropertyData, RunRecord};

/// A literal: candidate index and whether it is negated.
pub type Literal = (usize, bool);

/// The chosen rule with its training figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleChoice {
    /// One or two literals.
    pub literals: Vec<Literal>,
    /// Violating training runs alarmed before their violation.
    pub n_predicted: usize,
    /// Violating training runs.
    pub n_violating: usize,
    /// Safe training runs with an alarm.
    pub n_false_alarms: usize,
    /// Safe training runs.
    pub n_safe: usize,
    /// The choice criterion, mean utility − false-alarm fraction.
    pub score: f64,
}

/// Per literal per run: the frame intervals `[a, b)` (before any violation) where it holds.
struct Intervals {
    offsets: Vec<usize>,
    spans: Vec<(u32, u32)>,
}

fn intervals(data: &PropertyData, c: usize, negated: bool) -> Intervals {
    let mut out = Intervals {
        offsets: vec![0],
        spans: Vec::new(),
    };
    for (r, run) in data.runs.iter().enumerate() {
        let horizon = if run.violated { run.n - 1 } else { run.n };
        let (init, toggles) = data.candidates[c].run(r);
        let mut v = init != negated;
        let mut start = 0u32;
        for &f in toggles.iter().take_while(|&&f| f < horizon) {
            if v {
                out.spans.push((start, f));
            }
            v = !v;
            start = f;
        }
        if v && start < horizon {
            out.spans.push((start, horizon));
        }
        out.offsets.push(out.spans.len());
    }
    out
}

impl Intervals {
    fn run(&self, r: usize) -> &[(u32, u32)] {
        &self.spans[self.offsets[r]..self.offsets[r + 1]]
    }
}

/// The first frame where both interval lists hold.
fn first_both(a: &[(u32, u32)], b: &[(u32, u32)]) -> Option<u32> {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo < hi {
            return Some(lo);
        }
        if a[i].1 <= b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    None
}

/// What a rule is chosen for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// The highest `mean utility − false-alarm fraction` (the comparator stored in the model).
    Youden,
    /// The highest mean utility among the rules that alarm in at most this share of the safe training
    /// runs (`floor(share · n)` of them): the rule written for one false-alarm budget.
    WithinBudget(f64),
}

/// Scores a rule given each run's first alarm frame: (objective, mean utility, predicted, false alarms);
/// the objective is `-inf` for a rule over its budget.
fn score_rule(
    data: &PropertyData,
    records: &[RunRecord],
    objective: Objective,
    first: impl Fn(usize) -> Option<u32>,
) -> (f64, f64, usize, usize) {
    let (mut u, mut n_pred, mut n_fa, mut n_viol, mut n_safe) = (0.0, 0, 0, 0, 0);
    for (r, run) in data.runs.iter().enumerate() {
        let alarm = first(r);
        if run.violated {
            n_viol += 1;
            if let Some(a) = alarm {
                let t = &records[run.record].t;
                n_pred += 1;
                u += utility(Some(t[run.n as usize - 1] - t[a as usize]));
            }
        } else {
            n_safe += 1;
            n_fa += usize::from(alarm.is_some());
        }
    }
    let mean_u = if n_viol > 0 { u / n_viol as f64 } else { 0.0 };
    let fa = if n_safe > 0 {
        n_fa as f64 / n_safe as f64
    } else {
        0.0
    };
    let score = match objective {
        Objective::Youden => mean_u - fa,
        Objective::WithinBudget(share) => {
            let allowed = (share * n_safe as f64 + 1e-9).floor() as usize;
            if n_fa <= allowed {
                mean_u
            } else {
                f64::NEG_INFINITY
            }
        }
    };
    (score, mean_u, n_pred, n_fa)
}

/// The best rule over the candidates `allowed` (pool indices) by [`Objective::Youden`], or `None` without
/// violating runs or candidates.
pub fn best_rule(
    data: &PropertyData,
    records: &[RunRecord],
    allowed: &[usize],
) -> Option<RuleChoice> {
    best_rule_for(data, records, allowed, Objective::Youden)
}

/// The best rule over the candidates `allowed` for `objective`, or `None` without violating runs or
/// candidates, or when no rule meets the objective's budget.
pub fn best_rule_for(
    data: &PropertyData,
    records: &[RunRecord],
    allowed: &[usize],
    objective: Objective,
) -> Option<RuleChoice> {
    let n_violating = data.runs.iter().filter(|r| r.violated).count();
    let n_safe = data.runs.len() - n_violating;
    if n_violating == 0 {
        return None;
    }
    let literals: Vec<Literal> = allowed
        .iter()
        .filter(|&&c| !data.candidates[c].is_constant())
        .flat_map(|&c| [(c, false), (c, true)])
        .collect();
    let spans: Vec<Intervals> = literals
        .par_iter()
        .map(|&(c, neg)| intervals(data, c, neg))
        .collect();
    // (score, rule length, first literal, second literal): larger score, then shorter, then earlier wins.
    let better = |a: &(f64, usize, usize, usize, usize, usize),
                  b: &(f64, usize, usize, usize, usize, usize)| {
        b.0 > a.0 || (b.0 == a.0 && (b.1, b.2, b.3) < (a.1, a.2, a.3))
    };
    // Singles first. A conjunction alarms only where both literals do, so its mean utility is at most
    // either literal's, and its criterion at most that: pairs whose bound is below the best found so far
    // are skipped (strictly below, so the choice does not depend on the order of the search).
    let singles: Vec<(f64, f64, usize, usize)> = (0..literals.len())
        .into_par_iter()
        .map(|i| {
            score_rule(data, records, objective, |r| {
                spans[i].run(r).first().map(|s| s.0)
            })
        })
        .collect();
    let best_single = (0..literals.len())
        .map(|i| {
            let (s, _, p, fa) = singles[i];
            (s, 1, i, i, p, fa)
        })
        .reduce(|a, b| if better(&a, &b) { b } else { a })?;
    // Literals by decreasing utility: for a first literal, later ones bound the pair by their own utility.
    let mut order: Vec<usize> = (0..literals.len()).collect();
    order.sort_by(|&a, &b| singles[b].1.total_cmp(&singles[a].1).then(a.cmp(&b)));
    let best = (0..order.len())
        .into_par_iter()
        .map(|x| {
            let mut best = best_single;
            let a = order[x];
            for &b in &order[x + 1..] {
                if singles[b].1 < best.0 {
                    break;
                }
                if literals[a].0 == literals[b].0 {
                    continue;
                }
                let (i, j) = (a.min(b), a.max(b));
                let (s, _, p, fa) = score_rule(data, records, objective, |r| {
                    first_both(spans[i].run(r), spans[j].run(r))
                });
                let cand = (s, 2, i, j, p, fa);
                if better(&best, &cand) {
                    best = cand;
                }
            }
            best
        })
        .reduce_with(|a, b| if better(&a, &b) { b } else { a })?;
    let (score, len, i, j, n_predicted, n_false_alarms) = best;
    if score == f64::NEG_INFINITY {
        return None;
    }
    let literals = if len == 1 {
        vec![literals[i]]
    } else {
        vec![literals[i], literals[j]]
    };
    Some(RuleChoice {
        literals,
        n_predicted,
        n_violating,
        n_false_alarms,
        n_safe,
        score,
    })
}

#[cfg(test)]
mod tests;
