//! State formulas (no temporal operator) compiled to a truth table over their atoms' bits.
//!
//! A state formula's value at a frame depends only on that frame's atom values. With n distinct atoms
//! (n ≤ [`MAX_TABLE_ATOMS`]) the formula is tabulated once at compile time over all 2^n assignments, so a
//! step gathers n bits into an index and reads one table bit: no branches on the formula's shape, however
//! deep it is. Larger state formulas (rare) keep a small expression tree over atom bits.

use super::atoms::{bit, AtomTable};
use crate::lang::formula::Formula;

/// The largest number of distinct atoms tabulated (2^10 bits = 128 bytes of table).
pub const MAX_TABLE_ATOMS: usize = 10;

/// A state formula as an expression over atom bits (the fallback for more than [`MAX_TABLE_ATOMS`] atoms).
#[derive(Debug, Clone)]
pub enum Node {
    Const(bool),
    Atom(usize),
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
}

impl Node {
    fn eval(&self, words: &[u64]) -> bool {
        match self {
            Node::Const(b) => *b,
            Node::Atom(i) => bit(words, *i),
            Node::Not(p) => !p.eval(words),
            Node::And(a, b) => a.eval(words) && b.eval(words),
            Node::Or(a, b) => a.eval(words) || b.eval(words),
        }
    }
}

/// A compiled state formula.
#[derive(Debug, Clone)]
pub enum StateFn {
    /// A single atom, possibly negated: one bit read (the common monitor predicate).
    Bit {
        /// Atom index.
        atom: usize,
        /// True for `~atom`.
        negated: bool,
    },
    /// Bit `idx` of `table` is the value when atom `atoms[j]` has the value of bit `j` of `idx`.
    Table {
        /// Atom indices (into the evaluator's [`AtomTable`]), one per index bit.
        atoms: Box<[usize]>,
        /// The truth table, 2^n bits.
        table: Box<[u64]>,
    },
    /// Expression fallback.
    Tree(Box<Node>),
}

/// The atom indices of `f`, distinct, in order of first occurrence (interning new atoms).
fn distinct_atoms(f: &Formula, atoms: &mut AtomTable) -> Vec<usize> {
    let mut out = Vec::new();
    f.for_each_atom(&mut |a| {
        let i = atoms.intern(a);
        if !out.contains(&i) {
            out.push(i);
        }
    });
    out
}

fn tree(f: &Formula, atoms: &mut AtomTable) -> Option<Node> {
    let b = |p: &Formula, atoms: &mut AtomTable| tree(p, atoms).map(Box::new);
    Some(match f {
        Formula::Const(v) => Node::Const(*v),
        Formula::Atom(a) => Node::Atom(atoms.intern(a)),
        Formula::Not(p) => Node::Not(b(p, atoms)?),
        Formula::And(x, y) => Node::And(b(x, atoms)?, b(y, atoms)?),
        Formula::Or(x, y) => Node::Or(b(x, atoms)?, b(y, atoms)?),
        Formula::Implies(x, y) => Node::Or(Box::new(Node::Not(b(x, atoms)?)), b(y, atoms)?),
        _ => return None,
    })
}

impl StateFn {
    /// Compiles a state formula; `None` when `f` has a temporal operator.
    pub fn new(f: &Formula, atoms: &mut AtomTable) -> Option<StateFn> {
        if !f.is_state() {
            return None;
        }
        match f {
            Formula::Atom(a) => {
                return Some(StateFn::Bit {
                    atom: atoms.intern(a),
                    negated: false,
                })
            }
            Formula::Not(p) => {
                if let Formula::Atom(a) = &**p {
                    return Some(StateFn::Bit {
                        atom: atoms.intern(a),
                        negated: true,
                    });
                }
            }
            _ => {}
        }
        let ids = distinct_atoms(f, atoms);
        if ids.len() > MAX_TABLE_ATOMS {
            return tree(f, atoms).map(|n| StateFn::Tree(Box::new(n)));
        }
        // Tabulate through the tree over atom bits: each row sets its atoms' bits in a scratch bitset, so a
        // row costs one pass over the formula without looking atoms up by value.
        let node = tree(f, atoms)?;
        let n_rows = 1usize << ids.len();
        let mut table = vec![0u64; n_rows.div_ceil(64)];
        let mut words = vec![0u64; atoms.atoms().len() / 64 + 1];
        for row in 0..n_rows {
            for (j, &i) in ids.iter().enumerate() {
                let v = u64::from((row >> j) & 1 == 1);
                if let Some(w) = words.get_mut(i >> 6) {
                    *w = (*w & !(1 << (i & 63))) | (v << (i & 63));
                }
            }
            if node.eval(&words) {
                table[row >> 6] |= 1 << (row & 63);
            }
        }
        Some(StateFn::Table {
            atoms: ids.into_boxed_slice(),
            table: table.into_boxed_slice(),
        })
    }

    /// The formula's value on the current frame's atom bits.
    #[inline]
    pub fn eval(&self, words: &[u64]) -> bool {
        match self {
            StateFn::Bit { atom, negated } => bit(words, *atom) != *negated,
            StateFn::Table { atoms, table } => {
                let mut row = 0usize;
                for (j, &a) in atoms.iter().enumerate() {
                    row |= usize::from(bit(words, a)) << j;
                }
                table
                    .get(row >> 6)
                    .is_some_and(|w| (w >> (row & 63)) & 1 == 1)
            }
            StateFn::Tree(node) => node.eval(words),
        }
    }
}
