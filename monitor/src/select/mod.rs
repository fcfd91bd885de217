//! Learned abstractions: choosing each property's predicates from data (`avguard learn --abstraction auto`),
//! and the best small reactive rule over the same candidates (the comparator stored with every model).
//!
//! The hand-written abstraction of a property (its law's atoms plus `properties.toml`) is one guess at
//! what predicts a violation. This module instead searches a larger [`pool`] of readable candidates — the
//! fixed predicates, every flag signal, and thresholds at data quantiles on every numeric signal — by
//! greedy forward selection ([`search`]), scoring each step by k-fold cross-validation over runs with a
//! criterion that is the product's claim: warned violations and lead at fixed false-alarm rates
//! ([`criterion`]). The chosen predicates remain law-language atoms, so states and explanations still read
//! as words, and the model is then learned from them like any other (under
//! [`crate::av::SmoothingScope::Observed`], the smoothing the search evaluates).
//!
//! The flow, for [`AutoPlan`]: [`AutoPlan::recorder`] records every training run once ([`data`]); then
//! [`AutoPlan::build`] computes the thresholds, compresses each property's runs into per-candidate toggles,
//! picks the reactive rule ([`rule`]), runs the search — from nothing, from the rule's candidates and from
//! the fixed predicates, each also with every chosen threshold refined to the best of its signal's
//! [`pool::fine_thresholds`], keeping the best cross-validated score ([`search::greedy_multi`]); with
//! [`SearchConfig::choose_alpha`] all of that once per Laplace α of [`search::ALPHA_CHOICES`] (and with
//! [`SearchConfig::choose_prior`] also under hierarchical smoothing), keeping the smoothing whose result
//! compares best and smoothing the property's model with it ([`search::greedy_multi_alphas`]) — or, for [`AbstractionMode::Fixed`], scores the fixed predicates
//! under the same criterion, and builds the [`Model`]. The selection trace (the score after each step),
//! the fixed abstraction's score and the rule with its training figures are stored in the model
//! ([`Selection`], [`ReactiveRule`]).

mod candidates;
use candidates::Cuts;
pub mod criterion;
pub mod data;
pub mod forest;
pub mod nested;
pub mod pool;
pub mod rule;
pub mod search;

#[cfg(test)]
mod tests;

use laws::{Atom, Signal};
use rayon::prelude::*;

use crate::counts::Counts;
use crate::domain::Domain;
use crate::error::ModelError;
use crate::forest::ForestShare;
use crate::model::Model;
use crate::property::{BuildConfig, PropertyModel};
pub use crate::provenance::{AbstractionMode, ReactiveRule, Selection, SelectionStep};
use crate::share::FrameShare;
use crate::spec::{ResolvedProperty, WINDOW_SUFFIX};
use crate::StateId;
use data::{PropertyData, Recorder, RunRecord, Source};
use laws::LawSource;
use pool::Candidate;
pub use search::SearchConfig;

/// The text of an atom's negation: the one comparison operator of a canonical atom swapped.
pub fn negated_text(atom: &Atom) -> String {
    let text = atom.to_string();
    for (op, neg) in [("<=", ">"), ("==", "!="), ("<", ">=")] {
        if let Some(i) = text.find(op) {
            return format!("{}{neg}{}", &text[..i], &text[i + op.len()..]);
        }
    }
    format!("~({text})")
}

/// A predicate text as a literal of a rule or a conjunction: as it is, or negated — an atom by its
/// comparison (`speed>30`), any other predicate as `not P` ([`crate::abstraction::rule_literal`] reads
/// both back).
pub fn literal_text(text: &str, negated: bool) -> String {
    match Atom::parse(text) {
        _ if !negated => text.to_string(),
        Ok(a) => negated_text(&a),
        Err(_) => format!("not {text}"),
    }
}

/// What to learn with a searched (or scored) abstraction.
#[derive(Debug, Clone)]
pub struct AutoPlan {
    laws: Vec<LawSource>,
    properties: Vec<ResolvedProperty>,
    config: BuildConfig,
    atoms: Vec<Atom>,
    windows: Vec<String>,
    signals: Vec<Signal>,
    /// Laws whose obligation memory is recorded (each property's law and related laws).
    obligations: Vec<String>,
}

/// The outcome for one property, for printing.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyReport {
    /// Property name.
    pub name: String,
    /// The stored selection.
    pub selection: Selection,
    /// The stored rule.
    pub rule: Option<ReactiveRule>,
    /// The rule for each budget [`AutoPlan::build_with_budget_rules`] was asked for, in order.
    pub budget_rules: Vec<Option<ReactiveRule>>,
    /// The cross-validated score of each forest weight of [`forest::FOREST_WEIGHTS`], from which the
    /// stored forest's weight was chosen; empty when no forest was grown (`forest_trees` 0, or no
    /// search).
    pub forest_scores: Vec<f64>,
}

