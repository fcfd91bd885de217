//! Many atom bits copied into one integer at once: an abstraction's state from the atoms its predicates
//! are.
//!
//! A state's bits are atoms of the evaluator's table (possibly negated). Atoms interned one after another
//! sit next to each other in the table's bitset, and an abstraction's predicates are mostly interned in
//! their own order, so the bits of a state come in runs: [`AtomGather`] copies each run with one shift,
//! one mask and one xor instead of bit by bit.

use super::AtomIndex;

/// A run of atom bits: bits `shift .. shift + len` of word `word` copied to state bits `dst .. dst + len`,
/// each flipped where `flip` has a 1 (bit 0 of `flip` is state bit `dst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    word: usize,
    shift: u32,
    len: u32,
    dst: u32,
    flip: u64,
}

/// Where each bit of a state comes from: built once, read with [`super::Verdicts::gather`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AtomGather {
    runs: Vec<Run>,
}

/// The mask of the `len` low bits (`len ≤ 64`).
fn low_bits(len: u32) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

impl AtomGather {
    /// State bit `bit` is atom `atom`, negated when `negated`. Bits must be below 64 and distinct.
    pub fn new(bits: &[(AtomIndex, bool, u32)]) -> AtomGather {
        let mut sorted: Vec<(usize, bool, u32)> = bits
            .iter()
            .filter(|&&(_, _, b)| b < 64)
            .map(|&(a, n, b)| (a.0, n, b))
            .collect();
        sorted.sort_unstable_by_key(|&(_, _, b)| b);
        let mut runs: Vec<Run> = Vec::new();
        for (atom, negated, dst) in sorted {
            let (word, shift) = (atom >> 6, (atom & 63) as u32);
            let flip = u64::from(negated);
            match runs.last_mut() {
                // The next atom of the same word lands on the next state bit: extend the run.
                Some(r) if r.word == word && r.shift + r.len == shift && r.dst + r.len == dst => {
                    r.flip |= flip << r.len;
                    r.len += 1;
                }
                _ => runs.push(Run {
                    word,
                    shift,
                    len: 1,
                    dst,
                    flip,
                }),
            }
        }
        AtomGather { runs }
    }

    /// The state bits from the atom bitset `words` (an atom beyond its end reads as false, as
    /// [`super::Verdicts::atom`] does).
    #[inline]
    pub(super) fn gather(&self, words: &[u64]) -> u64 {
        let mut state = 0u64;
        for r in &self.runs {
            let w = words.get(r.word).copied().unwrap_or(0);
            state |= (((w >> r.shift) & low_bits(r.len)) ^ r.flip) << r.dst;
        }
        state
    }

    /// The same, bit by bit (the definition the runs must agree with).
    #[cfg(test)]
    pub(super) fn gather_bitwise(bits: &[(AtomIndex, bool, u32)], words: &[u64]) -> u64 {
        use super::atoms::bit;
        bits.iter()
            .filter(|&&(_, _, b)| b < 64)
            .fold(0, |s, &(a, n, b)| s | u64::from(bit(words, a.0) != n) << b)
    }

    /// Number of runs.
    #[cfg(test)]
    pub(super) fn n_runs(&self) -> usize {
        self.runs.len()
    }
}

#[cfg(test)]
mod tests;
