//! Enforcement: alarm episodes with hysteresis, the intervention to send, and the events to log.
//!
//! An *episode* of a property starts on the first frame whose risk reaches θ and ends on the first frame
//! whose risk falls below `θ - hysteresis`. Exactly one intervention is sent when an episode starts and one
//! `clear` when it ends, so a risk hovering around θ does not spam the simulator. A violation (the decision
//! step says it became certain) is logged once per property per connection.
//!
//! Target speed for `slow_down`: the largest speed from which the ego can still stop before the nearest
//! stop line, stop-sign line, crosswalk or junction entry ahead at the configured deceleration, keeping a
//! margin: `v = sqrt(2 · a · max(0, d − margin))`; also no more than the speed limit, and never more than
//! the current speed. This is the speed at which every stop/yield law ahead can still be met by braking.
//! With no such feature ahead and no speed limit exceeded, the target halves the current speed (a generic
//! "reduce energy" response for collision risk). `stop` targets 0; `alert` has no target.

use laws::Frame;
use serde::Serialize;

use crate::decide::{Decision, PropertyRisk};

#[cfg(test)]
mod tests;

/// What an intervention asks of the vehicle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Slow down to a target speed.
    SlowDown,
    /// Stop.
    Stop,
    /// Only tell the driver / operator.
    Alert,
    /// The alarm episode is over.
    Clear,
}

/// Enforcement settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnforceConfig {
    /// θ: an episode starts when risk ≥ θ.
    pub threshold: f64,
    /// The episode ends when risk < θ − hysteresis.
    pub hysteresis: f64,
    /// Horizon of the risk measure, s (`None` = eventually); reported in interventions.
    pub horizon_s: Option<f64>,
    /// Action on episode start.
    pub action: Action,
    /// Braking deceleration assumed for the target speed, m/s².
    pub decel_mps2: f64,
    /// Distance kept before a stop line, m.
    pub stop_margin_m: f64,
    /// Use each property's calibrated θ and debounce (`avguard calibrate`) where the model has one, and
    /// `threshold` elsewhere.
    pub use_calibrated: bool,
}

impl Default for EnforceConfig {
    fn default() -> Self {
        EnforceConfig {
            threshold: 0.5,
            hysteresis: 0.1,
            horizon_s: None,
            action: Action::SlowDown,
            decel_mps2: 3.0,
            stop_margin_m: 2.0,
            use_calibrated: false,
        }
    }
}

/// An intervention message (INTERFACES §3, topic `/avguard/intervention`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Intervention {
    /// Frame time, s.
    pub stamp: f64,
    /// Property name.
    pub property: String,
    /// The risk at that frame.
    pub probability: f64,
    /// θ.
    pub threshold: f64,
    /// Horizon, s, or null.
    pub horizon_s: Option<f64>,
    /// Action.
    pub action: Action,
    /// Target speed, m/s, or null.
    pub target_speed_mps: Option<f64>,
    /// Abstract state bits.
    pub state: String,
    /// Human-readable explanation.
    pub explanation: String,
}

/// One thing worth logging or sending.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// An episode started; carries the intervention sent.
    AlarmStart(Intervention),
    /// An episode ended; carries the `clear` sent.
    AlarmEnd(Intervention),
    /// A violation became certain at `t`.
    Violation {
        /// Frame time, s.
        t: f64,
        /// Property.
        property: String,
    },
}

/// Per-connection enforcement state.
#[derive(Debug)]
pub struct Enforcer {
    config: EnforceConfig,
    /// Per property (by position in the decision): episode active, violation already logged.
    state: Vec<(String, bool, bool)>,
    /// Per property (as `state`): consecutive frames with risk at or above its θ (for the debounce).
    streaks: Vec<u32>,
}

