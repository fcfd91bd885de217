//! One monitored property's learned model: abstraction, counts, chain, PAC summary and risk table.
//!
//! [`PropertyModel::build`] is the whole offline pipeline for one property (smoothing, PAC, tables), and
//! deserialisation re-runs its structural checks (see `PropertyModel::validate`): a loaded model is held
//! to the same invariants as a freshly built one.
//!
//! The pipeline's options are `config`'s; the structural checks, `validate`'s.

use laws::perception::RoadUserCorrection;
use serde::{Deserialize, Serialize};

use crate::av::AvDomain;
use crate::calibrate::{Calibration, RssTuning};
use crate::counts::Counts;
use crate::domain::Domain;
use crate::dtmc::Dtmc;
use crate::error::{ModelError, StructureError};
use crate::estimate::build_dtmc_with_prior;
use crate::forest::ForestShare;
use crate::pac::PacSummary;
use crate::provenance::{ReactiveRule, Selection};
use crate::share::FrameShare;
use crate::table::RiskTable;
use crate::StateId;

mod config;
mod validate;

pub use config::{BuildConfig, SmoothingPrior, DEFAULT_HORIZONS_S, MAX_FRAME_PERIOD_S};

/// The hierarchical outcome prior of every state of `fine`, the domain of `predicates` (see
/// [`SmoothingPrior::Hierarchical`]): the risk of its parent under the chain learned, hierarchically in
/// turn, from `counts` projected onto the predicates without the last one. `None` when there is no
/// coarser abstraction to back off to (one predicate, or the unsafe predicate last).
fn outcome_prior(
    fine: &AvDomain,
    predicates: &[String],
    unsafe_bit: usize,
    counts: &Counts,
    config: &BuildConfig,
) -> Result<Option<Vec<f64>>, ModelError> {
    let n = predicates.len();
    if n < 2 || unsafe_bit == n - 1 {
        return Ok(None);
    }
    let coarse_predicates = &predicates[..n - 1];
    let coarse = PropertyModel::domain_for(coarse_predicates, unsafe_bit, config)?;
    let mask: StateId = (1 << (n - 1)) - 1;
    let (fine_done, coarse_done) = (fine.done(), coarse.done());
    let coarse_counts = counts.project(coarse.n_states(), |s| {
        if s == fine_done {
            coarse_done
        } else {
            s & mask
        }
    })?;
    let coarse_prior = outcome_prior(
        &coarse,
        coarse_predicates,
        unsafe_bit,
        &coarse_counts,
        config,
    )?;
    let learned = build_dtmc_with_prior(
        &coarse,
        &coarse_counts,
        &config.laplace,
        coarse_prior.as_deref(),
    )?;
    let risk = crate::reach::eventually(&learned.dtmc, &unsafe_mask(&coarse));
    Ok(Some(
        (0..fine.n_states() as StateId)
            .map(|s| {
                if s == fine_done {
                    0.0
                } else {
                    risk[(s & mask) as usize]
                }
            })
            .collect(),
    ))
}

/// A learned property.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PropertyParts<MemberParts>")]
pub struct PropertyModel {
    name: String,
    law: String,
    predicates: Vec<String>,
    unsafe_bit: usize,
    config: BuildConfig,
    counts: Counts,
    dtmc: Dtmc,
    deadlocks: Vec<StateId>,
    pac: PacSummary,
    table: RiskTable,
    /// How the predicates were chosen (models learned before the search existed have none).
    selection: Option<Selection>,
    /// The best small reactive rule over the same candidates, the comparator `score` applies.
    reactive_rule: Option<ReactiveRule>,
    /// The calibrated alarm threshold (`avguard calibrate`).
    calibration: Option<Calibration>,
    /// Further chains of the same property (an ensemble, [`PropertyModel::with_members`]): each has its
    /// own predicates, counts and table; the property's risk is the mean of all chains' risks.
    members: Vec<PropertyModel>,
    /// The frame share mixed into this chain's risk ([`crate::share`]); `None`: the chain's alone.
    frame_share: Option<FrameShare>,
    /// The risks the monitor reads: `table`, mixed with `frame_share` when there is one. Derived, not
    /// stored.
    #[serde(skip_serializing)]
    risk: RiskTable,
    /// The forest mixed into the property's risk ([`crate::forest`]); `None`: none. Model files carry it
    /// after the properties ([`crate::model`]), so that older files read as they are.
    #[serde(skip_serializing)]
    forest: Option<ForestShare>,
    /// The threshold interventions use for a collision property, calibrated at its own false-alarm target
    /// (`avguard calibrate --enforce-target-false-alarms`); `None`: interventions use `calibration`. Model
    /// files carry it after the forests ([`crate::model`]), so that older files read as they are.
    #[serde(skip_serializing)]
    enforcement: Option<Calibration>,
    /// For a collision property, RSS tuned on the calibration runs to the alarm's false-alarm target (a
    /// comparator `score` reports; [`PropertyModel::with_rss_tuning`]). Model files carry it after the
    /// enforcement calibrations ([`crate::model`]), so that older files read as they are.
    #[serde(skip_serializing)]
    rss_tuning: Option<RssTuning>,
}

