//! The formula tree of a law: boolean connectives and interval temporal operators over canonical atoms.
//!
//! Bounds are kept in seconds as written; the evaluator turns them into frames for its frame period.
//! `Display` prints a fully parenthesised text that the parser reads back to the same tree.

use std::fmt;

use super::atom::Atom;

/// The interval of a temporal operator, in seconds, with where it was written (for errors).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// `Some((lo, hi))` for `[lo,hi]`; `None` for an unbounded operator (`G p`, `F p`, `p U q`).
    pub bounds_s: Option<(f64, f64)>,
    /// 1-based line of the operator.
    pub line: usize,
    /// 1-based column of the operator.
    pub col: usize,
}

/// A law formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Formula {
    /// `true` / `false`.
    Const(bool),
    /// A canonical atom (`<`, `<=` or `==`).
    Atom(Atom),
    /// `~p`
    Not(Box<Formula>),
    /// `p & q`
    And(Box<Formula>, Box<Formula>),
    /// `p | q`
    Or(Box<Formula>, Box<Formula>),
    /// `p -> q`
    Implies(Box<Formula>, Box<Formula>),
    /// `F[a,b] p`: p holds at some frame in [i+a, i+b].
    Eventually(Interval, Box<Formula>),
    /// `G[a,b] p`: p holds at every frame in [i+a, i+b].
    Always(Interval, Box<Formula>),
    /// `p U[a,b] q`: q holds at some j in [i+a, i+b] and p holds on [i, j).
    Until(Interval, Box<Formula>, Box<Formula>),
    /// `X p`: p holds at the next frame.
    Next(Box<Formula>),
}

impl Formula {
    /// True when the formula contains no temporal operator (its value at a frame depends on that frame only).
    pub fn is_state(&self) -> bool {
        match self {
            Formula::Const(_) | Formula::Atom(_) => true,
            Formula::Not(p) => p.is_state(),
            Formula::And(a, b) | Formula::Or(a, b) | Formula::Implies(a, b) => {
                a.is_state() && b.is_state()
            }
            Formula::Eventually(..)
            | Formula::Always(..)
            | Formula::Until(..)
            | Formula::Next(_) => false,
        }
    }

    /// Evaluates a state formula on one frame's atom values (`atom` gives an atom's truth).
    /// Temporal operators are not allowed here (returns `None`).
    pub fn eval_state(&self, atom: &mut impl FnMut(&Atom) -> bool) -> Option<bool> {
        Some(match self {
            Formula::Const(b) => *b,
            Formula::Atom(a) => atom(a),
            Formula::Not(p) => !p.eval_state(atom)?,
            Formula::And(a, b) => a.eval_state(atom)? & b.eval_state(atom)?,
            Formula::Or(a, b) => a.eval_state(atom)? | b.eval_state(atom)?,
            Formula::Implies(a, b) => !a.eval_state(atom)? | b.eval_state(atom)?,
            _ => return None,
        })
    }

    /// Visits every atom, left to right.
    pub fn for_each_atom(&self, f: &mut impl FnMut(&Atom)) {
        match self {
            Formula::Const(_) => {}
            Formula::Atom(a) => f(a),
            Formula::Not(p)
            | Formula::Eventually(_, p)
            | Formula::Always(_, p)
            | Formula::Next(p) => p.for_each_atom(f),
            Formula::And(a, b)
            | Formula::Or(a, b)
            | Formula::Implies(a, b)
            | Formula::Until(_, a, b) => {
                a.for_each_atom(f);
                b.for_each_atom(f);
            }
        }
    }
}

fn bounds(f: &mut fmt::Formatter<'_>, i: &Interval) -> fmt::Result {
    match i.bounds_s {
        Some((lo, hi)) => write!(f, "[{lo},{hi}]"),
        None => Ok(()),
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Formula::Const(b) => write!(f, "{b}"),
            Formula::Atom(a) => write!(f, "{a}"),
            Formula::Not(p) => write!(f, "~({p})"),
            Formula::And(a, b) => write!(f, "({a} & {b})"),
            Formula::Or(a, b) => write!(f, "({a} | {b})"),
            Formula::Implies(a, b) => write!(f, "({a} -> {b})"),
            Formula::Eventually(i, p) => {
                f.write_str("F")?;
                bounds(f, i)?;
                write!(f, "({p})")
            }
            Formula::Always(i, p) => {
                f.write_str("G")?;
                bounds(f, i)?;
                write!(f, "({p})")
            }
            Formula::Until(i, a, b) => {
                // Every operand prints self-delimited (binary nodes in parentheses, prefix operators bind
                // tighter than U), so one pair of parentheses per node is enough: the printed text nests
                // no deeper than the tree, and so stays within the parser's limits.
                write!(f, "({a} U")?;
                bounds(f, i)?;
                write!(f, " {b})")
            }
            Formula::Next(p) => write!(f, "X({p})"),
        }
    }
}
