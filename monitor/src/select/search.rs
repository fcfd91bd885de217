//! Greedy forward selection of a property's predicates, each step scored by k-fold cross-validation over
//! runs (see [`super::criterion`]).
//!
//! **One evaluation** (a predicate set S plus one candidate c) works on segments: every run's current
//! segmentation under S (maximal stretches of constant S-state) is merged with c's toggles, giving the
//! run's abstract trace under S ∪ {c} as `(first frame, state)` pairs. One pass over those counts, per
//! fold, self-loops (`length − 1` per segment) and transitions (one per segment boundary, plus the step
//! into `done` or the unsafe state). Per fold, the chain learned from the *other* folds is built exactly
//! as [`crate::estimate::build_dtmc`] builds it under [`crate::av::SmoothingScope::Observed`]: over the states
//! observed in training (a few hundred at most, however many predicates), with all unsafe states merged
//! into one absorbing state, solved by [`crate::reach::eventually`]; a held-out state never observed in
//! training gets the risk that smoothing gives it in the full model, `(1 + Σ x_v) / (2 + m)` over its m
//! observed one-predicate neighbours v (its row is α on itself, on `done`, on its unsafe neighbour and on
//! each of those). The held-out runs are then scored segment by segment.
//!
//! The only difference from the model `avguard learn` then builds is the domain's validity rules, which
//! the search does not apply: observed transitions are physically possible, and smoothing here only
//! reaches observed states, so the two agree unless the rules reject an observed transition (counted in
//! [`crate::Counts::n_invalid`]); a test checks the agreement.
//!
//! Folds are drawn once per property, stratified (violating and safe runs are dealt out separately), from
//! a ChaCha8 stream seeded with the search seed: the result is a pure function of the data and the seed.
//! Candidates of one step are scored in parallel; the best (ties: the earlier in pool order) joins S when
//! it improves the score by at least [`SearchConfig::min_gain`].
//!
//! Greedy selection is myopic: from nothing it can settle on a set that scores below what the declared
//! predicates or the reactive rule's literals already score. [`greedy_multi`] therefore also starts from
//! given sets (taken whole, then extended greedily) and keeps the search whose final cross-validated score
//! is highest — a choice made on the training runs, like every step.
//!
//! The pool's thresholds sit at a few coarse quantiles of each signal, so the cut that separates
//! violations best usually falls between two of them. With a [`Refine`] each step, once its best candidate
//! is found, also scores that candidate's signal at a finer grid of cuts in its place and keeps the best
//! cut ([`Refined`]); [`greedy_multi`] runs every start both without and with refinement, since a better
//! early step can still lead the myopic search to a lower final score, and keeps the highest.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::criterion::{level_for_budget, utility, BUDGETS};
use super::data::{PropertyData, RunRecord, Toggles};
use crate::dtmc::Dtmc;
use crate::StateId;

/// Options of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// Most predicates, the unsafe one included (at most [`crate::spec::MAX_PROPERTY_PREDICATES`]).
    pub max_predicates: usize,
    /// Number of cross-validation folds (≥ 2).
    pub folds: usize,
    /// Seed of the fold assignment.
    pub seed: u64,
    /// Laplace α of the chains (as in the final model).
    pub alpha: f64,
    /// Smallest score improvement for which a predicate is added.
    pub min_gain: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            max_predicates: crate::spec::MAX_PROPERTY_PREDICATES,
            folds: 5,
            seed: 0,
            alpha: 1.0,
            min_gain: 0.002,
        }
    }
}

/// A target id for "the run finished safely".
const DONE: u32 = u32::MAX;
/// A target id for "some unsafe state".
const UNSAFE: u32 = u32::MAX - 1;
/// No compact index.
const NONE: u32 = u32::MAX;

/// Deals runs into `k` folds, violating and safe runs separately, in a seeded random order.
pub fn assign_folds(data: &PropertyData, k: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut fold = vec![0u8; data.runs.len()];
    for violated in [true, false] {
        let mut idx: Vec<usize> = (0..data.runs.len())
            .filter(|&i| data.runs[i].violated == violated)
            .collect();
        idx.shuffle(&mut rng);
        for (j, i) in idx.into_iter().enumerate() {
            fold[i] = (j % k) as u8;
        }
    }
    fold
}

