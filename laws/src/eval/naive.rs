//! A second, deliberately naive implementation of the law semantics, for tests only: at every frame it
//! re-evaluates the body from its definition over all frames seen so far (no incremental state).

use crate::lang::atom::Atom;
use crate::lang::formula::Formula;

use super::program::to_frames;

fn frames(b: f64, period_s: f64) -> i64 {
    to_frames(b, period_s).unwrap_or_else(|| panic!("bound {b} not a multiple of {period_s}"))
}

fn bounds(f: &Formula, period_s: f64) -> (i64, i64) {
    match f {
        Formula::Eventually(i, _) | Formula::Always(i, _) | Formula::Until(i, _, _) => {
            let (lo, hi) = i.bounds_s.expect("bounded");
            (frames(lo, period_s), frames(hi, period_s))
        }
        _ => unreachable!("only temporal operators have bounds"),
    }
}

/// The truth of `f` at position `i` of a trace of `n` frames; positions outside `[0, n)` do not exist.
pub fn holds(
    f: &Formula,
    i: i64,
    n: i64,
    period_s: f64,
    atom: &dyn Fn(&Atom, i64) -> bool,
) -> bool {
    let range = |lo: i64, hi: i64| (lo.max(0))..=(hi.min(n - 1));
    match f {
        Formula::Const(b) => *b,
        Formula::Atom(a) => atom(a, i),
        Formula::Not(p) => !holds(p, i, n, period_s, atom),
        Formula::And(a, b) => holds(a, i, n, period_s, atom) && holds(b, i, n, period_s, atom),
        Formula::Or(a, b) => holds(a, i, n, period_s, atom) || holds(b, i, n, period_s, atom),
        Formula::Implies(a, b) => !holds(a, i, n, period_s, atom) || holds(b, i, n, period_s, atom),
        Formula::Next(p) => i + 1 < n && holds(p, i + 1, n, period_s, atom),
        Formula::Eventually(_, p) => {
            let (lo, hi) = bounds(f, period_s);
            range(i + lo, i + hi).any(|j| holds(p, j, n, period_s, atom))
        }
        Formula::Always(_, p) => {
            let (lo, hi) = bounds(f, period_s);
            range(i + lo, i + hi).all(|j| holds(p, j, n, period_s, atom))
        }
        Formula::Until(_, p, q) => {
            let (lo, hi) = bounds(f, period_s);
            range(i + lo, i + hi).any(|j| {
                holds(q, j, n, period_s, atom)
                    && (i.max(0)..j).all(|m| holds(p, m, n, period_s, atom))
            })
        }
    }
}

/// Frames after a position at which the body's value at that position is known.
pub fn horizon(f: &Formula, period_s: f64) -> i64 {
    match f {
        Formula::Const(_) | Formula::Atom(_) => 0,
        Formula::Not(p) => horizon(p, period_s),
        Formula::Next(p) => horizon(p, period_s) + 1,
        Formula::And(a, b) | Formula::Or(a, b) | Formula::Implies(a, b) => {
            horizon(a, period_s).max(horizon(b, period_s))
        }
        Formula::Eventually(_, p) | Formula::Always(_, p) => {
            (horizon(p, period_s) + bounds(f, period_s).1).max(0)
        }
        Formula::Until(_, a, b) => {
            horizon(a, period_s).max(horizon(b, period_s)) + bounds(f, period_s).1
        }
    }
}

/// The body's conjuncts, each on its own: `a & b` splits, and `A -> (B & C)` is `(A -> B) & (A -> C)`.
fn split(f: &Formula) -> Vec<Formula> {
    match f {
        Formula::And(a, b) => [split(a), split(b)].concat(),
        Formula::Implies(a, rhs) => match &**rhs {
            Formula::And(b, c) => [
                split(&Formula::Implies(a.clone(), b.clone())),
                split(&Formula::Implies(a.clone(), c.clone())),
            ]
            .concat(),
            _ => vec![f.clone()],
        },
        _ => vec![f.clone()],
    }
}

/// Per frame: (violated now, violated within the last `window` frames), computed from scratch each frame
/// on the frames seen so far: violated at frame k when some conjunct of the body, decided `h` frames
/// after a position (its own horizon), is false at `k - h`.
pub fn verdicts(
    body: &Formula,
    n: usize,
    period_s: f64,
    window: usize,
    atom: &dyn Fn(&Atom, i64) -> bool,
) -> Vec<(bool, bool)> {
    let conjuncts: Vec<(Formula, i64)> = split(body)
        .into_iter()
        .map(|c| {
            let h = horizon(&c, period_s);
            (c, h)
        })
        .collect();
    let mut violated = Vec::with_capacity(n);
    for k in 0..n as i64 {
        violated.push(conjuncts.iter().any(|(c, h)| {
            let pos = k - h;
            pos >= 0 && !holds(c, pos, k + 1, period_s, atom)
        }));
    }
    (0..n)
        .map(|k| {
            (
                violated[k],
                violated[(k + 1).saturating_sub(window)..=k]
                    .iter()
                    .any(|&v| v),
            )
        })
        .collect()
}

/// The top-level `A -> F[lo,hi] B` conjuncts of `body` (state A and B, `0 ≤ lo ≤ hi`) as `(A, lo, hi, B)`
/// in frames.
fn obligations(body: &Formula, period_s: f64, out: &mut Vec<(Formula, i64, i64, Formula)>) {
    match body {
        Formula::And(a, b) => {
            obligations(a, period_s, out);
            obligations(b, period_s, out);
        }
        Formula::Implies(a, rhs) => {
            if let Formula::Eventually(i, b) = &**rhs {
                if let Some((lo, hi)) = i.bounds_s {
                    if a.is_state() && b.is_state() && 0.0 <= lo && lo <= hi {
                        out.push((
                            (**a).clone(),
                            frames(lo, period_s),
                            frames(hi, period_s),
                            (**b).clone(),
                        ));
                    }
                }
            }
        }
        _ => {}
    }
}

/// Per frame, from the definition: the age in frames of the oldest pending obligation of the top-level
/// `A -> F[lo,hi] B` conjuncts of `body` — a position i ≤ k with A, deadline `i + hi > k`, and no B in
/// `[i + lo, k]` — or `None`; `None` overall when `body` has no such conjunct.
pub fn pending_ages(
    body: &Formula,
    n: usize,
    period_s: f64,
    atom: &dyn Fn(&Atom, i64) -> bool,
) -> Option<Vec<Option<u64>>> {
    let mut parts = Vec::new();
    obligations(body, period_s, &mut parts);
    if parts.is_empty() {
        return None;
    }
    let n = n as i64;
    let ages = (0..n)
        .map(|k| {
            let mut oldest: Option<i64> = None;
            for (a, lo, hi, b) in &parts {
                for i in (k - hi + 1).max(0)..=k {
                    let pending = holds(a, i, n, period_s, atom)
                        && !((i + lo)..=k).any(|j| holds(b, j, n, period_s, atom));
                    if pending {
                        oldest = Some(oldest.map_or(i, |o| o.min(i)));
                        break;
                    }
                }
            }
            oldest.map(|i| (k - i) as u64)
        })
        .collect();
    Some(ages)
}
