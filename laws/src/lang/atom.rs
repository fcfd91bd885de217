//! Atomic predicates: a comparison of two arithmetic terms over signals, e.g. `stoplineAhead<=2`.
//!
//! Atoms are the leaves of every law and the bits of the monitor's abstraction, so they are values
//! (`Clone + Eq + Hash`) with a canonical text (`Display`) that [`Atom::parse`] (in the parser) reads back. Evaluating an
//! atom reads one or two signals from a [`Signals`] array and compares: no allocation, no lookup by name.

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::signals::{Signal, Signals};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl Cmp {
    /// The operator text.
    pub fn as_str(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
        }
    }

    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    pub fn swapped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            Cmp::Eq | Cmp::Ne => self,
        }
    }

    /// The negated operator (`!(a < b)` ⇔ `a >= b`).
    pub fn negated(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Ge,
            Cmp::Le => Cmp::Gt,
            Cmp::Gt => Cmp::Le,
            Cmp::Ge => Cmp::Lt,
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
        }
    }

    #[inline]
    /// Whether `a CMP b` holds.
    pub fn apply(self, a: f64, b: f64) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }
}

/// An arithmetic operator (LawBreaker's dotted `.+ .- .* ./`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `.+`
    Add,
    /// `.-`
    Sub,
    /// `.*`
    Mul,
    /// `./`
    Div,
}

impl ArithOp {
    /// The operator text.
    pub fn as_str(self) -> &'static str {
        match self {
            ArithOp::Add => ".+",
            ArithOp::Sub => ".-",
            ArithOp::Mul => ".*",
            ArithOp::Div => "./",
        }
    }
}

/// An arithmetic term over signals and constants.
#[derive(Debug, Clone)]
pub enum Term {
    /// A signal's value at the current frame.
    Signal(Signal),
    /// A constant (finite).
    Const(f64),
    /// `lhs op rhs`.
    Bin(Box<Term>, ArithOp, Box<Term>),
}

impl Term {
    #[inline]
    fn eval(&self, s: &Signals) -> f64 {
        match self {
            Term::Signal(sig) => s.get(*sig),
            Term::Const(c) => *c,
            Term::Bin(a, op, b) => {
                let (a, b) = (a.eval(s), b.eval(s));
                match op {
                    ArithOp::Add => a + b,
                    ArithOp::Sub => a - b,
                    ArithOp::Mul => a * b,
                    ArithOp::Div => a / b,
                }
            }
        }
    }

    /// Collects the signals this term reads.
    pub fn signals(&self, out: &mut Vec<Signal>) {
        match self {
            Term::Signal(sig) => out.push(*sig),
            Term::Const(_) => {}
            Term::Bin(a, _, b) => {
                a.signals(out);
                b.signals(out);
            }
        }
    }
}

/// Bit pattern of a constant, with −0 folded into +0 so that equal numbers hash equally.
fn const_bits(c: f64) -> u64 {
    if c == 0.0 {
        0
    } else {
        c.to_bits()
    }
}

impl PartialEq for Term {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Term::Signal(a), Term::Signal(b)) => a == b,
            (Term::Const(a), Term::Const(b)) => const_bits(*a) == const_bits(*b),
            (Term::Bin(a1, o1, b1), Term::Bin(a2, o2, b2)) => o1 == o2 && a1 == a2 && b1 == b2,
            _ => false,
        }
    }
}

impl Eq for Term {}

impl Hash for Term {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Term::Signal(sig) => (0u8, sig).hash(h),
            Term::Const(c) => (1u8, const_bits(*c)).hash(h),
            Term::Bin(a, op, b) => {
                (2u8, op).hash(h);
                a.hash(h);
                b.hash(h);
            }
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Signal(sig) => f.write_str(sig.name()),
            Term::Const(c) => write!(f, "{c}"),
            Term::Bin(a, op, b) => write!(f, "({a} {} {b})", op.as_str()),
        }
    }
}

/// An atomic predicate `lhs cmp rhs`.
///
/// Constructed by the parser with constants on the right (`2 > speed` becomes `speed < 2`). Inside a law,
/// atoms are canonical: only `<`, `<=` and `==` appear, the other three are written as negations, so that
/// `speed > 0.5` and `speed <= 0.5` are one predicate (one bit of the abstraction).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Atom {
    lhs: Term,
    cmp: Cmp,
    rhs: Term,
}

impl Atom {
    /// Builds `lhs cmp rhs`, moving a lone constant to the right-hand side.
    pub fn new(lhs: Term, cmp: Cmp, rhs: Term) -> Atom {
        if matches!(lhs, Term::Const(_)) && !matches!(rhs, Term::Const(_)) {
            Atom {
                lhs: rhs,
                cmp: cmp.swapped(),
                rhs: lhs,
            }
        } else {
            Atom { lhs, cmp, rhs }
        }
    }

    /// The canonical form: an atom using only `<`, `<=`, `==`, and whether the original is its negation.
    pub fn canonical(&self) -> (Atom, bool) {
        match self.cmp {
            Cmp::Gt | Cmp::Ge | Cmp::Ne => (
                Atom {
                    lhs: self.lhs.clone(),
                    cmp: self.cmp.negated(),
                    rhs: self.rhs.clone(),
                },
                true,
            ),
            _ => (self.clone(), false),
        }
    }

    /// The truth of the atom on one frame's signals.
    #[inline]
    pub fn eval(&self, s: &Signals) -> bool {
        if let (Term::Signal(sig), Term::Const(c)) = (&self.lhs, &self.rhs) {
            return self.cmp.apply(s.get(*sig), *c);
        }
        self.cmp.apply(self.lhs.eval(s), self.rhs.eval(s))
    }

    /// `(signal, cmp, constant)` when the atom compares one signal with a constant (the common shape).
    pub fn signal_vs_const(&self) -> Option<(Signal, Cmp, f64)> {
        match (&self.lhs, &self.rhs) {
            (Term::Signal(sig), Term::Const(c)) => Some((*sig, self.cmp, *c)),
            _ => None,
        }
    }

    /// The signals the atom reads.
    pub fn signals(&self) -> Vec<Signal> {
        let mut out = Vec::new();
        self.lhs.signals(&mut out);
        self.rhs.signals(&mut out);
        out
    }

    /// The comparison operator.
    pub fn cmp(&self) -> Cmp {
        self.cmp
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.lhs, self.cmp.as_str(), self.rhs)
    }
}