/// Every run's segmentation under the current predicate set: `(first frame, state)` per segment.
#[derive(Debug, Clone, Default)]
pub struct Segments {
    offsets: Vec<usize>,
    segs: Vec<(u32, StateId)>,
}

impl Segments {
    /// The segmentation under the unsafe predicate alone.
    pub fn initial(data: &PropertyData) -> Segments {
        let mut s = Segments {
            offsets: vec![0],
            segs: Vec::new(),
        };
        for r in 0..data.runs.len() {
            merge_run(
                &[(0, 0)],
                data.runs[r].n,
                &data.unsafe_toggles,
                r,
                0,
                &mut s.segs,
            );
            s.offsets.push(s.segs.len());
        }
        s
    }

    /// Run `r`'s segments.
    pub fn run(&self, r: usize) -> &[(u32, StateId)] {
        &self.segs[self.offsets[r]..self.offsets[r + 1]]
    }

    /// The segmentation with candidate `t` added as bit `bit`.
    pub fn with(&self, data: &PropertyData, t: &Toggles, bit: u32) -> Segments {
        let mut s = Segments {
            offsets: Vec::with_capacity(self.offsets.len()),
            segs: Vec::with_capacity(self.segs.len() * 2),
        };
        s.offsets.push(0);
        for r in 0..data.runs.len() {
            merge_run(self.run(r), data.runs[r].n, t, r, bit, &mut s.segs);
            s.offsets.push(s.segs.len());
        }
        s
    }

    /// Run `r`'s state at every kept frame.
    pub fn frame_states(&self, r: usize, n: u32) -> Vec<StateId> {
        let segs = self.run(r);
        let mut out = Vec::with_capacity(n as usize);
        for (i, &(start, st)) in segs.iter().enumerate() {
            let end = segs.get(i + 1).map_or(n, |s| s.0);
            out.extend(std::iter::repeat_n(st, (end - start) as usize));
        }
        out
    }
}

/// Appends run `r`'s segments under `segs` ∪ {candidate `t` as bit `bit`} to `out`.
fn merge_run(
    segs: &[(u32, StateId)],
    n: u32,
    t: &Toggles,
    r: usize,
    bit: u32,
    out: &mut Vec<(u32, StateId)>,
) {
    let (mut v, toggles) = t.run(r);
    let mut ti = 0;
    for (i, &(start, st)) in segs.iter().enumerate() {
        let end = segs.get(i + 1).map_or(n, |s| s.0);
        while ti < toggles.len() && toggles[ti] <= start {
            v = !v;
            ti += 1;
        }
        out.push((start, st | StateId::from(v) << bit));
        while ti < toggles.len() && toggles[ti] < end {
            v = !v;
            out.push((toggles[ti], st | StateId::from(v) << bit));
            ti += 1;
        }
    }
}

/// Reusable buffers of one worker.
#[derive(Debug, Default)]
struct Workspace {
    merged: Vec<(u32, StateId)>,
    offsets: Vec<usize>,
    pair_index: FxHashMap<u64, u32>,
    pair_keys: Vec<u64>,
    pair_counts: Vec<u32>,
    self_counts: Vec<u32>,
    obs_index: Vec<u32>,
    observed: Vec<StateId>,
    triplets: Vec<(u32, u32, f64)>,
    risk: Vec<f64>,
}

/// The scoring context of one property.
#[derive(Debug)]
pub struct Scorer<'a> {
    data: &'a PropertyData,
    records: &'a [RunRecord],
    folds: Vec<u8>,
    k: usize,
    alpha: f64,
}

