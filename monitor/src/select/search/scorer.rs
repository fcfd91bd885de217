//! The cross-validated score of a predicate set: per fold, the chain learned from the other folds and
//! the held-out runs' warnings under it (see the parent module's docs and [`super::super::criterion`]).

use rustc_hash::FxHashMap;

use super::super::criterion::{add_fold_utility, push_envelope, BUDGETS};
use super::super::data::{PropertyData, RunRecord, Toggles};
use super::segments::{merge_run, Segments};
use super::{assign_folds, SearchConfig};
use crate::dtmc::Dtmc;
use crate::StateId;

/// A target id for "the run finished safely".
const DONE: u32 = u32::MAX;
/// A target id for "some unsafe state".
const UNSAFE: u32 = u32::MAX - 1;
/// No compact index.
const NONE: u32 = u32::MAX;

/// Reusable buffers of one worker.
#[derive(Debug, Default)]
pub(super) struct Workspace {
    merged: Vec<(u32, StateId)>,
    offsets: Vec<usize>,
    pair_index: FxHashMap<u64, u32>,
    pair_keys: Vec<u64>,
    pair_counts: Vec<u32>,
    self_counts: Vec<u32>,
    obs_index: Vec<u32>,
    observed: Vec<StateId>,
    triplets: Vec<(u32, u32, f64)>,
    /// The triplets' (target, weight) grouped by source.
    entries: Vec<(u32, f64)>,
    risk: Vec<f64>,
    /// The observed states' risks mixed with their frame share (only with a frame-share weight).
    mixed: Vec<f64>,
    /// Per state and fold: frames, and frames of violating runs (only with a frame-share weight).
    share_frames: Vec<u32>,
    share_violating: Vec<u32>,
}

/// Per fold, and last with no run held out, the risk of every state of a predicate set under that fold's
/// chain: under hierarchical smoothing, the outcome prior of the chains of the set with one more predicate
/// (see [`SearchConfig::hierarchical`]).
#[derive(Debug, Clone)]
pub struct LevelRisks {
    per_fold: Vec<Vec<f64>>,
}

impl LevelRisks {
    /// The risks of every state under the chain that holds fold `f` out (`f` = the number of folds: no
    /// run held out).
    pub fn fold(&self, f: usize) -> &[f64] {
        &self.per_fold[f]
    }
}

/// The scoring context of one property.
#[derive(Debug)]
pub struct Scorer<'a> {
    data: &'a PropertyData,
    records: &'a [RunRecord],
    folds: Vec<u8>,
    k: usize,
    alpha: f64,
    hierarchical: bool,
    share_weight: f64,
}