/// Most chains an ensemble may hold besides the property's own (a bound a model file cannot exceed).
pub const MAX_MEMBERS: usize = 15;

/// A stored property; `M` is what its members are read as.
#[derive(Deserialize)]
struct PropertyParts<M> {
    name: String,
    law: String,
    predicates: Vec<String>,
    unsafe_bit: usize,
    config: BuildConfig,
    counts: Counts,
    dtmc: Dtmc,
    deadlocks: Vec<StateId>,
    pac: PacSummary,
    table: RiskTable,
    selection: Option<Selection>,
    reactive_rule: Option<ReactiveRule>,
    calibration: Option<Calibration>,
    members: Vec<M>,
    frame_share: Option<FrameShare>,
}

/// A member's own member list must be empty: no value of this type can be read, so a file nesting
/// ensembles fails to decode at the first level instead of recursing.
#[derive(Deserialize)]
enum NoMember {}

/// An ensemble member as stored.
type MemberParts = PropertyParts<NoMember>;

impl<M> PropertyParts<M> {
    fn assemble(self, members: Vec<PropertyModel>) -> Result<PropertyModel, ModelError> {
        let risk = risk_of(&self.table, self.frame_share.as_ref())?;
        let m = PropertyModel {
            name: self.name,
            law: self.law,
            predicates: self.predicates,
            unsafe_bit: self.unsafe_bit,
            config: self.config,
            counts: self.counts,
            dtmc: self.dtmc,
            deadlocks: self.deadlocks,
            pac: self.pac,
            table: self.table,
            selection: self.selection,
            reactive_rule: self.reactive_rule,
            calibration: self.calibration,
            members,
            risk,
            frame_share: self.frame_share,
            forest: None,
            enforcement: None,
            rss_tuning: None,
        };
        m.validate()?;
        Ok(m)
    }
}

impl TryFrom<PropertyParts<MemberParts>> for PropertyModel {
    type Error = ModelError;
    fn try_from(mut p: PropertyParts<MemberParts>) -> Result<Self, Self::Error> {
        let members = std::mem::take(&mut p.members)
            .into_iter()
            .map(|m| m.assemble(Vec::new()))
            .collect::<Result<Vec<_>, _>>()?;
        p.assemble(members)
    }
}

impl PropertyModel {
    /// The domain of `predicates` (bit i = predicate i) with `unsafe_bit` unsafe, under `config`.
    ///
    /// # Errors
    /// See [`AvDomain::new`].
    pub fn domain_for(
        predicates: &[String],
        unsafe_bit: usize,
        config: &BuildConfig,
    ) -> Result<AvDomain, ModelError> {
        AvDomain::new(predicates.to_vec(), unsafe_bit, config.av())
    }

    /// Runs smoothing, the PAC check and the reachability solve for one property whose law has the
    /// property's name (see [`PropertyModel::build_for_law`]).
    ///
    /// # Errors
    /// Bad configuration, or counts over a different state space.
    pub fn build(
        name: &str,
        predicates: Vec<String>,
        unsafe_bit: usize,
        counts: Counts,
        config: &BuildConfig,
    ) -> Result<PropertyModel, ModelError> {
        Self::build_for_law(name, name, predicates, unsafe_bit, counts, config)
    }

    /// Runs smoothing, the PAC check and the reachability solve for property `name` of law `law`.
    ///
    /// # Errors
    /// Bad configuration, or counts over a different state space.
    pub fn build_for_law(
        name: &str,
        law: &str,
        predicates: Vec<String>,
        unsafe_bit: usize,
        counts: Counts,
        config: &BuildConfig,
    ) -> Result<PropertyModel, ModelError> {
        let domain = Self::domain_for(&predicates, unsafe_bit, config)?;
        let prior = match config.prior {
            SmoothingPrior::Flat => None,
            SmoothingPrior::Hierarchical => {
                outcome_prior(&domain, &predicates, unsafe_bit, &counts, config)?
            }
        };
        let learned = build_dtmc_with_prior(&domain, &counts, &config.laplace, prior.as_deref())?;
        let pac = PacSummary::compute(&domain, &counts, config.pac)?;
        let unsafe_mask = unsafe_mask(&domain);
        let table = RiskTable::compute(&learned.dtmc, &unsafe_mask, &config.horizons_steps)?;
        let m = PropertyModel {
            name: name.to_string(),
            law: law.to_string(),
            predicates,
            unsafe_bit,
            config: config.clone(),
            counts,
            dtmc: learned.dtmc,
            deadlocks: learned.deadlocks,
            pac,
            risk: table.clone(),
            table,
            selection: None,
            reactive_rule: None,
            calibration: None,
            members: Vec::new(),
            frame_share: None,
            forest: None,
            enforcement: None,
            rss_tuning: None,
        };
        m.validate()?;
        Ok(m)
    }