impl<'a> Scorer<'a> {
    /// A scorer of `data` (compressed from `records`) with `cfg`'s folds and α.
    pub fn new(data: &'a PropertyData, records: &'a [RunRecord], cfg: &SearchConfig) -> Scorer<'a> {
        let k = cfg.folds.max(2);
        Scorer {
            data,
            records,
            folds: assign_folds(data, k, cfg.seed),
            k,
            alpha: cfg.alpha,
        }
    }

    /// The cross-validated score of `segs` with `candidate` (if any) added as bit `n_bits`; `n_bits` is
    /// the number of predicates in `segs`.
    pub fn score(&self, segs: &Segments, candidate: Option<&Toggles>, n_bits: u32) -> f64 {
        let mut ws = Workspace::default();
        self.score_with(&mut ws, segs, candidate, n_bits)
    }

    fn score_with(
        &self,
        ws: &mut Workspace,
        segs: &Segments,
        candidate: Option<&Toggles>,
        n_bits: u32,
    ) -> f64 {
        let total_bits = n_bits + u32::from(candidate.is_some());
        self.count(ws, segs, candidate, n_bits);
        self.cross_validate(ws, total_bits)
    }

    /// Merges the candidate into every run's trace (into `ws.merged`) and counts self-loops and
    /// transitions per fold.
    fn count(&self, ws: &mut Workspace, segs: &Segments, candidate: Option<&Toggles>, n_bits: u32) {
        let data = self.data;
        let total_bits = n_bits + u32::from(candidate.is_some());
        let n_states = 1usize << total_bits;
        let k = self.k;
        // 1. The traces under the candidate set.
        ws.merged.clear();
        ws.offsets.clear();
        ws.offsets.push(0);
        for r in 0..data.runs.len() {
            match candidate {
                Some(t) => merge_run(segs.run(r), data.runs[r].n, t, r, n_bits, &mut ws.merged),
                None => ws.merged.extend_from_slice(segs.run(r)),
            }
            ws.offsets.push(ws.merged.len());
        }
        // 2. Counts per fold.
        ws.pair_index.clear();
        ws.pair_keys.clear();
        ws.pair_counts.clear();
        ws.self_counts.clear();
        ws.self_counts.resize(n_states * k, 0);
        for (r, run) in data.runs.iter().enumerate() {
            let f = self.folds[r] as usize;
            let segs = &ws.merged[ws.offsets[r]..ws.offsets[r + 1]];
            let last = segs.len() - 1;
            for (i, &(start, st)) in segs.iter().enumerate() {
                if run.violated && i == last {
                    break;
                }
                let end = segs.get(i + 1).map_or(run.n, |s| s.0);
                ws.self_counts[st as usize * k + f] += end - start - 1;
                let to = if i == last {
                    DONE
                } else if run.violated && i + 1 == last {
                    UNSAFE
                } else {
                    segs[i + 1].1
                };
                let key = u64::from(st) << 32 | u64::from(to);
                let next = ws.pair_keys.len() as u32;
                let e = *ws.pair_index.entry(key).or_insert(next);
                if e == next {
                    ws.pair_keys.push(key);
                    ws.pair_counts.resize(ws.pair_counts.len() + k, 0);
                }
                ws.pair_counts[e as usize * k + f] += 1;
            }
        }
    }

    /// Per fold: learns on the others and scores the fold; returns the criterion.
    fn cross_validate(&self, ws: &mut Workspace, total_bits: u32) -> f64 {
        let data = self.data;
        let k = self.k;
        let mut total = 0.0;
        let mut n_violating = 0usize;
        let mut safe_max: Vec<f64> = Vec::new();
        let mut leads: Vec<Vec<(f64, f64)>> = Vec::new();
        for f in 0..k {
            self.fit_fold(ws, f, total_bits);
            safe_max.clear();
            leads.clear();
            for (r, run) in data.runs.iter().enumerate() {
                if self.folds[r] as usize != f {
                    continue;
                }
                let segs = &ws.merged[ws.offsets[r]..ws.offsets[r + 1]];
                let t = &self.records[run.record].t;
                let usable = if run.violated {
                    &segs[..segs.len() - 1]
                } else {
                    segs
                };
                if run.violated {
                    // The running maximum's increases: (risk, time first reached).
                    let t_viol = t[run.n as usize - 1];
                    let mut env: Vec<(f64, f64)> = Vec::new();
                    for &(start, st) in usable {
                        let x = self.risk_of(ws, st, total_bits);
                        if env.last().is_none_or(|&(m, _)| x > m) {
                            env.push((x, t_viol - t[start as usize]));
                        }
                    }
                    leads.push(env);
                } else {
                    let m = usable
                        .iter()
                        .map(|&(_, st)| self.risk_of(ws, st, total_bits))
                        .fold(f64::NEG_INFINITY, f64::max);
                    safe_max.push(m);
                }
            }
            safe_max.sort_by(|a, b| b.total_cmp(a));
            n_violating += leads.len();
            for &b in &BUDGETS {
                let level = level_for_budget(&safe_max, b);
                for env in &leads {
                    let lead = env.iter().find(|&&(x, _)| x > level).map(|&(_, l)| l);
                    total += utility(lead);
                }
            }
        }
        if n_violating == 0 {
            return 0.0;
        }
        total / (n_violating * BUDGETS.len()) as f64
    }

    /// Builds and solves the chain of the folds other than `f` into `ws.risk` (compact) and
    /// `ws.obs_index`.
    fn fit_fold(&self, ws: &mut Workspace, f: usize, n_bits: u32) {
        let k = self.k;
        let n_states = 1usize << n_bits;
        ws.obs_index.clear();
        ws.obs_index.resize(n_states, NONE);
        ws.observed.clear();
        let train = |counts: &[u32], e: usize| -> u32 {
            counts[e * k..(e + 1) * k]
                .iter()
                .enumerate()
                .filter(|&(g, _)| g != f)
                .map(|(_, &c)| c)
                .sum()
        };
        // Observed: sources of a training transition (every non-terminal visited state is one).
        for (e, &key) in ws.pair_keys.iter().enumerate() {
            let from = (key >> 32) as usize;
            if ws.obs_index[from] == NONE && train(&ws.pair_counts, e) > 0 {
                ws.obs_index[from] = 0;
            }
        }
        for s in 0..n_states {
            if ws.obs_index[s] == 0 {
                ws.obs_index[s] = ws.observed.len() as u32;
                ws.observed.push(s as StateId);
            }
        }
        let n_obs = ws.observed.len() as u32;
        let (unsafe_node, done_node) = (n_obs, n_obs + 1);
        ws.triplets.clear();
        for (e, &key) in ws.pair_keys.iter().enumerate() {
            let w = train(&ws.pair_counts, e);
            if w == 0 {
                continue;
            }
            let from = ws.obs_index[(key >> 32) as usize];
            let to = match (key & 0xFFFF_FFFF) as u32 {
                DONE => done_node,
                UNSAFE => unsafe_node,
                s => ws.obs_index[s as usize],
            };
            ws.triplets.push((from, to, f64::from(w)));
        }
        let alpha = self.alpha;
        for (i, &s) in ws.observed.iter().enumerate() {
            let i = i as u32;
            let w = train(&ws.self_counts, s as usize);
            if w > 0 {
                ws.triplets.push((i, i, f64::from(w)));
            }
            if alpha > 0.0 {
                ws.triplets.push((i, i, alpha));
                ws.triplets.push((i, unsafe_node, alpha));
                ws.triplets.push((i, done_node, alpha));
                for b in 1..n_bits {
                    let v = ws.obs_index[(s ^ (1 << b)) as usize];
                    if v != NONE {
                        ws.triplets.push((i, v, alpha));
                    }
                }
            }
        }
        ws.triplets.push((unsafe_node, unsafe_node, 1.0));
        ws.triplets.push((done_node, done_node, 1.0));
        ws.triplets.sort_unstable_by_key(|t| (t.0, t.1));
        let n = n_obs as usize + 2;
        let mut row_ptr = vec![0usize; n + 1];
        let mut cols: Vec<StateId> = Vec::with_capacity(ws.triplets.len());
        let mut probs: Vec<f64> = Vec::with_capacity(ws.triplets.len());
        let mut row_start = 0;
        for (j, &(from, to, w)) in ws.triplets.iter().enumerate() {
            if j > 0 && ws.triplets[j - 1].0 == from && ws.triplets[j - 1].1 == to {
                if let Some(p) = probs.last_mut() {
                    *p += w;
                }
            } else {
                cols.push(to);
                probs.push(w);
            }
            row_ptr[from as usize + 1] = cols.len();
            let next_from = ws.triplets.get(j + 1).map(|t| t.0);
            if next_from != Some(from) {
                let sum: f64 = probs[row_start..].iter().sum();
                for p in &mut probs[row_start..] {
                    *p /= sum;
                }
                row_start = probs.len();
            }
        }
        for i in 1..=n {
            row_ptr[i] = row_ptr[i].max(row_ptr[i - 1]);
        }
        let mut unsafe_mask = vec![false; n];
        unsafe_mask[unsafe_node as usize] = true;
        ws.risk = match Dtmc::try_new(n, row_ptr, cols, probs) {
            Ok(dtmc) => crate::reach::eventually(&dtmc, &unsafe_mask),
            // Every row has its self-loop and sums to one by construction; an error here would be a bug in
            // this function, and risk 1 everywhere scores the candidate at its worst rather than crash.
            Err(_) => vec![1.0; n],
        };
    }

    /// P(F unsafe) of every state `0..2^(|set| + 1)` under the predicates `set` (pool indices, in bit
    /// order after the unsafe predicate), learned from every run: what the built model's table must say.
    pub fn full_data_risks(&self, set: &[usize]) -> Vec<f64> {
        let mut segs = Segments::initial(self.data);
        for (i, &c) in set.iter().enumerate() {
            segs = segs.with(self.data, &self.data.candidates[c], i as u32 + 1);
        }
        let bits = set.len() as u32 + 1;
        let mut ws = Workspace::default();
        self.count(&mut ws, &segs, None, bits);
        // No run is in fold `k`, so that "held-out fold" leaves every run in training.
        self.fit_fold(&mut ws, self.k, bits);
        (0..1u32 << bits)
            .map(|s| self.risk_of(&ws, s, bits))
            .collect()
    }

    /// The fold chain's risk of state `s` (see the module docs for states not observed in training).
    fn risk_of(&self, ws: &Workspace, s: StateId, n_bits: u32) -> f64 {
        let i = ws.obs_index[s as usize];
        if i != NONE {
            return ws.risk[i as usize];
        }
        let (mut sum, mut m) = (1.0, 2.0);
        for b in 1..n_bits {
            let v = ws.obs_index[(s ^ (1 << b)) as usize];
            if v != NONE {
                sum += ws.risk[v as usize];
                m += 1.0;
            }
        }
        sum / m
    }
}

