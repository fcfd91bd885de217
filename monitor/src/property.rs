//! One monitored property's learned model: abstraction, counts, chain, PAC summary and risk table.
//!
//! [`PropertyModel::build`] is the whole offline pipeline for one property (smoothing, PAC, tables), and
//! deserialisation re-runs its structural checks (see `PropertyModel::validate`): a loaded model is held
//! to the same invariants as a freshly built one.

use serde::{Deserialize, Serialize};

use crate::av::{AvConfig, AvDomain, SmoothingScope};
use crate::calibrate::{Calibration, RssTuning};
use crate::counts::Counts;
use crate::domain::Domain;
use crate::dtmc::Dtmc;
use crate::error::{ModelError, StructureError};
use crate::estimate::{build_dtmc_with_prior, LaplaceConfig};
use crate::forest::ForestShare;
use crate::pac::{PacConfig, PacSummary};
use crate::provenance::{ReactiveRule, Selection};
use crate::share::FrameShare;
use crate::table::{RiskTable, MAX_HORIZON_STEPS};
use crate::StateId;

/// Options of the offline pipeline, shared by all properties of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildConfig {
    /// Laplace smoothing.
    pub laplace: LaplaceConfig,
    /// PAC parameters.
    pub pac: PacConfig,
    /// Time between frames, s (converts horizons in seconds to steps).
    pub frame_period_s: f64,
    /// Largest plausible acceleration magnitude, m/s² (speed validity rule).
    pub max_accel_mps2: f64,
    /// Horizons of the bounded tables, in steps, strictly increasing.
    pub horizons_steps: Vec<u32>,
    /// Length of the laws' "violated within the window" predicates (`L.w`), frames.
    pub window_frames: usize,
    /// Which valid transitions receive the Laplace α.
    pub smoothing: SmoothingScope,
    /// How a row's smoothing mass is split between its outcomes (models learned before the choice
    /// existed are flat).
    #[serde(default)]
    pub prior: SmoothingPrior,
}

/// How smoothing splits a row's mass between the unsafe outcome and the safe finish (see
/// [`crate::estimate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SmoothingPrior {
    /// Evenly: Laplace smoothing as the paper writes it.
    #[default]
    Flat,
    /// By the risk of the state's parent: the state of the abstraction without the last predicate,
    /// itself learned hierarchically (the first predicate's parent is the unsafe predicate alone, learned
    /// flat). The predicates' order matters: learned abstractions list them in the order chosen, each
    /// refining the ones before.
    Hierarchical,
}

impl SmoothingPrior {
    /// The prior's name as `avguard info` prints it (`flat`, `hierarchical`).
    pub fn as_str(self) -> &'static str {
        match self {
            SmoothingPrior::Flat => "flat",
            SmoothingPrior::Hierarchical => "hierarchical",
        }
    }
}

impl Default for BuildConfig {
    /// α = 1, ε = δ = 0.05, 10 Hz, horizons 1, 2, 3 and 5 s, a 10 s violation window.
    fn default() -> Self {
        BuildConfig {
            laplace: LaplaceConfig::default(),
            pac: PacConfig::default(),
            frame_period_s: 0.1,
            max_accel_mps2: 10.0,
            horizons_steps: vec![10, 20, 30, 50],
            window_frames: 100,
            smoothing: SmoothingScope::Local,
            prior: SmoothingPrior::Flat,
        }
    }
}

/// The bounded tables' horizons of [`BuildConfig::default`] and [`BuildConfig::at_frame_period`], s.
pub const DEFAULT_HORIZONS_S: [f64; 4] = [1.0, 2.0, 3.0, 5.0];

/// The longest frame period a model may step at, s.
pub const MAX_FRAME_PERIOD_S: f64 = 10.0;

impl BuildConfig {
    /// The defaults for frames every `frame_period_s` seconds: the horizons [`DEFAULT_HORIZONS_S`] become
    /// steps at that rate.
    ///
    /// # Errors
    /// A period that is not a positive number of seconds up to [`MAX_FRAME_PERIOD_S`].
    pub fn at_frame_period(frame_period_s: f64) -> Result<BuildConfig, ModelError> {
        if !(frame_period_s > 0.0 && frame_period_s <= MAX_FRAME_PERIOD_S) {
            return Err(ModelError::Config(format!(
                "frame period {frame_period_s:?} s is not a positive number of seconds (at most \
                 {MAX_FRAME_PERIOD_S})"
            )));
        }
        Ok(BuildConfig {
            frame_period_s,
            horizons_steps: Self::steps_from_seconds(&DEFAULT_HORIZONS_S, frame_period_s)?,
            ..BuildConfig::default()
        })
    }

