//! The real decision step: `monitor::Session` behind the bridge's [`Decide`] seam.
//!
//! A [`MonitorFactory`] holds one learned model and a prototype session; each connection gets a clone of the
//! prototype (fresh law windows), so making a session cannot fail once the factory exists. The explanation
//! data of a property (bits, words, most likely path) is recomputed only when its abstract state changes,
//! which keeps the per-frame step free of allocation in the steady state.

use std::sync::Arc;

use laws::Frame;
use monitor::{Model, ModelError, RiskMeasure, Session, SessionConfig, StateId};

use crate::decide::{Decide, DecideFactory, Decision, PropertyRisk};

#[cfg(test)]
mod tests;

/// Makes [`MonitorDecide`] sessions over one model.
pub struct MonitorFactory {
    prototype: Session,
    measure: RiskMeasure,
    label: String,
}

impl MonitorFactory {
    /// A factory over `model`, with the risk measured as P(eventually unsafe), or P(unsafe within
    /// `horizon_s` seconds) when given (the model must have that table).
    ///
    /// # Errors
    /// The model's laws do not compile, or it has no table for the horizon.
    pub fn new(
        model: Model,
        horizon_s: Option<f64>,
        label: String,
    ) -> Result<MonitorFactory, ModelError> {
        let measure = RiskMeasure::resolve(&model, horizon_s, false)?;
        let prototype = Session::new(&Arc::new(model), &SessionConfig::default())?;
        Ok(MonitorFactory {
            prototype,
            measure,
            label,
        })
    }
}

impl DecideFactory for MonitorFactory {
    fn session(&self) -> Box<dyn Decide> {
        let n = self.prototype.model().properties().len();
        let decision = Decision {
            properties: self
                .prototype
                .model()
                .properties()
                .iter()
                .enumerate()
                .map(|(i, p)| PropertyRisk {
                    name: p.name().to_owned(),
                    state_bits: String::new(),
                    state_words: String::new(),
                    risk: 0.0,
                    violated: false,
                    likely_path: Vec::new(),
                    expected_time_s: None,
                    calibrated: monitor::calibrate::for_measure(
                        self.prototype.model(),
                        i,
                        &self.measure,
                    ),
                    enforcement: monitor::calibrate::enforcement_for_measure(
                        self.prototype.model(),
                        i,
                        &self.measure,
                    ),
                    collision: p.is_collision(),
                })
                .collect(),
            seen: None,
        };
        Box::new(MonitorDecide {
            session: self.prototype.clone(),
            measure: self.measure.clone(),
            decision,
            last_state: vec![None; n],
        })
    }

    fn label(&self) -> String {
        self.label.clone()
    }
}

/// One connection's monitor: a `monitor::Session` and the decision it last produced.
pub struct MonitorDecide {
    session: Session,
    measure: RiskMeasure,
    decision: Decision,
    /// The state each property's explanation strings were computed for.
    last_state: Vec<Option<StateId>>,
}

impl Decide for MonitorDecide {
    fn step(&mut self, frame: &Frame) -> &Decision {
        let period_s = self
            .session
            .model()
            .properties()
            .first()
            .map_or(0.1, |p| p.config().frame_period_s);
        let reads_as_logged = self.session.model().road_users().is_none();
        let (outcome, seen) = self.session.step_seen(frame);
        if !reads_as_logged {
            self.decision
                .seen
                .get_or_insert_with(Frame::default)
                .clone_from(seen);
        }
        let mut changed: Vec<(usize, StateId)> = Vec::new();
        for (p, (po, out)) in outcome
            .properties
            .iter()
            .zip(&mut self.decision.properties)
            .enumerate()
        {
            out.risk = self.measure.risk(p, po);
            out.violated = po.unsafe_now;
            if self.last_state.get(p).copied().flatten() != Some(po.state) {
                changed.push((p, po.state));
            }
        }
        for (p, state) in changed {
            self.explain(p, state, period_s);
        }
        &self.decision
    }
}

impl MonitorDecide {
    /// Refreshes property `p`'s explanation for `state` (allocates; only on a change of state).
    fn explain(&mut self, p: usize, state: StateId, period_s: f64) {
        let Some(out) = self.decision.properties.get_mut(p) else {
            return;
        };
        out.state_bits = self.session.bit_string(p, state).unwrap_or_default();
        out.state_words = self.session.decode(p, state).unwrap_or_default();
        match self.session.most_likely_path(p, state) {
            Some(path) => {
                out.likely_path = path.words;
                out.expected_time_s = self
                    .session
                    .expected_steps(p, state)
                    .filter(|s| s.is_finite())
                    .map(|s| s * period_s);
            }
            None => {
                out.likely_path.clear();
                out.expected_time_s = None;
            }
        }
        if let Some(slot) = self.last_state.get_mut(p) {
            *slot = Some(state);
        }
    }
}