impl AutoPlan {
    /// A plan for `properties` (their fixed predicates seed each pool) over `laws`.
    ///
    /// # Errors
    /// No properties.
    pub fn new(
        laws: Vec<LawSource>,
        properties: Vec<ResolvedProperty>,
        config: BuildConfig,
    ) -> Result<AutoPlan, ModelError> {
        if properties.is_empty() {
            return Err(ModelError::Config("no properties to learn".into()));
        }
        let mut atoms: Vec<Atom> = Vec::new();
        let mut windows: Vec<String> = Vec::new();
        for p in &properties {
            for text in &p.predicates {
                match text.strip_suffix(WINDOW_SUFFIX) {
                    Some(law) if !law.is_empty() && Atom::parse(text).is_err() => {
                        if !windows.iter().any(|w| w == law) {
                            windows.push(law.to_string());
                        }
                    }
                    _ => {
                        if let Ok(a) = Atom::parse(text) {
                            let a = a.canonical().0;
                            if !atoms.contains(&a) {
                                atoms.push(a);
                            }
                        }
                    }
                }
            }
        }
        for a in pool::generic_atoms() {
            if !atoms.contains(&a) {
                atoms.push(a);
            }
        }
        let mut obligations: Vec<String> = Vec::new();
        for p in &properties {
            let related = p
                .predicates
                .iter()
                .filter_map(|t| t.strip_suffix(WINDOW_SUFFIX).map(str::to_owned));
            for law in std::iter::once(p.law.clone()).chain(related) {
                if !obligations.contains(&law) {
                    obligations.push(law);
                }
            }
        }
        Ok(AutoPlan {
            laws,
            properties,
            config,
            atoms,
            windows,
            signals: pool::threshold_signals(),
            obligations,
        })
    }

    /// The properties, in order.
    pub fn properties(&self) -> &[ResolvedProperty] {
        &self.properties
    }

    /// The build options.
    pub fn config(&self) -> &BuildConfig {
        &self.config
    }

    /// A recorder of training runs (one per worker; records are independent).
    ///
    /// # Errors
    /// The laws or properties do not compile.
    pub fn recorder(&self) -> Result<Recorder, ModelError> {
        Recorder::new(
            &self.laws,
            &self.properties,
            self.config.frame_period_s,
            self.config.window_frames,
            data::RecordSpec {
                atoms: &self.atoms,
                window_laws: &self.windows,
                signals: &self.signals,
                obligation_laws: &self.obligations,
            },
        )
    }