    /// Horizons in seconds → steps at the frame rate (rounded, deduplicated, sorted).
    ///
    /// # Errors
    /// A horizon that is not a positive finite number, or longer than [`MAX_HORIZON_STEPS`] steps.
    pub fn steps_from_seconds(
        horizons_s: &[f64],
        frame_period_s: f64,
    ) -> Result<Vec<u32>, ModelError> {
        let mut v = Vec::with_capacity(horizons_s.len());
        for &h in horizons_s {
            if !(h.is_finite() && h > 0.0) {
                return Err(ModelError::Config(format!("horizon {h} s is not positive")));
            }
            let steps = (h / frame_period_s).round();
            if steps.is_nan() || steps > f64::from(MAX_HORIZON_STEPS) {
                return Err(ModelError::Config(format!(
                    "horizon {h:?} s is {steps:?} steps of {frame_period_s:?} s; at most {MAX_HORIZON_STEPS} \
                     steps are solved"
                )));
            }
            v.push((steps as u32).max(1));
        }
        v.sort_unstable();
        v.dedup();
        Ok(v)
    }

    fn av(&self) -> AvConfig {
        AvConfig {
            frame_period_s: self.frame_period_s,
            max_accel_mps2: self.max_accel_mps2,
            smoothing: self.smoothing,
        }
    }
}

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

    /// The structural checks shared by building and loading: every part covers the same state space, the
    /// unsafe and `done` states are absorbing, deadlock ids are in range.
    fn validate(&self) -> Result<(), ModelError> {
        let domain = Self::domain_for(&self.predicates, self.unsafe_bit, &self.config)?;
        let n = domain.n_states();
        for (what, found) in [
            ("counts", self.counts.n_states()),
            ("dtmc", self.dtmc.n_states()),
            ("pac", self.pac.n_states()),
            ("table", self.table.n_states()),
        ] {
            if found != n {
                return Err(StructureError::SizeMismatch {
                    what,
                    expected: n,
                    found,
                }
                .into());
            }
        }
        if self.table.horizons_steps() != self.config.horizons_steps.as_slice() {
            return Err(
                StructureError::Invalid("table horizons differ from the config".into()).into(),
            );
        }
        for s in 0..n as StateId {
            if domain.is_terminal(s) && self.dtmc.row(s) != (&[s][..], &[1.0][..]) {
                return Err(StructureError::Invalid(format!(
                    "terminal state {s} is not absorbing"
                ))
                .into());
            }
        }
        for (what, c) in [
            ("calibration", &self.calibration),
            ("enforcement calibration", &self.enforcement),
        ] {
            let Some(c) = c else { continue };
            c.check()
                .map_err(|e| StructureError::Invalid(format!("{what}: {e}")))?;
            if let Some(h) = c.horizon_steps {
                if !self.config.horizons_steps.contains(&h) {
                    return Err(StructureError::Invalid(format!(
                        "{what}: no table for the horizon of {h} steps"
                    ))
                    .into());
                }
            }
        }
        if self.enforcement.is_some() && !self.is_collision() {
            return Err(StructureError::Invalid(
                "an enforcement calibration on a property that is not a collision property".into(),
            )
            .into());
        }
        if let Some(t) = &self.rss_tuning {
            t.check()
                .map_err(|e| StructureError::Invalid(format!("RSS tuning: {e}")))?;
            if !self.is_collision() {
                return Err(StructureError::Invalid(
                    "an RSS tuning on a property that is not a collision property".into(),
                )
                .into());
            }
        }
        if let Some(r) = &self.reactive_rule {
            if r.literals.is_empty() || r.literals.len() > 2 {
                return Err(StructureError::Invalid(format!(
                    "reactive rule has {} literals (1 or 2 allowed)",
                    r.literals.len()
                ))
                .into());
            }
        }
        self.validate_members()?;
        if let Some(&bad) = self.deadlocks.iter().find(|&&s| s as usize >= n) {
            return Err(StructureError::OutOfRange {
                what: "deadlocks",
                index: u64::from(bad),
                bound: n as u64,
            }
            .into());
        }
        Ok(())
    }

    /// An ensemble's members agree with the property on everything the risk is compared by (each member
    /// was validated on its own as it was built or read).
    fn validate_members(&self) -> Result<(), ModelError> {
        if self.members.len() > MAX_MEMBERS {
            return Err(StructureError::Invalid(format!(
                "{} ensemble members (at most {MAX_MEMBERS})",
                self.members.len()
            ))
            .into());
        }
        let Some(unsafe_text) = self.predicates.get(self.unsafe_bit) else {
            return Err(StructureError::Invalid("unsafe predicate out of range".into()).into());
        };
        for (k, m) in self.members.iter().enumerate() {
            let differs = if m.name != self.name || m.law != self.law {
                Some("another property or law")
            } else if m.predicates.get(m.unsafe_bit) != Some(unsafe_text) {
                Some("another unsafe predicate")
            } else if m.config.horizons_steps != self.config.horizons_steps {
                Some("other horizons")
            } else if m.config.frame_period_s.to_bits() != self.config.frame_period_s.to_bits()
                || m.config.window_frames != self.config.window_frames
            {
                Some("another frame period or window")
            } else if !m.members.is_empty() {
                Some("members of its own")
            } else if m.reactive_rule.is_some()
                || m.calibration.is_some()
                || m.enforcement.is_some()
                || m.rss_tuning.is_some()
                || m.forest.is_some()
            {
                Some("a rule, calibration or forest of its own")
            } else {
                None
            };
            if let Some(what) = differs {
                return Err(StructureError::Invalid(format!(
                    "ensemble member {} has {what}",
                    k + 1
                ))
                .into());
            }
        }
        Ok(())
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
