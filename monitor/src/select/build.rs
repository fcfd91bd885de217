//! Building one property's model under a plan: its search (or the declared predicates), the
//! ensemble's further chains, the frame share and forest weights, and the reactive rule.

use crate::counts::Counts;
use crate::domain::Domain;
use crate::error::ModelError;
use crate::forest::ForestShare;
use crate::property::{BuildConfig, PropertyModel};
use crate::provenance::{AbstractionMode, ReactiveRule, Selection, SelectionStep};
use crate::share::FrameShare;
use crate::spec::ResolvedProperty;
use crate::StateId;

use super::candidates::Cuts;
use super::data::{PropertyData, RunRecord, Source};
use super::forest::{ForestChoice, ForestKind};
use super::pool::Candidate;
use super::search::SearchConfig;
use super::{
    data, forest, literal_text, member_seed, nested, pool, rule, rule_start, search, search_starts,
    AutoPlan, PropertyReport,
};

impl AutoPlan {
    pub(super) fn build_property(
        &self,
        records: &[RunRecord],
        pi: usize,
        p: &ResolvedProperty,
        cuts: &Cuts,
        (mode, search_cfg): (AbstractionMode, &SearchConfig),
        budgets: &[f64],
    ) -> Result<(PropertyModel, PropertyReport), ModelError> {
        let pool = self.pool(p, cuts);
        let sources: Vec<Source> = pool.iter().map(|(_, s)| *s).collect();
        let mut data = PropertyData::new(records, pi, &sources);
        let n_violating = data.runs.iter().filter(|r| r.violated).count();
        let fixed = declared_start(p, &pool);
        let (mut fixed_score, fixed_segs) = search::score_set(&data, records, search_cfg, &fixed);
        // The smoothing α of the property's model: the search's choice when it chooses one.
        let mut alpha = self.config.laplace.alpha;
        let mut hierarchical = search_cfg.hierarchical;
        let unsafe_text = p.predicates[p.unsafe_bit].clone();
        let all: Vec<usize> = (0..pool.len()).collect();
        let rule_choice = rule::best_rule(&data, records, &all);
        let budget_rules: Vec<Option<ReactiveRule>> = budgets
            .iter()
            .map(|&b| {
                rule::best_rule_for(&data, records, &all, rule::Objective::WithinBudget(b))
                    .map(|choice| reactive_rule(&pool, &choice))
            })
            .collect();
        let mut member_searches = Vec::new();
        // The frame share's weight in every chain's risk: chosen after the search (0: the chain alone).
        let mut share_weight = 0.0;
        // The forest mixed into the property's risk: grown after the search when its weight is above 0.
        let (mut forest_share, mut forest_choice) = (None, ForestChoice::default());
        let (steps, segs): (Vec<SelectionStep>, _) = match mode {
            AbstractionMode::Auto if n_violating > 0 => {
                // Greedy selection is myopic: started from nothing it can settle on a worse set than
                // the declared predicates or the reactive rule's literals already are. So it also
                // starts from each of those, and the highest cross-validated score wins (ties: the
                // earlier start) — a choice made on the training runs, like every step.
                let rule_literals = rule_start(rule_choice.as_ref());
                // Each step's threshold is also tried at the finer cuts of its signal. A candidate's
                // alternatives are read from the runs once, however many steps and starts ask for them.
                let fine = |c: usize| cuts.fine_of(&pool, c);
                let cache = search::RefineCache::new(&data, records, &fine);
                let refine = |c: usize| cache.get(c);
                let found = search::greedy_multi_alphas(
                    &data,
                    records,
                    search_cfg,
                    &search_starts(&rule_literals, &fixed),
                    Some(&refine),
                );
                // A search's steps as predicate texts: pool candidates by index, the refined ones (at
                // indices from the pool's end) as their threshold atoms or conjunctions.
                let cut_text = |of: usize, alternative: usize| -> Result<String, ModelError> {
                    let (i, cs) = fine(of).unwrap_or_default();
                    let sig = self.signals[i];
                    let x = cs.get(alternative).copied().unwrap_or(f64::NAN);
                    pool::threshold_atom(sig, x)
                        .map(|a| a.to_string())
                        .ok_or_else(|| {
                            ModelError::Config(format!(
                                "threshold atom {}<={x} does not parse",
                                sig.name()
                            ))
                        })
                };
                let selection_steps =
                    |found: &search::AlphaChoice| -> Result<Vec<SelectionStep>, ModelError> {
                        let single = |c: usize| -> Result<String, ModelError> {
                            match c.checked_sub(pool.len()) {
                                None => Ok(pool[c].0.text()),
                                Some(r) => match found.refined.get(r).map(|r| (r.of, r.kind)) {
                                    Some((of, search::RefinedKind::Cut(alternative))) => {
                                        cut_text(of, alternative)
                                    }
                                    _ => Err(ModelError::Config(format!(
                                        "no refined cut {r} to join"
                                    ))),
                                },
                            }
                        };
                        // A conjunction joins a single candidate (`left`) to its pool candidate.
                        let text = |c: usize| -> Result<String, ModelError> {
                            let refined =
                                c.checked_sub(pool.len()).and_then(|r| found.refined.get(r));
                            match refined.map(|r| (r.of, r.kind)) {
                                Some((
                                    of,
                                    search::RefinedKind::And {
                                        left,
                                        left_negated,
                                        negated,
                                    },
                                )) => Ok(format!(
                                    "{}{}{}",
                                    literal_text(&single(left)?, left_negated),
                                    crate::abstraction::CONJUNCTION,
                                    literal_text(&pool[of].0.text(), negated)
                                )),
                                _ => single(c),
                            }
                        };
                        found
                            .steps
                            .iter()
                            .map(|s| {
                                Ok(SelectionStep {
                                    predicate: match s.candidate {
                                        Some(c) => text(c)?,
                                        None => unsafe_text.clone(),
                                    },
                                    score: s.score,
                                })
                            })
                            .collect()
                    };
                alpha = found.alpha;
                hierarchical = found.hierarchical;
                // The search's configuration under the smoothing it chose.
                let chosen_cfg = SearchConfig {
                    alpha,
                    hierarchical,
                    ..*search_cfg
                };
                if (found.alpha, found.hierarchical) != (search_cfg.alpha, search_cfg.hierarchical)
                {
                    fixed_score = search::score_set(&data, records, &chosen_cfg, &fixed).0;
                }
                // How much of the frame share the risk mixes in, chosen for the first chain's
                // predicates under its smoothing and applied to every chain.
                if search_cfg.choose_share {
                    let chosen = search::chosen_toggles(&data, &found.steps, &found.refined);
                    share_weight =
                        search::choose_share_weight(&data, records, &chosen_cfg, &chosen).0;
                }
                let mut fold_searches = None;
                if search_cfg.forest_trees > 0 {
                    let chosen = search::chosen_toggles(&data, &found.steps, &found.refined);
                    let cfg = SearchConfig {
                        share_weight,
                        ..chosen_cfg
                    };
                    fold_searches = search_cfg.forest_nested.then(|| {
                        let start = (&fixed[..], found.start);
                        nested::fold_searches(&data, records, &cfg, start, &fine)
                    });
                    (forest_share, forest_choice) = self.forest(
                        &data,
                        records,
                        &pool,
                        (&cfg, &chosen, fold_searches.as_deref()),
                        search_cfg.forest_trees,
                        alpha,
                    )?;
                }
                // An ensemble's further chains. Where the forest's choice searched again without each
                // fold, the first folds' searches are the members: their predicates chosen on the runs
                // outside the fold (a subsample each, as in bagging), at no further search. Otherwise
                // (and for members beyond the folds) the same search on every run under other fold
                // assignments, each keeping the predicates its folds prefer.
                let mut from_folds = fold_searches.unwrap_or_default().into_iter();
                for k in 1..search_cfg.chains.max(1) {
                    // The smoothing is the first search's choice: a further chain varies the runs or
                    // the folds alone, and costs one search rather than one per smoothing.
                    if let Some(f) = from_folds.next() {
                        member_searches.push(MemberSearch {
                            cfg: chosen_cfg,
                            steps: selection_steps(&f.found)?,
                            segs: f.chain.0,
                            runs: Some(f.runs),
                        });
                        continue;
                    }
                    let cfg = SearchConfig {
                        seed: member_seed(search_cfg.seed, k),
                        choose_alpha: false,
                        choose_prior: false,
                        ..chosen_cfg
                    };
                    let m = search::greedy_multi_alphas(
                        &data,
                        records,
                        &cfg,
                        &search_starts(&rule_literals, &fixed),
                        Some(&refine),
                    );
                    member_searches.push(MemberSearch {
                        cfg,
                        steps: selection_steps(&m)?,
                        segs: m.segs,
                        runs: None,
                    });
                }
                let steps = selection_steps(&found)?;
                // The refined candidates join the data, so that the pool size counts them.
                data.candidates
                    .extend(found.refined.into_iter().map(|r| r.toggles));
                (steps, found.segs)
            }
            // Without a violation to learn from, the search has nothing to score: keep the fixed set.
            _ => {
                let steps = std::iter::once(unsafe_text.clone())
                    .chain(fixed.iter().map(|&c| pool[c].0.text()))
                    .map(|predicate| SelectionStep {
                        predicate,
                        score: fixed_score,
                    })
                    .collect();
                (steps, fixed_segs)
            }
        };
        let mode = if n_violating == 0 {
            AbstractionMode::Fixed
        } else {
            mode
        };
        // The start step is the unsafe predicate alone, and each further step adds one predicate.
        let predicates: Vec<String> = steps.iter().map(|s| s.predicate.clone()).collect();
        let mut config = self.config.clone();
        if mode == AbstractionMode::Auto {
            config.smoothing = crate::av::SmoothingScope::Observed;
            config.laplace.alpha = alpha;
            config.prior = if hierarchical {
                crate::property::SmoothingPrior::Hierarchical
            } else {
                crate::property::SmoothingPrior::Flat
            };
        }
        let (counts, share) = counts_and_share(&data, &segs, &predicates, &config, share_weight)?;
        let rule = rule_choice.map(|choice| reactive_rule(&pool, &choice));
        let selection = Selection {
            mode,
            pool_size: data.candidates.iter().filter(|t| !t.is_constant()).count(),
            folds: search_cfg.folds.max(2),
            seed: search_cfg.seed,
            n_runs: data.runs.len(),
            n_violating,
            steps,
            fixed_score,
        };
        let mut members = Vec::with_capacity(member_searches.len());
        // Each further chain is smoothed as the first (its search ran under the first's smoothing).
        for MemberSearch {
            cfg,
            steps,
            segs,
            runs,
        } in member_searches
        {
            let predicates: Vec<String> = steps.iter().map(|s| s.predicate.clone()).collect();
            let (counts, share) =
                counts_and_share(&data, &segs, &predicates, &config, share_weight)?;
            // The runs its trace was scored on: every run, or those outside its fold.
            let searched = runs.map(|r| data.subset(&r));
            let on = searched.as_ref().unwrap_or(&data);
            let member_selection = Selection {
                seed: cfg.seed,
                n_runs: on.runs.len(),
                n_violating: on.runs.iter().filter(|r| r.violated).count(),
                steps,
                // The declared predicates scored on the member's folds, as its trace was.
                fixed_score: search::score_set(on, records, &cfg, &fixed).0,
                ..selection.clone()
            };
            members.push(
                PropertyModel::build_for_law(&p.name, &p.law, predicates, 0, counts, &config)?
                    .with_selection(member_selection)
                    .with_frame_share(share)?,
            );
        }
        let model = PropertyModel::build_for_law(&p.name, &p.law, predicates, 0, counts, &config)?
            .with_frame_share(share)?
            .with_selection(selection.clone())
            .with_reactive_rule(rule.clone())
            .with_members(members)?
            .with_forest(forest_share);
        Ok((
            model,
            PropertyReport {
                name: p.name.clone(),
                selection,
                rule,
                budget_rules,
                forest: forest_choice,
            },
        ))
    }
}

