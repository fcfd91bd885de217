//! The evaluator-wide atom table: every distinct atom of every law is evaluated exactly once per frame,
//! into a bitset that the compiled laws read.
//!
//! Evaluating all atoms eagerly is cheaper than caching them lazily: almost every atom is "signal compared
//! with a constant", and each of the six comparisons gets a branch-free loop over a flat array. Within a
//! loop the atoms are grouped by the 64-bit word their bits live in: a word's bits are gathered in a
//! register and stored once, so a frame costs about one load, one compare and one shift-or per atom with
//! no chain of read-modify-writes through memory. Atoms with arithmetic terms take the slower general path.

use std::collections::HashMap;
use std::ops::Range;

use crate::lang::atom::{Atom, Cmp};
use crate::signals::{Signal, Signals};

/// `signal cmp constant`, flattened.
#[derive(Debug, Clone, Copy)]
struct Simple {
    signal: Signal,
    constant: f64,
    bit: usize,
}

/// The atoms of one comparison whose bits share word `word`: `atoms` indexes [`Simples::atoms`], `mask`
/// has their bits.
#[derive(Debug, Clone)]
struct WordGroup {
    word: usize,
    mask: u64,
    atoms: Range<usize>,
}

/// The `signal cmp constant` atoms of one comparison, in bit order, grouped by word.
#[derive(Debug, Clone, Default)]
struct Simples {
    atoms: Vec<Simple>,
    groups: Vec<WordGroup>,
}

impl Simples {
    /// Adds an atom; its bit is above every bit added before (atoms are numbered in interning order).
    fn push(&mut self, a: Simple) {
        let (word, bit_mask) = (a.bit >> 6, 1u64 << (a.bit & 63));
        let i = self.atoms.len();
        self.atoms.push(a);
        match self.groups.last_mut() {
            Some(g) if g.word == word => {
                g.mask |= bit_mask;
                g.atoms.end = i + 1;
            }
            _ => self.groups.push(WordGroup {
                word,
                mask: bit_mask,
                atoms: i..i + 1,
            }),
        }
    }

    /// Writes every atom's value at `s` into `words`.
    #[inline]
    fn eval(&self, words: &mut [u64], s: &Signals, cmp: impl Fn(f64, f64) -> bool) {
        for g in &self.groups {
            let mut acc = 0u64;
            // `g.atoms` lies within `self.atoms` (see `push`).
            for a in &self.atoms[g.atoms.clone()] {
                acc |= u64::from(cmp(s.get(a.signal), a.constant)) << (a.bit & 63);
            }
            // `g.word < words.len()`: `words` grows with every interned atom (see `intern`).
            let w = &mut words[g.word];
            *w = (*w & !g.mask) | acc;
        }
    }
}

/// Interned atoms and their values at the current frame.
#[derive(Debug, Clone, Default)]
pub struct AtomTable {
    atoms: Vec<Atom>,
    index: HashMap<Atom, usize>,
    /// The `signal cmp constant` atoms, one list per comparison (in [`Cmp`] order: `<`, `<=`, `>`, `>=`,
    /// `==`, `!=`).
    simple: [Simples; 6],
    /// Atoms that are not `signal cmp constant`, with their bit.
    general: Vec<(Atom, usize)>,
    /// Bit `i` of the set is atom `i`'s value at the current frame.
    words: Vec<u64>,
}

fn cmp_slot(cmp: Cmp) -> usize {
    match cmp {
        Cmp::Lt => 0,
        Cmp::Le => 1,
        Cmp::Gt => 2,
        Cmp::Ge => 3,
        Cmp::Eq => 4,
        Cmp::Ne => 5,
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
            Some((signal, cmp, constant)) => self.simple[cmp_slot(cmp)].push(Simple {
                signal,
                constant,
                bit,
            }),
            None => self.general.push((atom.clone(), bit)),
        }
        bit
    }

    /// Evaluates every atom on `s` (the values of the previous frame are overwritten).
    #[inline]
    pub fn eval_all(&mut self, s: &Signals) {
        let [lt, le, gt, ge, eq, ne] = &self.simple;
        lt.eval(&mut self.words, s, |a, b| a < b);
        le.eval(&mut self.words, s, |a, b| a <= b);
        gt.eval(&mut self.words, s, |a, b| a > b);
        ge.eval(&mut self.words, s, |a, b| a >= b);
        eq.eval(&mut self.words, s, |a, b| a == b);
        ne.eval(&mut self.words, s, |a, b| a != b);
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

#[cfg(test)]
mod tests;
