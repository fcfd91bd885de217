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
//!
//! One property's build under the plan — its search, ensemble, weights and rule — is `build`'s.

mod candidates;
pub mod criterion;
pub mod data;
pub mod forest;
pub mod nested;
pub mod pool;
pub mod rule;
pub mod search;

mod build;
use build::counts_and_share;

#[cfg(test)]
mod tests;

use laws::{Atom, Signal};
use rayon::prelude::*;

use crate::error::ModelError;
use crate::model::Model;
use crate::property::{BuildConfig, PropertyModel};
pub use crate::provenance::{AbstractionMode, ReactiveRule, Selection, SelectionStep};
use crate::spec::{ResolvedProperty, WINDOW_SUFFIX};
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
    /// How the forest was chosen: the cross-validated score of each forest weight of
    /// [`forest::FOREST_WEIGHTS`], from which the stored forest's weight was chosen (empty when no forest
    /// was grown: `forest_trees` 0, or no search), the kind of trees they are of, and under
    /// [`forest::ForestKind::Either`] the other kind's best score.
    pub forest: forest::ForestChoice,
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
            self.config.road_users,
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

/// The fold seed of an ensemble's `k`-th further chain (`k` ≥ 1) under search seed `seed`: far from the
/// seeds a user steps through (`--seed 0, 1, ...`), so that members of neighbouring seeds differ.
pub fn member_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_add((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}