impl AutoPlan {
    /// The forest of a property whose first chain's predicates are `chosen` (searched under `cfg`):
    /// grown over the pool's candidates that vary, with its weight chosen on `cfg`'s folds
    /// ([`forest::choose_forest_weight`]) against `nested`'s fold chains when given, else against the
    /// chain of `chosen`; `None` when that weight is 0. Also how it was chosen: every weight's score, of
    /// the kind kept when [`ForestKind::Either`] grew both.
    fn forest(
        &self,
        data: &PropertyData,
        records: &[RunRecord],
        pool: &[(Candidate, Source)],
        (cfg, chosen, nested): (
            &SearchConfig,
            &[&data::Toggles],
            Option<&[nested::FoldSearch]>,
        ),
        n_trees: usize,
        alpha: f64,
    ) -> Result<(Option<ForestShare>, ForestChoice), ModelError> {
        let varying: Vec<usize> = (0..pool.len())
            .filter(|&c| !data.candidates[c].is_constant())
            .collect();
        let candidates: Vec<&data::Toggles> =
            varying.iter().map(|&c| &data.candidates[c]).collect();
        let period = self.config.frame_period_s;
        let horizon_steps = (forest::HORIZON_S / period).round().max(1.0) as u32;
        let table = forest::FrameTable::new(data, &candidates, horizon_steps);
        let first;
        let chains: Vec<(&search::Segments, &[f64])> = match nested {
            Some(chains) => nested::views(chains),
            None => {
                first = search::Scorer::new(data, records, cfg).fold_risks(chosen);
                forest::shared_chains(&first)
            }
        };
        let choose = |kind| {
            let (w, scores, recalls) = forest::choose_forest_weight_with_recall(
                data,
                records,
                cfg,
                &chains,
                &table,
                (kind, n_trees),
                alpha,
            );
            ((kind, w, scores), recalls)
        };
        let all: Vec<usize> = (0..data.runs.len()).collect();
        let text = |c: usize| pool[varying[c]].0.text();
        if cfg.forest_kind == ForestKind::Both {
            let ((_, w_bagged, scores), _) = choose(ForestKind::Bagged);
            let ((_, w_boosted, boosted_scores), _) = choose(ForestKind::Boosted);
            let choice = ForestChoice {
                kind: ForestKind::Both,
                scores,
                boosted_scores,
                ..ForestChoice::default()
            };
            let share = both_kinds(
                &table,
                &all,
                (w_bagged, w_boosted),
                (n_trees, alpha, cfg.seed),
                horizon_steps,
                text,
            )?;
            return Ok((share, choice));
        }
        let best = |s: &[f64]| s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ((kind, weight, scores), other_best, boosted_vetoed) = match cfg.forest_kind {
            ForestKind::Either => {
                let (bagged, bagged_recalls) = choose(ForestKind::Bagged);
                let (boosted, boosted_recalls) = choose(ForestKind::Boosted);
                let (b, g) = (best(&bagged.2), best(&boosted.2));
                if forest::prefer_boosted(
                    (&bagged.2, &bagged_recalls),
                    (&boosted.2, &boosted_recalls),
                ) {
                    (boosted, Some(b), false)
                } else {
                    (bagged, Some(g), g > b)
                }
            }
            kind => (choose(kind).0, None, false),
        };
        let choice = ForestChoice {
            kind,
            scores,
            other_best,
            boosted_vetoed,
            boosted_scores: Vec::new(),
        };
        if weight == 0.0 {
            return Ok((None, choice));
        }
        let grown = forest::Grown::grow(kind, &table, &all, n_trees, alpha, cfg.seed);
        let share = stored(grown, weight, horizon_steps, text)?;
        Ok((Some(share), choice))
    }
}