impl Enforcer {
    /// A fresh enforcer.
    pub fn new(config: EnforceConfig) -> Self {
        Enforcer {
            config,
            state: Vec::new(),
            streaks: Vec::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &EnforceConfig {
        &self.config
    }

    /// Consumes one frame's decision and appends the resulting events.
    pub fn step(&mut self, frame: &Frame, decision: &Decision, events: &mut Vec<Event>) {
        for (pos, prop) in decision.properties.iter().enumerate() {
            let (threshold, debounce) = self.threshold_of(prop);
            let clear_below = (threshold - self.config.hysteresis).max(0.0);
            // Sessions keep a fixed property order: the same position is checked first, a search by
            // name only when the order changed (e.g. after a model swap).
            let same_pos = self.state.get(pos).is_some_and(|(n, _, _)| n == &prop.name);
            let found = if same_pos {
                Some(pos)
            } else {
                self.state.iter().position(|(n, _, _)| n == &prop.name)
            };
            let idx = match found {
                Some(i) => i,
                None => {
                    self.state.push((prop.name.clone(), false, false));
                    self.state.len() - 1
                }
            };
            self.streaks.resize(self.state.len(), 0);
            let Some(slot) = self.state.get_mut(idx) else {
                continue;
            };
            if prop.violated && !slot.2 {
                slot.2 = true;
                events.push(Event::Violation {
                    t: frame.t,
                    property: prop.name.clone(),
                });
            }
            let risk = if prop.risk.is_finite() {
                prop.risk
            } else {
                0.0
            };
            let streak = self.streaks.get_mut(idx).map_or(0, |s| {
                *s = if risk >= threshold {
                    s.saturating_add(1)
                } else {
                    0
                };
                *s
            });
            if !slot.1 && risk >= threshold && streak >= debounce {
                slot.1 = true;
                let action = self.config.action;
                events.push(Event::AlarmStart(self.intervention(frame, prop, action)));
            } else if slot.1 && risk < clear_below {
                slot.1 = false;
                events.push(Event::AlarmEnd(self.intervention(
                    frame,
                    prop,
                    Action::Clear,
                )));
            }
        }
    }

    /// The θ and debounce (frames) that apply to `prop`.
    fn threshold_of(&self, prop: &PropertyRisk) -> (f64, u32) {
        match prop.calibrated {
            Some((theta, debounce)) if self.config.use_calibrated => (theta, debounce.max(1)),
            _ => (self.config.threshold, 1),
        }
    }

    fn intervention(&self, frame: &Frame, prop: &PropertyRisk, action: Action) -> Intervention {
        let target_speed_mps = match action {
            Action::SlowDown => Some(target_speed_mps(frame, &self.config)),
            Action::Stop => Some(0.0),
            Action::Alert | Action::Clear => None,
        };
        Intervention {
            stamp: frame.t,
            property: prop.name.clone(),
            probability: prop.risk,
            threshold: self.threshold_of(prop).0,
            horizon_s: self.config.horizon_s,
            action,
            target_speed_mps,
            state: prop.state_bits.clone(),
            explanation: explain(prop, &self.config, self.threshold_of(prop).0, action),
        }
    }
}

/// The slow-down target speed (see the module docs for the rule), m/s.
pub fn target_speed_mps(frame: &Frame, config: &EnforceConfig) -> f64 {
    let current = frame.speed_mps.max(0.0);
    let nearest_m = nearest_stop_point_m(frame);
    let mut target = f64::INFINITY;
    if nearest_m.is_finite() {
        let room_m = (nearest_m - config.stop_margin_m).max(0.0);
        target = (2.0 * config.decel_mps2.max(0.1) * room_m).sqrt();
    }
    if frame.speed_limit_mps.is_finite() && frame.speed_limit_mps >= 0.0 {
        target = target.min(frame.speed_limit_mps);
    }
    if !target.is_finite() || target >= current {
        target = if nearest_m.is_finite() {
            target.min(current)
        } else {
            0.5 * current
        };
    }
    target.clamp(0.0, current)
}

/// Distance to the nearest point ahead where the car may have to stop (stop line, stop sign, crosswalk
/// or junction entry), m; +inf when there is none.
pub fn nearest_stop_point_m(frame: &Frame) -> f64 {
    [
        frame.stopline_dist_m,
        frame.stopsign_dist_m,
        frame.crosswalk_dist_m,
        frame.junction_dist_m,
    ]
    .into_iter()
    .filter(|d| d.is_finite() && *d >= 0.0)
    .fold(f64::INFINITY, f64::min)
}

fn explain(prop: &PropertyRisk, config: &EnforceConfig, threshold: f64, action: Action) -> String {
    let measure = match config.horizon_s {
        Some(h) => format!("P(violation of {} within {h} s)", prop.name),
        None => format!("P(eventual violation of {})", prop.name),
    };
    let relation = if action == Action::Clear { "<" } else { ">=" };
    let mut text = format!(
        "state [{}] {}; {measure} = {:.3} {relation} {}",
        prop.state_bits,
        if prop.state_words.is_empty() {
            "(no predicate holds)"
        } else {
            &prop.state_words
        },
        prop.risk,
        if action == Action::Clear {
            (threshold - config.hysteresis).max(0.0)
        } else {
            threshold
        }
    );
    if action != Action::Clear && !prop.likely_path.is_empty() {
        text.push_str("; most likely path: ");
        text.push_str(&prop.likely_path.join(" -> "));
        if let Some(t) = prop.expected_time_s {
            text.push_str(&format!(", expected in {t:.1} s"));
        }
    }
    text
}