/// One step of a search: the predicate added and the score after adding it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index of the candidate (`None` for the start: the unsafe predicate alone): a pool index below
    /// `data.candidates.len()`, else the refined candidate `index − data.candidates.len()` of the search's
    /// [`Refined`] list.
    pub candidate: Option<usize>,
    /// Cross-validated score with it.
    pub score: f64,
}

/// Finer versions of a pool candidate for [`greedy_multi`]: for a threshold atom `signal<=c`, the toggles
/// of the same signal cut at other points, in a fixed order (empty for any other candidate).
pub type Refine<'r> = &'r (dyn Fn(usize) -> Vec<Toggles> + Sync);

/// A refined candidate a search chose: its pool candidate, which of that candidate's alternatives (index
/// into what [`Refine`] returned for it), and the alternative's toggles.
#[derive(Debug, Clone)]
pub struct Refined {
    /// The pool candidate it refines.
    pub of: usize,
    /// Which alternative.
    pub alternative: usize,
    /// Its toggles.
    pub toggles: Toggles,
}

/// Greedy forward selection over `data.candidates`; returns the steps taken (the first is the start) and
/// the final segmentation.
pub fn greedy(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
) -> (Vec<Step>, Segments) {
    greedy_from(data, records, cfg, &[])
}

/// Greedy forward selection that first takes the candidates `start` (pool indices, in order; constant
/// ones and repeats skipped), each recorded as a step with its score whatever it is, and then continues
/// as [`greedy`] does.
pub fn greedy_from(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    start: &[usize],
) -> (Vec<Step>, Segments) {
    let (steps, segs, _) = greedy_refined(data, records, cfg, start, None);
    (steps, segs)
}