/// A forest of one kind as grown, stored at `weight`: its split predicates renumbered and named by `text`.
fn stored(
    grown: forest::Grown,
    weight: f64,
    horizon_steps: u32,
    text: impl Fn(usize) -> String,
) -> Result<ForestShare, ModelError> {
    Ok(match grown {
        forest::Grown::Bagged(trees) => {
            let (texts, trees) = forest::renumbered(trees, text);
            ForestShare::try_new(weight, horizon_steps, texts, trees)?
        }
        forest::Grown::Boosted(b) => {
            let (texts, trees) = forest::renumbered(b.trees, text);
            ForestShare::try_new_boosted(weight, horizon_steps, texts, trees, b.base)?
        }
    })
}

/// A forest of both kinds ([`ForestKind::Both`]) on the runs `all` of `table`, from the weights the folds
/// chose for each kind alone, `w₁` bagged and `w₂` boosted: weight `(w₁ + w₂)/2`, the bagged trees' share
/// `w₁/(w₁ + w₂)`, so that the risk is the mean of the two risks with each forest alone at its own weight
/// (each kind grown with the `seed` it is grown with alone). A kind at weight 0 is left out; `None` when
/// both are. `text` names a table candidate.
fn both_kinds(
    table: &forest::FrameTable,
    all: &[usize],
    (w_bagged, w_boosted): (f64, f64),
    (n_trees, alpha, seed): (usize, f64, u64),
    horizon_steps: u32,
    text: impl Fn(usize) -> String,
) -> Result<Option<ForestShare>, ModelError> {
    let weight = (w_bagged + w_boosted) / 2.0;
    let bagged = (w_bagged > 0.0).then(|| forest::grow_forest(table, all, n_trees, alpha, seed));
    let boosted = (w_boosted > 0.0)
        .then(|| forest::boost::grow_boosted(table, all, forest::boost::BOOSTED_TREES, seed));
    let share = match (bagged, boosted) {
        (None, None) => return Ok(None),
        (Some(trees), None) => stored(forest::Grown::Bagged(trees), weight, horizon_steps, text)?,
        (None, Some(b)) => stored(forest::Grown::Boosted(b), weight, horizon_steps, text)?,
        (Some(trees), Some(b)) => {
            let n_bagged = trees.len();
            let (texts, mut trees) =
                forest::renumbered(trees.into_iter().chain(b.trees).collect(), text);
            let boosted = trees.split_off(n_bagged);
            ForestShare::try_new_both(
                weight,
                horizon_steps,
                texts,
                (trees, boosted),
                b.base,
                w_bagged / (w_bagged + w_boosted),
            )?
        }
    };
    Ok(Some(share))
}

