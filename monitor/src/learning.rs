//! Learning from frames: a [`Plan`] (law texts + resolved properties + build options) hands out
//! [`Learner`]s that turn runs into per-property [`Counts`], and builds the [`Model`] from merged counts.
//!
//! A learner encodes frames with the same [`crate::abstraction`] tracker a runtime [`crate::Session`] uses,
//! so batch learning and the runtime see the same abstract states. Each property's trace of a run stops
//! at its first unsafe frame (unsafe states are absorbing; later frames say nothing about the chain) or,
//! if the run stays safe for that property, ends with a step into the "run finished" state `done`.
//!
//! Counts are the source of truth: learners over disjoint sets of runs, merged with [`merge_counts`], give
//! exactly the counts (hence exactly the model) of one learner over all runs. That is what lets `avguard
//! learn` learn files in parallel.

use laws::{Frame, LawSource, SignalContext};

use crate::abstraction::{parse_laws, Compiled, PropertyDef, Tracker};
use crate::av::AvDomain;
use crate::counts::Counts;
use crate::domain::Domain;
use crate::error::ModelError;
use crate::model::Model;
use crate::property::{BuildConfig, PropertyModel};
use crate::spec::{self, PropertySpec, ResolvedProperty};
use crate::StateId;

#[cfg(test)]
mod tests;

/// What to learn: the laws, the properties with their predicates, and the build options.
#[derive(Debug, Clone)]
pub struct Plan {
    laws: Vec<LawSource>,
    properties: Vec<ResolvedProperty>,
    config: BuildConfig,
    compiled: Compiled,
    domains: Vec<AvDomain>,
}