    /// The model whose risk mixes in `share` (replacing any earlier one; `None`: the chain's risk alone).
    ///
    /// # Errors
    /// [`ModelError::Structure`] when the share covers another number of states or other horizons.
    pub fn with_frame_share(
        mut self,
        share: Option<FrameShare>,
    ) -> Result<PropertyModel, ModelError> {
        self.risk = risk_of(&self.table, share.as_ref())?;
        self.frame_share = share;
        self.validate()?;
        Ok(self)
    }

    /// The model whose risk mixes in `forest` (replacing any earlier one; `None`: none). Its split
    /// predicates must read against the model's laws, which [`crate::Model::try_new`] checks.
    pub fn with_forest(mut self, forest: Option<ForestShare>) -> PropertyModel {
        self.forest = forest;
        self
    }

    /// The model with its selection record.
    pub fn with_selection(mut self, selection: Selection) -> PropertyModel {
        self.selection = Some(selection);
        self
    }

    /// The model with its reactive comparator rule.
    pub fn with_reactive_rule(mut self, rule: Option<ReactiveRule>) -> PropertyModel {
        self.reactive_rule = rule;
        self
    }

    /// The model with `members`, further chains of the same property learned on other abstractions (an
    /// ensemble: the risk is the mean of the chains' risks, see [`crate::session::Session`]), replacing
    /// any earlier ones.
    ///
    /// # Errors
    /// [`ModelError::Structure`] when a member belongs to another property or law, has another unsafe
    /// predicate, frame period or horizons, carries members, a rule, a calibration or a forest of its own, or when
    /// there are more than [`MAX_MEMBERS`].
    pub fn with_members(
        mut self,
        members: Vec<PropertyModel>,
    ) -> Result<PropertyModel, ModelError> {
        self.members = members;
        self.validate()?;
        Ok(self)
    }

    /// The model with a calibrated threshold (replacing any earlier one).
    ///
    /// # Errors
    /// [`ModelError::Config`] when the calibration is malformed (see [`Calibration::check`]) or its
    /// horizon has no table.
    pub fn with_calibration(
        mut self,
        calibration: Calibration,
    ) -> Result<PropertyModel, ModelError> {
        self.calibration = Some(calibration);
        self.validate()?;
        Ok(self)
    }

    /// The model with the threshold its interventions use (replacing any earlier one; `None`: the alarm
    /// calibration's). Only a collision property ([`PropertyModel::is_collision`]) takes one.
    ///
    /// # Errors
    /// [`ModelError::Config`] when the calibration is malformed or its horizon has no table (as
    /// [`PropertyModel::with_calibration`]), or the property is not a collision property.
    pub fn with_enforcement(
        mut self,
        enforcement: Option<Calibration>,
    ) -> Result<PropertyModel, ModelError> {
        self.enforcement = enforcement;
        self.validate()?;
        Ok(self)
    }

    /// The model with RSS tuned to the alarm's false-alarm target on the calibration runs (replacing any
    /// earlier tuning; `None`: none). Only a collision property ([`PropertyModel::is_collision`]) takes one.
    ///
    /// # Errors
    /// [`ModelError::Config`] when the tuning is malformed or the property is not a collision property.
    pub fn with_rss_tuning(
        mut self,
        tuning: Option<RssTuning>,
    ) -> Result<PropertyModel, ModelError> {
        self.rss_tuning = tuning;
        self.validate()?;
        Ok(self)
    }

    /// The same property, learned with its road users read as `correction` says (see
    /// [`BuildConfig::road_users`]): how a model file's one stored value reaches its properties.
    pub fn with_road_users(mut self, correction: RoadUserCorrection) -> PropertyModel {
        self.config.road_users = correction;
        self
    }

