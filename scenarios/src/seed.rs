//! Per-run seed derivation.
//!
//! `avguard simulate --seed S --runs N` gives run `i` the seed `run_seed(S, i)`. The derivation is a fixed
//! mixing function (SplitMix64's finaliser) so that neighbouring run indices get unrelated ChaCha8 streams and
//! the mapping never changes between versions: a run id names the same run forever.

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The seed of run `run_index` of a batch started with `base_seed`. Stable across versions.
pub fn run_seed(base_seed: u64, run_index: u64) -> u64 {
    mix(base_seed ^ mix(run_index.wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

/// SplitMix64 finaliser: a bijection on u64 with good avalanche.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of one run.
pub(crate) fn rng_for(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

#[cfg(test)]
mod tests;
