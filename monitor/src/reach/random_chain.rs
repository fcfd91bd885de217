//! Random chains for the reachability tests and the monitor benchmark (the bench includes this file by
//! path, so both draw the same chains from the same generator).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random chain in CSR form and its absorbing target states.
pub struct RandomChain {
    /// Row `s` is `cols[row_ptr[s]..row_ptr[s + 1]]`.
    pub row_ptr: Vec<usize>,
    /// Successor states.
    pub cols: Vec<u32>,
    /// Transition probabilities (each row sums to 1).
    pub probs: Vec<f64>,
    /// True on the absorbing target ("unsafe") states.
    pub target: Vec<bool>,
}

/// `n` states with about `deg` random successors each (weights uniform in [0.05, 1), normalised); one state
/// in `one_in` on average is an absorbing target and as many are absorbing safe traps.
pub fn random_chain(n: usize, deg: usize, one_in: u32, seed: u64) -> RandomChain {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0);
    let (mut cols, mut probs) = (Vec::with_capacity(n * deg), Vec::with_capacity(n * deg));
    let mut target = vec![false; n];
    let mut succ: Vec<u32> = Vec::new();
    for (s, is_target) in target.iter_mut().enumerate() {
        let kind = rng.random_range(0..one_in);
        succ.clear();
        if kind == 0 {
            *is_target = true;
            succ.push(s as u32);
        } else if kind == 1 {
            succ.push(s as u32); // a safe trap
        } else {
            succ.extend((0..deg).map(|_| rng.random_range(0..n as u32)));
        }
        succ.sort_unstable();
        succ.dedup();
        let w: Vec<f64> = succ.iter().map(|_| rng.random_range(0.05..1.0)).collect();
        let total: f64 = w.iter().sum();
        cols.extend(&succ);
        probs.extend(w.iter().map(|x| x / total));
        row_ptr.push(cols.len());
    }
    RandomChain {
        row_ptr,
        cols,
        probs,
        target,
    }
}