/// [`greedy_from`], where each step's best pool candidate may be replaced by the best of its finer
/// versions (`refine`) when one of those scores higher: the step's score is that of the better cut.
fn greedy_refined(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    start: &[usize],
    refine: Option<Refine<'_>>,
) -> (Vec<Step>, Segments, Vec<Refined>) {
    let scorer = Scorer::new(data, records, cfg);
    let mut segs = Segments::initial(data);
    let mut chosen: Vec<usize> = Vec::new();
    let mut refined: Vec<Refined> = Vec::new();
    let mut score = scorer.score(&segs, None, 1);
    let mut steps = vec![Step {
        candidate: None,
        score,
    }];
    let max_predicates = cfg.max_predicates.min(crate::spec::MAX_PROPERTY_PREDICATES);
    for &c in start {
        let usable = data.candidates.get(c).is_some_and(|t| !t.is_constant());
        if !usable || chosen.contains(&c) || chosen.len() + 1 >= max_predicates {
            continue;
        }
        let n_bits = chosen.len() as u32 + 1;
        segs = segs.with(data, &data.candidates[c], n_bits);
        chosen.push(c);
        score = scorer.score(&segs, None, n_bits + 1);
        steps.push(Step {
            candidate: Some(c),
            score,
        });
    }
    let usable: Vec<usize> = (0..data.candidates.len())
        .filter(|&c| !data.candidates[c].is_constant())
        .collect();
    // The better of two (score, index) pairs: the higher score, ties to the lower index.
    let better = |a: (f64, usize), b: (f64, usize)| {
        if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
            b
        } else {
            a
        }
    };
    while chosen.len() + 1 < max_predicates {
        let n_bits = chosen.len() as u32 + 1;
        let best = usable
            .par_iter()
            .filter(|c| !chosen.contains(c))
            .map_init(Workspace::default, |ws, &c| {
                (
                    scorer.score_with(ws, &segs, Some(&data.candidates[c]), n_bits),
                    c,
                )
            })
            .reduce_with(better);
        let Some((mut s, c)) = best else { break };
        // The finer cuts of the chosen threshold, scored in its place.
        let mut finer: Option<(usize, Toggles)> = None;
        if let Some(refine) = refine {
            let alternatives = refine(c);
            let best_alt = alternatives
                .par_iter()
                .enumerate()
                .filter(|(_, t)| !t.is_constant())
                .map_init(Workspace::default, |ws, (j, t)| {
                    (scorer.score_with(ws, &segs, Some(t), n_bits), j)
                })
                .reduce_with(better);
            if let Some((sa, j)) = best_alt.filter(|&(sa, _)| sa > s) {
                s = sa;
                finer = Some((j, alternatives[j].clone()));
            }
        }
        if s < score + cfg.min_gain {
            break;
        }
        let index = match finer {
            Some((alternative, toggles)) => {
                segs = segs.with(data, &toggles, n_bits);
                refined.push(Refined {
                    of: c,
                    alternative,
                    toggles,
                });
                data.candidates.len() + refined.len() - 1
            }
            None => {
                segs = segs.with(data, &data.candidates[c], n_bits);
                c
            }
        };
        chosen.push(index);
        score = s;
        steps.push(Step {
            candidate: Some(index),
            score,
        });
    }
    (steps, segs, refined)
}