/// The outcome prior of state `s` of a chain over `n_bits` predicates: the risk of its parent state (the
/// last predicate dropped) under `prior`, or ½ (flat smoothing) without one.
fn prior_of(prior: Option<&[f64]>, s: StateId, n_bits: u32) -> f64 {
    prior.map_or(0.5, |p| p[(s & !(1 << (n_bits - 1))) as usize])
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
            hierarchical: cfg.hierarchical,
            share_weight: cfg.share_weight,
        }
    }

    /// Whether the chains are smoothed hierarchically ([`SearchConfig::hierarchical`]).
    pub fn is_hierarchical(&self) -> bool {
        self.hierarchical
    }

    /// The cross-validated score of `segs` with `candidate` (if any) added as bit `n_bits`; `n_bits` is
    /// the number of predicates in `segs`. `parent` is the [`Scorer::level`] of the set without its last
    /// predicate (that of `segs` itself when a candidate is added); it is ignored under flat smoothing.
    pub fn score(
        &self,
        segs: &Segments,
        candidate: Option<&Toggles>,
        n_bits: u32,
        parent: Option<&LevelRisks>,
    ) -> f64 {
        let mut ws = Workspace::default();
        self.score_with(&mut ws, segs, candidate, n_bits, parent)
    }

    pub(super) fn score_with(
        &self,
        ws: &mut Workspace,
        segs: &Segments,
        candidate: Option<&Toggles>,
        n_bits: u32,
        parent: Option<&LevelRisks>,
    ) -> f64 {
        let total_bits = n_bits + u32::from(candidate.is_some());
        self.count(ws, segs, candidate, n_bits);
        let parent = parent.filter(|_| self.hierarchical && total_bits > 1);
        self.cross_validate(ws, total_bits, parent)
    }

    /// Under hierarchical smoothing, the risks of the set of `segs` (`n_bits` predicates) per fold, its
    /// chains smoothed towards `parent` (the level of the set without its last predicate); `None` under
    /// flat smoothing, where no chain needs them.
    pub fn level(
        &self,
        segs: &Segments,
        n_bits: u32,
        parent: Option<&LevelRisks>,
    ) -> Option<LevelRisks> {
        if !self.hierarchical {
            return None;
        }
        let parent = parent.filter(|_| n_bits > 1);
        let mut ws = Workspace::default();
        self.count(&mut ws, segs, None, n_bits);
        let per_fold = (0..=self.k)
            .map(|f| {
                let prior = parent.map(|p| p.fold(f));
                self.fit_fold(&mut ws, f, n_bits, prior);
                (0..1u32 << n_bits)
                    .map(|s| self.chain_risk(&ws, s, n_bits, prior))
                    .collect()
            })
            .collect();
        Some(LevelRisks { per_fold })
    }

    /// The segmentation of the predicates `toggles` (in bit order after the unsafe predicate) and the
    /// cross-validated score of that set, its levels built one predicate at a time under hierarchical
    /// smoothing.
    pub fn score_toggles(&self, toggles: &[&Toggles]) -> (f64, Segments) {
        let (segs, parent) = self.segments_and_parent(toggles);
        let score = self.score(&segs, None, toggles.len() as u32 + 1, parent.as_ref());
        (score, segs)
    }

    /// The segmentation of the predicates `toggles` and, under hierarchical smoothing, the level of the
    /// set without its last predicate (`None` under flat smoothing or for no predicate), both built one
    /// predicate at a time.
    fn segments_and_parent(&self, toggles: &[&Toggles]) -> (Segments, Option<LevelRisks>) {
        let data = self.data;
        let mut segs = Segments::initial(data);
        let mut level = None;
        for (i, t) in toggles.iter().enumerate() {
            level = self.level(&segs, i as u32 + 1, level.as_ref());
            segs = segs.with(data, t, i as u32 + 1);
        }
        (segs, level)
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
        let share = self.share_weight > 0.0;
        ws.share_frames.clear();
        ws.share_violating.clear();
        if share {
            ws.share_frames.resize(n_states * k, 0);
            ws.share_violating.resize(n_states * k, 0);
        }
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
                if share {
                    ws.share_frames[st as usize * k + f] += end - start;
                    if run.violated {
                        ws.share_violating[st as usize * k + f] += end - start;
                    }
                }
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
    fn cross_validate(
        &self,
        ws: &mut Workspace,
        total_bits: u32,
        parent: Option<&LevelRisks>,
    ) -> f64 {
        let data = self.data;
        let k = self.k;
        let mut total = 0.0;
        let mut n_violating = 0usize;
        let mut safe_max: Vec<f64> = Vec::new();
        let mut leads: Vec<Vec<(f64, f64)>> = Vec::new();
        for f in 0..k {
            let prior = parent.map(|p| p.fold(f));
            self.fit_fold(ws, f, total_bits, prior);
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
                    let t_viol = t[run.n as usize - 1];
                    let mut env: Vec<(f64, f64)> = Vec::new();
                    for &(start, st) in usable {
                        let x = self.risk_of(ws, st, total_bits, prior);
                        push_envelope(&mut env, x, t_viol - t[start as usize]);
                    }
                    leads.push(env);
                } else {
                    let m = usable
                        .iter()
                        .map(|&(_, st)| self.risk_of(ws, st, total_bits, prior))
                        .fold(f64::NEG_INFINITY, f64::max);
                    safe_max.push(m);
                }
            }
            n_violating += leads.len();
            add_fold_utility(&mut total, &mut safe_max, &leads);
        }
        if n_violating == 0 {
            return 0.0;
        }
        total / (n_violating * BUDGETS.len()) as f64
    }

    /// Builds and solves the chain of the folds other than `f` into `ws.risk` (compact) and
    /// `ws.obs_index`; `prior` (the parent level's risks of that fold, see [`prior_of`]) splits each
    /// row's smoothing mass between the unsafe state and `done`.
    fn fit_fold(&self, ws: &mut Workspace, f: usize, n_bits: u32, prior: Option<&[f64]>) {
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
                let r = prior_of(prior, s, n_bits);
                ws.triplets.push((i, i, alpha));
                // α on each outcome under flat smoothing (r = ½); 2α split by the parent's risk.
                if r > 0.0 {
                    ws.triplets.push((i, unsafe_node, 2.0 * alpha * r));
                }
                if r < 1.0 {
                    ws.triplets.push((i, done_node, 2.0 * alpha * (1.0 - r)));
                }
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
        // Rows in CSR order: a counting sort by source, then each row's few entries by target. An entry
        // appears at most twice (an observed count and its smoothing), and two summands add the same in
        // either order, so the chain equals that of one sort by (source, target).
        let n = n_obs as usize + 2;
        let mut row_ptr = vec![0usize; n + 1];
        for &(from, _, _) in &ws.triplets {
            row_ptr[from as usize + 1] += 1;
        }
        for i in 1..=n {
            row_ptr[i] += row_ptr[i - 1];
        }
        ws.entries.clear();
        ws.entries.resize(ws.triplets.len(), (0, 0.0));
        let mut next = row_ptr.clone();
        for &(from, to, w) in &ws.triplets {
            ws.entries[next[from as usize]] = (to, w);
            next[from as usize] += 1;
        }
        let mut cols: Vec<StateId> = Vec::with_capacity(ws.entries.len());
        let mut probs: Vec<f64> = Vec::with_capacity(ws.entries.len());
        for i in 0..n {
            let row = &mut ws.entries[row_ptr[i]..row_ptr[i + 1]];
            row.sort_unstable_by_key(|e| e.0);
            let row_start = cols.len();
            for (j, &(to, w)) in row.iter().enumerate() {
                match probs.last_mut() {
                    Some(p) if j > 0 && row[j - 1].0 == to => *p += w,
                    _ => {
                        cols.push(to);
                        probs.push(w);
                    }
                }
            }
            let sum: f64 = probs[row_start..].iter().sum();
            for p in &mut probs[row_start..] {
                *p /= sum;
            }
            row_ptr[i] = row_start;
        }
        row_ptr[n] = cols.len();
        let mut unsafe_mask = vec![false; n];
        unsafe_mask[unsafe_node as usize] = true;
        ws.risk = match Dtmc::try_new(n, row_ptr, cols, probs) {
            Ok(dtmc) => crate::reach::eventually(&dtmc, &unsafe_mask),
            // Every row has its self-loop and sums to one by construction; an error here would be a bug in
            // this function, and risk 1 everywhere scores the candidate at its worst rather than crash.
            Err(_) => vec![1.0; n],
        };
        // The frame share of every observed state (each was visited in training), mixed in as the
        // model mixes it (`crate::share`); a state never observed has none and keeps the chain's risk
        // (`risk_of`).
        let w = self.share_weight;
        ws.mixed.clear();
        if w > 0.0 {
            for (i, &s) in ws.observed.iter().enumerate() {
                let frames = f64::from(train(&ws.share_frames, s as usize));
                let violating = f64::from(train(&ws.share_violating, s as usize));
                let share = (violating + alpha / 2.0) / (frames + alpha);
                ws.mixed
                    .push(((1.0 - w) * ws.risk[i] + w * share).clamp(0.0, 1.0));
            }
        }
    }

    /// P(F unsafe) of every state `0..2^(|set| + 1)` under the predicates `set` (pool indices, in bit
    /// order after the unsafe predicate), learned from every run: what the built model's table must say
    /// (with a frame-share weight, the risk mixed with the share: what its risk table must say).
    pub fn full_data_risks(&self, set: &[usize]) -> Vec<f64> {
        let toggles: Vec<&Toggles> = set.iter().map(|&c| &self.data.candidates[c]).collect();
        // No run is in fold `k`, so that "held-out fold" leaves every run in training.
        let (_, mut risks) = self.chain_risks(&toggles, self.k..self.k + 1);
        risks.pop().unwrap_or_default()
    }

    /// The segmentation of the predicates `toggles` (in bit order after the unsafe predicate) and, per
    /// fold `f` in `0..k`, the risk of every state under the chain learned without fold `f` (mixed with
    /// its frame share under a frame-share weight): the risks the score reads for the fold's held-out runs.
    pub fn fold_risks(&self, toggles: &[&Toggles]) -> (Segments, Vec<Vec<f64>>) {
        self.chain_risks(toggles, 0..self.k)
    }

    /// [`Scorer::fold_risks`] for fold `f` alone: the segmentation of `toggles` and the risk of every
    /// state under the chain learned without fold `f`.
    pub fn fold_risks_without(&self, toggles: &[&Toggles], f: usize) -> (Segments, Vec<f64>) {
        let (segs, mut risks) = self.chain_risks(toggles, f..f + 1);
        (segs, risks.pop().unwrap_or_default())
    }

    /// The segmentation of `toggles` and, for each fold `f` of `folds` (`k`: none held out), the risk
    /// of every state under the chain learned without fold `f`.
    fn chain_risks(
        &self,
        toggles: &[&Toggles],
        folds: std::ops::Range<usize>,
    ) -> (Segments, Vec<Vec<f64>>) {
        let (segs, parent) = self.segments_and_parent(toggles);
        let bits = toggles.len() as u32 + 1;
        let mut ws = Workspace::default();
        self.count(&mut ws, &segs, None, bits);
        let per_fold = folds
            .map(|f| {
                let prior = parent.as_ref().map(|p| p.fold(f));
                self.fit_fold(&mut ws, f, bits, prior);
                (0..1u32 << bits)
                    .map(|s| self.risk_of(&ws, s, bits, prior))
                    .collect()
            })
            .collect();
        (segs, per_fold)
    }

    /// Each run's fold (in `data.runs` order).
    pub fn folds(&self) -> &[u8] {
        &self.folds
    }

    /// The fold chain's risk of state `s` (see the module docs for states not observed in training),
    /// mixed with its frame share under a frame-share weight; an unobserved state has no share and gets
    /// the chain's risk alone, as in the built model.
    fn risk_of(&self, ws: &Workspace, s: StateId, n_bits: u32, prior: Option<&[f64]>) -> f64 {
        let i = ws.obs_index[s as usize];
        match ws.mixed.get(i as usize) {
            Some(&mixed) if i != NONE => mixed,
            _ => self.chain_risk(ws, s, n_bits, prior),
        }
    }

    /// The fold chain's own risk of state `s`, without the frame share: what the risks of a coarser
    /// set's chain (hierarchical smoothing's parents) are, as in the built model.
    fn chain_risk(&self, ws: &Workspace, s: StateId, n_bits: u32, prior: Option<&[f64]>) -> f64 {
        let i = ws.obs_index[s as usize];
        if i != NONE {
            return ws.risk[i as usize];
        }
        let (mut sum, mut m) = (2.0 * prior_of(prior, s, n_bits), 2.0);
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
