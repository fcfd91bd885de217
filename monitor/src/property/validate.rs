//! The structural checks shared by building and loading a property's model.

use crate::domain::Domain;
use crate::error::{ModelError, StructureError};
use crate::StateId;

use super::{PropertyModel, MAX_MEMBERS};

impl PropertyModel {
    /// The structural checks shared by building and loading: every part covers the same state space, the
    /// unsafe and `done` states are absorbing, deadlock ids are in range.
    pub(super) fn validate(&self) -> Result<(), ModelError> {
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
}
