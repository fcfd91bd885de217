//! The evaluator-wide atom table: every distinct atom of every law is evaluated at most once per frame.
//!
//! Values are cached with a frame stamp instead of being cleared each frame, so a law skipped by the
//! relevance check costs nothing for the atoms it does not read.

use std::collections::HashMap;

use crate::lang::atom::Atom;
use crate::signals::Signals;

/// Interned atoms with per-frame cached values.
#[derive(Debug, Clone, Default)]
pub struct AtomCache {
    atoms: Vec<Atom>,
    index: HashMap<Atom, usize>,
    values: Vec<bool>,
    stamps: Vec<u64>,
    /// The current frame's stamp (starts at 1 so that a fresh entry, stamp 0, is stale).
    stamp: u64,
}

impl AtomCache {
    /// The index of `atom`, adding it if new.
    pub fn intern(&mut self, atom: &Atom) -> usize {
        if let Some(&i) = self.index.get(atom) {
            return i;
        }
        self.atoms.push(atom.clone());
        self.values.push(false);
        self.stamps.push(0);
        self.index.insert(atom.clone(), self.atoms.len() - 1);
        self.atoms.len() - 1
    }

    /// Starts a new frame: every cached value becomes stale.
    #[inline]
    pub fn next_frame(&mut self) {
        self.stamp += 1;
    }

    /// The value of atom `i` on `s`, computed once per frame.
    #[inline]
    pub fn get(&mut self, i: usize, s: &Signals) -> bool {
        if self.stamps[i] != self.stamp {
            self.stamps[i] = self.stamp;
            self.values[i] = self.atoms[i].eval(s);
        }
        self.values[i]
    }

    /// The interned atoms.
    pub fn atoms(&self) -> &[Atom] {
        &self.atoms
    }
}
