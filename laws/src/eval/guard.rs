//! Relevance ("must-check"): a cheap state formula that must hold for a law body to be falsifiable.
//!
//! For a body `A -> C`, the body is true at every position where `A` is false. The guard is the part of
//! `A` that depends on the current frame only (the conjuncts of `A` without temporal operators); for a
//! conjunction of such bodies it is the disjunction of their guards. When the guard has been false for
//! `H + 1` consecutive frames (H = the body's horizon), every position whose verdict is still open is
//! already known to hold, so the evaluator stops stepping the body until the guard is true again. As every
//! interval of a guarded body starts at ≥ 0, positions from the resumption frame on read only frames from
//! that frame on, so the stale operator state cannot change any verdict (the evaluator also forces the
//! verdicts of positions before the resumption to "holds", which the guard proves).

use crate::lang::formula::Formula;

/// The necessary state condition of `f` (`f` ⇒ result), if any part of it is a state formula.
fn necessary(f: &Formula) -> Option<Formula> {
    if f.is_state() {
        return Some(f.clone());
    }
    match f {
        Formula::And(a, b) => match (necessary(a), necessary(b)) {
            (Some(x), Some(y)) => Some(Formula::And(Box::new(x), Box::new(y))),
            (x, y) => x.or(y),
        },
        _ => None,
    }
}

/// True when some interval of `f` reaches before the position it is evaluated at.
fn looks_back(f: &Formula) -> bool {
    match f {
        Formula::Const(_) | Formula::Atom(_) => false,
        Formula::Not(p) | Formula::Next(p) => looks_back(p),
        Formula::And(a, b) | Formula::Or(a, b) | Formula::Implies(a, b) => looks_back(a) || looks_back(b),
        Formula::Eventually(i, p) | Formula::Always(i, p) => {
            i.bounds_s.is_none_or(|(lo, _)| lo < 0.0) || looks_back(p)
        }
        Formula::Until(i, a, b) => i.bounds_s.is_none_or(|(lo, _)| lo < 0.0) || looks_back(a) || looks_back(b),
    }
}

fn guard_of(body: &Formula) -> Option<Formula> {
    match body {
        Formula::Implies(a, _) => necessary(a),
        Formula::And(a, b) => Some(Formula::Or(Box::new(guard_of(a)?), Box::new(guard_of(b)?))),
        _ => None,
    }
}

/// The guard of a law body: a state formula `g` with `¬g(i) ⇒ body(i)`, or `None` when the body has no
/// useful guard or looks into the past (then relevance skipping would not be sound).
pub fn guard(body: &Formula) -> Option<Formula> {
    if looks_back(body) {
        return None;
    }
    guard_of(body)
}