/// The declared predicates of `p` other than its unsafe one, as indices into `pool` (its first entries),
/// in their declared order: the fixed abstraction, and a start of the search.
pub(super) fn declared_start(p: &ResolvedProperty, pool: &[(Candidate, Source)]) -> Vec<usize> {
    let unsafe_text = &p.predicates[p.unsafe_bit];
    p.predicates
        .iter()
        .filter(|t| *t != unsafe_text)
        .filter_map(|t| pool.iter().position(|(c, _)| c.text() == *t))
        .collect()
}

/// An ensemble member's search: its configuration (smoothing and fold seed), steps and segmentation over
/// every run, and the runs it searched when not every run (a fold search's, [`nested::FoldSearch`]).
struct MemberSearch {
    cfg: SearchConfig,
    steps: Vec<SelectionStep>,
    segs: search::Segments,
    runs: Option<Vec<usize>>,
}

/// A chosen rule as stored: its literals as predicate texts.
fn reactive_rule(pool: &[(Candidate, Source)], choice: &rule::RuleChoice) -> ReactiveRule {
    ReactiveRule {
        literals: choice
            .literals
            .iter()
            .map(|&(c, negated)| literal_text(&pool[c].0.text(), negated))
            .collect(),
        n_predicted: choice.n_predicted,
        n_violating: choice.n_violating,
        n_false_alarms: choice.n_false_alarms,
        n_safe: choice.n_safe,
    }
}

