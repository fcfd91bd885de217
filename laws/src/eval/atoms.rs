//! The evaluator-wide atom table: every distinct atom of every law is evaluated exactly once per frame,
//! into a bitset that the compiled laws read.
//!
//! Evaluating all atoms eagerly is cheaper than caching them lazily: almost every atom is "signal compared
//! with a constant", and the three canonical comparisons (`<`, `<=`, `==`) each get a branch-free loop over
//! a flat array, so a frame costs about one load, one compare and one shift-or per atom. Atoms with
//! arithmetic terms take the slower general path.

use std::collections::HashMap;

use crate::lang::atom::{Atom, Cmp};
use crate::signals::{Signal, Signals};

/// `signal cmp constant`, flattened.
#[derive(Debug, Clone, Copy)]
struct Simple {
    signal: Signal,
    constant: f64,
    bit: usize,
}

/// Interned atoms and their values at the current frame.
#[derive(Debug, Clone, Default)]
pub struct AtomTable {
    atoms: Vec<Atom>,
    index: HashMap<Atom, usize>,
    lt: Vec<Simple>,
    le: Vec<Simple>,
    eq: Vec<Simple>,
    /// Atoms that are not `signal cmp constant` with a canonical operator, with their bit.
    general: Vec<(Atom, usize)>,
    /// Bit `i` of the set is atom `i`'s value at the current frame.
    words: Vec<u64>,
}

#[inline]
fn set_bits(words: &mut [u64], atoms: &[Simple], s: &Signals, cmp: impl Fn(f64, f64) -> bool) {
    for a in atoms {
        let v = u64::from(cmp(s.get(a.signal), a.constant));
        // `bit / 64 < words.len()`: `words` grows with every interned atom (see `intern`).
        let w = &mut words[a.bit >> 6];
        *w = (*w & !(1 << (a.bit & 63))) | (v << (a.bit & 63));
    }
}

impl AtomTable {
    /// The index of `atom`, adding it if new.
    pub fn intern(&mut self, atom: &Atom) -> usize {
        if let Some(&i) = self.index.get(atom) {
            return i;
        }
        let bit = self.atoms.len();
        self.atoms.push(atom.clone());
        self.index.insert(atom.clone(), bit);
        self.words.resize(bit / 64 + 1, 0);
        match atom.signal_vs_const() {
            Some((sig, cmp, constant)) => {
                let simple = Simple {
                    signal: sig,
                    constant,
                    bit,
                };
                match cmp {
                    Cmp::Lt => self.lt.push(simple),
                    Cmp::Le => self.le.push(simple),
                    Cmp::Eq => self.eq.push(simple),
                    Cmp::Gt | Cmp::Ge | Cmp::Ne => self.general.push((atom.clone(), bit)),
                }
            }
            None => self.general.push((atom.clone(), bit)),
        }
        bit
    }

    /// Evaluates every atom on `s` (the values of the previous frame are overwritten).
    #[inline]
    pub fn eval_all(&mut self, s: &Signals) {
        set_bits(&mut self.words, &self.lt, s, |a, b| a < b);
        set_bits(&mut self.words, &self.le, s, |a, b| a <= b);
        set_bits(&mut self.words, &self.eq, s, |a, b| a == b);
        for (atom, bit) in &self.general {
            let v = u64::from(atom.eval(s));
            let w = &mut self.words[bit >> 6];
            *w = (*w & !(1 << (bit & 63))) | (v << (bit & 63));
        }
    }

    /// The current frame's atom values as a bitset (bit `i` = atom `i`).
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The interned atoms.
    pub fn atoms(&self) -> &[Atom] {
        &self.atoms
    }
}

/// Bit `i` of a bitset (false beyond its end).
#[inline]
pub fn bit(words: &[u64], i: usize) -> bool {
    words.get(i >> 6).is_some_and(|w| (w >> (i & 63)) & 1 == 1)
}