    /// Property name (the law whose violation is unsafe, or e.g. `no_collision`).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The law whose violation is this property's unsafe event (its antecedent drives the baseline).
    pub fn law(&self) -> &str {
        &self.law
    }
    /// Predicate texts, bit 0 first.
    pub fn predicates(&self) -> &[String] {
        &self.predicates
    }
    /// Index of the unsafe predicate.
    pub fn unsafe_bit(&self) -> usize {
        self.unsafe_bit
    }
    /// The options it was built with.
    pub fn config(&self) -> &BuildConfig {
        &self.config
    }
    /// The transition counts (source of truth).
    pub fn counts(&self) -> &Counts {
        &self.counts
    }
    /// The learned chain.
    pub fn dtmc(&self) -> &Dtmc {
        &self.dtmc
    }
    /// States with no estimate (see [`crate::estimate`]).
    pub fn deadlocks(&self) -> &[StateId] {
        &self.deadlocks
    }
    /// PAC figures.
    pub fn pac(&self) -> &PacSummary {
        &self.pac
    }
    /// The chain's reachability table: P(F unsafe), P(F≤k unsafe), expected steps and paths of the DTMC
    /// (what Storm checks).
    pub fn table(&self) -> &RiskTable {
        &self.table
    }
    /// The risks the monitor reads: [`PropertyModel::table`], mixed with the frame share when the
    /// model has one ([`crate::share`]).
    pub fn risk_table(&self) -> &RiskTable {
        &self.risk
    }
    /// The frame share mixed into the risk, if any.
    pub fn frame_share(&self) -> Option<&FrameShare> {
        self.frame_share.as_ref()
    }
    /// The forest mixed into the property's risk, if any ([`crate::forest`]).
    pub fn forest(&self) -> Option<&ForestShare> {
        self.forest.as_ref()
    }
    /// How the predicates were chosen, when recorded.
    pub fn selection(&self) -> Option<&Selection> {
        self.selection.as_ref()
    }
    /// The reactive comparator rule, when one was learned.
    pub fn reactive_rule(&self) -> Option<&ReactiveRule> {
        self.reactive_rule.as_ref()
    }
    /// The calibrated threshold, when calibrated.
    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }
    /// The threshold interventions use, when calibrated apart from the alarm's
    /// ([`PropertyModel::with_enforcement`]).
    pub fn enforcement(&self) -> Option<&Calibration> {
        self.enforcement.as_ref()
    }
    /// RSS tuned on the calibration runs to the alarm's false-alarm target, when calibrated with it
    /// ([`PropertyModel::with_rss_tuning`]).
    pub fn rss_tuning(&self) -> Option<&RssTuning> {
        self.rss_tuning.as_ref()
    }
    /// Whether the unsafe predicate is an atom over the collision flag alone (`collision==1`,
    /// `collision`): a collision property, which the bridge holds and may enforce at its own threshold.
    pub fn is_collision(&self) -> bool {
        self.predicates
            .get(self.unsafe_bit)
            .is_some_and(|text| reads_collision_alone(text))
    }
    /// Rebuilds the abstraction (cheap: predicates are parsed once).
    ///
    /// # Errors
    /// Never for a validated model; kept fallible because the domain constructor is.
    pub fn domain(&self) -> Result<AvDomain, ModelError> {
        Self::domain_for(&self.predicates, self.unsafe_bit, &self.config)
    }
    /// The ensemble's further chains (empty for a single chain).
    pub fn members(&self) -> &[PropertyModel] {
        &self.members
    }
    /// Every chain whose risks are averaged: the property's own, then its members.
    pub fn chains(&self) -> impl Iterator<Item = &PropertyModel> + '_ {
        std::iter::once(self).chain(&self.members)
    }
    /// Number of states (`2^k + 1`).
    pub fn n_states(&self) -> usize {
        self.dtmc.n_states()
    }
    /// Conservative risk `min(1, P(F unsafe) + ε_s)`, with ε_s the PAC error the state's data achieve.
    pub fn risk_upper_bound(&self, state: StateId) -> Option<f64> {
        let p = self.risk.eventually(state)?;
        Some((p + self.pac.epsilon_of(state)).min(1.0))
    }
}

/// The risks a chain's monitor reads: its reachability `table`, mixed with `share` when there is one.
fn risk_of(table: &RiskTable, share: Option<&FrameShare>) -> Result<RiskTable, StructureError> {
    match share {
        Some(share) => table.blended(share),
        None => Ok(table.clone()),
    }
}

/// Per state: is it unsafe.
pub fn unsafe_mask<D: Domain + ?Sized>(domain: &D) -> Vec<bool> {
    (0..domain.n_states() as StateId)
        .map(|s| domain.is_valid_state(s) && domain.is_unsafe(s))
        .collect()
}

/// Whether a predicate's text is an atom over the collision flag alone (`collision==1`, `collision`).
pub fn reads_collision_alone(text: &str) -> bool {
    laws::Atom::parse(text).is_ok_and(|a| a.signals() == [laws::Signal::Collision])
}

#[cfg(test)]
mod tests;