/// The transition counts of every run's trace under `segs` (the learning traces: cut at the first unsafe
/// frame, or ended by `done`) and, at a `share_weight` above 0, the frame share of every state over the
/// same traces with that weight, smoothed with the model's α ([`FrameShare::from_traces`]).
pub(super) fn counts_and_share(
    data: &PropertyData,
    segs: &search::Segments,
    predicates: &[String],
    config: &BuildConfig,
    share_weight: f64,
) -> Result<(Counts, Option<FrameShare>), ModelError> {
    let domain = PropertyModel::domain_for(predicates, 0, config)?;
    let mut counts = Counts::new(domain.n_states());
    let mut traces: Vec<(Vec<StateId>, bool)> = Vec::new();
    for (r, run) in data.runs.iter().enumerate() {
        let mut trace = segs.frame_states(r, run.n);
        if !run.violated {
            trace.push(domain.done());
        }
        counts.observe_trace(&domain, &trace)?;
        if share_weight > 0.0 {
            if !run.violated {
                trace.pop();
            }
            traces.push((trace, run.violated));
        }
    }
    let share = if share_weight > 0.0 {
        Some(FrameShare::from_traces(
            share_weight,
            domain.n_states(),
            &config.horizons_steps,
            config.laplace.alpha,
            traces.iter().map(|(t, v)| (t.as_slice(), *v)),
        )?)
    } else {
        None
    };
    Ok((counts, share))
}