impl Plan {
    /// A plan for already resolved properties.
    ///
    /// # Errors
    /// No properties, a property that does not compile against the laws, or a bad configuration.
    pub fn new(
        laws: Vec<LawSource>,
        properties: Vec<ResolvedProperty>,
        config: BuildConfig,
    ) -> Result<Plan, ModelError> {
        if properties.is_empty() {
            return Err(ModelError::Config("no properties to learn".into()));
        }
        let defs: Vec<PropertyDef<'_>> = properties.iter().map(PropertyDef::of).collect();
        let compiled = Compiled::new(&laws, &defs, config.frame_period_s, config.window_frames)?
            .with_road_users(config.road_users);
        let domains = properties
            .iter()
            .map(|p| PropertyModel::domain_for(&p.predicates, p.unsafe_bit, &config))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Plan {
            laws,
            properties,
            config,
            compiled,
            domains,
        })
    }

    /// A plan for declared properties (e.g. from `properties.toml`).
    ///
    /// # Errors
    /// Law texts that do not parse, an unknown law or atom, too many predicates (see [`spec`]).
    pub fn from_specs(
        laws: Vec<LawSource>,
        specs: &[PropertySpec],
        config: BuildConfig,
    ) -> Result<Plan, ModelError> {
        let set = parse_laws(&laws)?;
        let resolved = spec::resolve_all(specs, &set)?;
        Plan::new(laws, resolved, config)
    }

    /// A plan with one property per law ([`spec::default_properties`]); also returns the laws left out
    /// for having more than [`spec::MAX_PROPERTY_PREDICATES`] predicates.
    ///
    /// # Errors
    /// Law texts that do not parse, or no law small enough.
    pub fn with_default_properties(
        laws: Vec<LawSource>,
        config: BuildConfig,
    ) -> Result<(Plan, Vec<String>), ModelError> {
        let set = parse_laws(&laws)?;
        let (resolved, skipped) = spec::default_properties(&set);
        Ok((Plan::new(laws, resolved, config)?, skipped))
    }

    /// The properties, in order.
    pub fn properties(&self) -> &[ResolvedProperty] {
        &self.properties
    }

    /// The build options.
    pub fn config(&self) -> &BuildConfig {
        &self.config
    }

    /// Zero counts, one per property.
    pub fn empty_counts(&self) -> Vec<Counts> {
        self.domains
            .iter()
            .map(|d| Counts::new(d.n_states()))
            .collect()
    }

    /// A learner with empty counts; laws read scenario constants from `context`.
    ///
    /// # Errors
    /// Never for a plan that was built (kept fallible because the evaluator constructor is).
    pub fn learner(&self, context: SignalContext) -> Result<Learner, ModelError> {
        Ok(Learner {
            tracker: self.compiled.tracker(context)?,
            domains: self.domains.clone(),
            counts: self.empty_counts(),
            traces: vec![Vec::new(); self.properties.len()],
        })
    }

    /// Builds every property (smoothing, PAC, tables) from merged counts and assembles the model.
    ///
    /// # Errors
    /// Counts of the wrong number or shape, or a failed build.
    pub fn build(&self, counts: Vec<Counts>) -> Result<Model, ModelError> {
        if counts.len() != self.properties.len() {
            return Err(ModelError::Config(format!(
                "{} count tables for {} properties",
                counts.len(),
                self.properties.len()
            )));
        }
        let props = self
            .properties
            .iter()
            .zip(counts)
            .map(|(p, c)| {
                PropertyModel::build_for_law(
                    &p.name,
                    &p.law,
                    p.predicates.clone(),
                    p.unsafe_bit,
                    c,
                    &self.config,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Model::try_new(self.laws.clone(), props)
    }
}

/// Adds `other` (one count table per property) into `into`.
///
/// # Errors
/// Different numbers of properties or state spaces.
pub fn merge_counts(into: &mut [Counts], other: &[Counts]) -> Result<(), ModelError> {
    if into.len() != other.len() {
        return Err(ModelError::Config(format!(
            "merging counts of {} properties into {}",
            other.len(),
            into.len()
        )));
    }
    for (a, b) in into.iter_mut().zip(other) {
        a.merge(b)?;
    }
    Ok(())
}

/// Turns runs into per-property counts.
#[derive(Debug, Clone)]
pub struct Learner {
    tracker: Tracker,
    domains: Vec<AvDomain>,
    counts: Vec<Counts>,
    traces: Vec<Vec<StateId>>,
}

impl Learner {
    /// The abstract trace of every property for one run (see the module docs for where traces end).
    pub fn traces(&mut self, frames: &[Frame]) -> Vec<Vec<StateId>> {
        self.encode_run(frames);
        self.traces.clone()
    }

    fn encode_run(&mut self, frames: &[Frame]) {
        self.tracker.reset();
        for t in &mut self.traces {
            t.clear();
        }
        let mut open = vec![true; self.domains.len()];
        for frame in frames {
            let encoded = self.tracker.step(frame);
            for ((e, trace), still_open) in encoded.iter().zip(&mut self.traces).zip(&mut open) {
                if *still_open {
                    trace.push(e.state);
                    *still_open = !e.unsafe_state;
                }
            }
        }
        for ((trace, still_open), d) in self.traces.iter_mut().zip(open).zip(&self.domains) {
            if still_open && !trace.is_empty() {
                trace.push(d.done());
            }
        }
    }

    /// Counts one run's transitions for every property.
    ///
    /// # Errors
    /// Never for a learner from a [`Plan`] (states come from the plan's own encoders).
    pub fn observe_run(&mut self, frames: &[Frame]) -> Result<(), ModelError> {
        self.encode_run(frames);
        for ((c, d), trace) in self.counts.iter_mut().zip(&self.domains).zip(&self.traces) {
            c.observe_trace(d, trace)?;
        }
        Ok(())
    }

    /// The counts so far, one per property.
    pub fn counts(&self) -> &[Counts] {
        &self.counts
    }

    /// The counts, consuming the learner.
    pub fn into_counts(self) -> Vec<Counts> {
        self.counts
    }
}
