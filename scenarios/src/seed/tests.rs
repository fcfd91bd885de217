use super::*;
use rand::Rng;

#[test]
fn run_seeds_are_distinct_and_depend_on_both_inputs() {
    let mut seeds: Vec<u64> = (0..1000).map(|i| run_seed(42, i)).collect();
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), 1000);
    assert_ne!(run_seed(1, 0), run_seed(0, 1));
    assert_eq!(run_seed(7, 3), run_seed(7, 3));
}

#[test]
fn same_seed_same_stream() {
    let (mut a, mut b) = (rng_for(9), rng_for(9));
    let xa: Vec<u64> = (0..16).map(|_| a.random()).collect();
    let xb: Vec<u64> = (0..16).map(|_| b.random()).collect();
    assert_eq!(xa, xb);
}