/// [`greedy`] from nothing and [`greedy_from`] each of `starts` (empty and repeated starts skipped), every
/// step's threshold refined by `refine` when given: the search with the highest final cross-validated
/// score (ties: the earlier one), with the refined candidates it chose.
pub fn greedy_multi(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    starts: &[&[usize]],
    refine: Option<Refine<'_>>,
) -> (Vec<Step>, Segments, Vec<Refined>) {
    let final_score = |steps: &[Step]| steps.last().map_or(f64::NEG_INFINITY, |s| s.score);
    let mut tried: Vec<&[usize]> = vec![&[]];
    let mut best = greedy_refined(data, records, cfg, &[], None);
    let mut consider = |next: (Vec<Step>, Segments, Vec<Refined>)| {
        if final_score(&next.0) > final_score(&best.0) {
            best = next;
        }
    };
    if refine.is_some() {
        consider(greedy_refined(data, records, cfg, &[], refine));
    }
    for &start in starts {
        if tried.contains(&start) {
            continue;
        }
        tried.push(start);
        consider(greedy_refined(data, records, cfg, start, None));
        if refine.is_some() {
            consider(greedy_refined(data, records, cfg, start, refine));
        }
    }
    best
}

/// The score of a given predicate set (pool indices, in bit order after the unsafe predicate) and its
/// segmentation: how the fixed abstraction fares under the same criterion.
pub fn score_set(
    data: &PropertyData,
    records: &[RunRecord],
    cfg: &SearchConfig,
    set: &[usize],
) -> (f64, Segments) {
    let scorer = Scorer::new(data, records, cfg);
    let mut segs = Segments::initial(data);
    for (i, &c) in set.iter().enumerate() {
        segs = segs.with(data, &data.candidates[c], i as u32 + 1);
    }
    let score = scorer.score(&segs, None, set.len() as u32 + 1);
    (score, segs)
}