    /// Property number `p` learned on `records` with the given pool predicates (texts, after the unsafe
    /// one) and the smoothing of learned abstractions: a chosen set rebuilt by hand.
    ///
    /// # Errors
    /// An unknown property or a predicate not in its pool; a failed build.
    pub fn build_with(
        &self,
        records: &[RunRecord],
        p: usize,
        chosen: &[String],
    ) -> Result<PropertyModel, ModelError> {
        let prop = self
            .properties
            .get(p)
            .ok_or_else(|| ModelError::Config(format!("no property number {p}")))?;
        let pool = self.pool_of(records, p);
        let set = chosen
            .iter()
            .map(|t| {
                pool.iter()
                    .position(|(c, _)| c.text() == *t)
                    .ok_or_else(|| {
                        ModelError::Config(format!("'{t}' is not a candidate of {}", prop.name))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sources: Vec<Source> = pool.iter().map(|(_, s)| *s).collect();
        let data = PropertyData::new(records, p, &sources);
        let (_, segs) = search::score_set(&data, records, &SearchConfig::default(), &set);
        let predicates: Vec<String> = std::iter::once(prop.predicates[prop.unsafe_bit].clone())
            .chain(chosen.iter().cloned())
            .collect();
        let mut config = self.config.clone();
        config.smoothing = crate::av::SmoothingScope::Observed;
        let (counts, _) = counts_and_share(&data, &segs, &predicates, &config, 0.0)?;
        PropertyModel::build_for_law(&prop.name, &prop.law, predicates, 0, counts, &config)
    }

    /// Property `p`'s candidate pool on `records`, with where each candidate is recorded.
    pub fn pool_of(&self, records: &[RunRecord], p: usize) -> Vec<(Candidate, Source)> {
        let cuts = self.cuts(records);
        self.properties
            .get(p)
            .map(|prop| self.pool(prop, &cuts))
            .unwrap_or_default()
    }

    /// Chooses (or scores) every property's abstraction on `records`, picks each reactive rule, and builds
    /// the model.
    ///
    /// # Errors
    /// No usable run, or a property that fails to build.
    pub fn build(
        &self,
        records: &[RunRecord],
        mode: AbstractionMode,
        search: &SearchConfig,
    ) -> Result<(Model, Vec<PropertyReport>), ModelError> {
        self.build_with_budget_rules(records, mode, search, &[])
    }

    /// [`AutoPlan::build`], each property's report also carrying the rule a safety engineer would write
    /// for each false-alarm budget of `budgets`: the best conjunction of one or two literals over the
    /// property's whole pool by [`rule::Objective::WithinBudget`] on `records` (`None` where no rule keeps
    /// within the budget, or without a violating run). These are comparators only, never stored in the
    /// model: `avguard evaluate` scores each beside the curve at its own false-alarm rate.
    ///
    /// # Errors
    /// As [`AutoPlan::build`].
    pub fn build_with_budget_rules(
        &self,
        records: &[RunRecord],
        mode: AbstractionMode,
        search: &SearchConfig,
        budgets: &[f64],
    ) -> Result<(Model, Vec<PropertyReport>), ModelError> {
        self.build_observed(records, mode, search, budgets, &|_, _| {})
    }

    /// [`AutoPlan::build_with_budget_rules`], calling `on_property` with each property's index and name
    /// once it is learned (in the order they finish: the properties are learned in parallel): for
    /// progress, since a property's search can take minutes.
    ///
    /// # Errors
    /// As [`AutoPlan::build`].
    pub fn build_observed(
        &self,
        records: &[RunRecord],
        mode: AbstractionMode,
        search: &SearchConfig,
        budgets: &[f64],
        on_property: &(dyn Fn(usize, &str) + Sync),
    ) -> Result<(Model, Vec<PropertyReport>), ModelError> {
        if records.iter().all(RunRecord::is_empty) {
            return Err(ModelError::Config("no training frames".into()));
        }
        let cuts = self.cuts(records);
        // The properties are learned side by side: each search is parallel within its steps, but its
        // serial stretches (refining a step's winner, building the model) leave a core idle otherwise.
        // Every property's result is its own, so the model is the same to the byte; of several
        // failures, the first property's is returned, as learning them in turn would.
        let built: Vec<Result<(PropertyModel, PropertyReport), ModelError>> = self
            .properties
            .par_iter()
            .enumerate()
            .map(|(pi, p)| {
                let built = self.build_property(records, pi, p, &cuts, (mode, search), budgets)?;
                on_property(pi, &p.name);
                Ok(built)
            })
            .collect();
        let built = built.into_iter().collect::<Result<Vec<_>, _>>()?;
        let (models, reports): (Vec<_>, Vec<_>) = built.into_iter().unzip();
        Ok((Model::try_new(self.laws.clone(), models)?, reports))
    }

    fn build_property(
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
        let (mut forest_share, mut forest_scores) = (None, Vec::new());
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
                    (forest_share, forest_scores) = self.forest(
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
                forest_scores,
            },
        ))
    }
}

impl AutoPlan {
    /// The forest of a property whose first chain's predicates are `chosen` (searched under `cfg`):
    /// grown over the pool's candidates that vary, with its weight chosen on `cfg`'s folds
    /// ([`forest::choose_forest_weight`]) against `nested`'s fold chains when given, else against the
    /// chain of `chosen`; `None` when that weight is 0. Also every weight's score.
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
    ) -> Result<(Option<ForestShare>, Vec<f64>), ModelError> {
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
        let (weight, scores) =
            forest::choose_forest_weight(data, records, cfg, &chains, &table, n_trees, alpha);
        if weight == 0.0 {
            return Ok((None, scores));
        }
        let all: Vec<usize> = (0..data.runs.len()).collect();
        let trees = forest::grow_forest(&table, &all, n_trees, alpha, cfg.seed);
        let (texts, trees) = forest::renumbered(trees, |c| pool[varying[c]].0.text());
        let share = ForestShare::try_new(weight, horizon_steps, texts, trees)?;
        Ok((Some(share), scores))
    }
}

/// Where [`search_starts`] puts the reactive rule's literals.
pub const RULE_START: usize = 0;

/// The starts a property's search begins from besides nothing, in this order (an
/// [`search::AlphaChoice::start`] indexes it): the reactive rule's literals, then the declared predicates.
pub fn search_starts<'a>(rule: &'a [usize], declared: &'a [usize]) -> [&'a [usize]; 2] {
    [rule, declared]
}

/// The candidates of a reactive rule's literals, in order (none without a rule): the rule's start among
/// [`search_starts`].
pub fn rule_start(rule: Option<&rule::RuleChoice>) -> Vec<usize> {
    rule.iter()
        .flat_map(|r| r.literals.iter().map(|&(c, _)| c))
        .collect()
}

/// The declared predicates of `p` other than its unsafe one, as indices into `pool` (its first entries),
/// in their declared order: the fixed abstraction, and a start of the search.
fn declared_start(p: &ResolvedProperty, pool: &[(Candidate, Source)]) -> Vec<usize> {
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

/// The fold seed of an ensemble's `k`-th further chain (`k` ≥ 1) under search seed `seed`: far from the
/// seeds a user steps through (`--seed 0, 1, ...`), so that members of neighbouring seeds differ.
pub fn member_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_add((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
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
fn counts_and_share(
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
