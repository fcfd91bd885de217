//! Enforcement: alarm episodes with hysteresis, the intervention to send, and the events to log.
//!
//! An *episode* of a property starts on the first frame whose risk reaches θ and ends on the first frame
//! whose risk falls below `θ - hysteresis`, but not before [`EnforceConfig::collision_hold_s`] for a
//! property whose violation is a collision ([`PropertyRisk::collision`]: braking lowers its risk at once,
//! and an early `clear` lets the vehicle go on into the conflict). One intervention is sent when an episode
//! starts and one `clear` when it ends, so a risk hovering around θ does not spam the simulator; in
//! between, only a turn of the brake check (below) sends another. A violation (the decision
//! step says it became certain) is logged once per property per connection.
//!
//! Target speed for `slow_down`: the largest speed from which the ego can still stop before the nearest
//! stop line, stop-sign line, crosswalk or junction entry ahead at the configured deceleration, keeping a
//! margin: `v = sqrt(2 · a · max(0, d − margin))`; also no more than the speed limit, and never more than
//! the current speed. This is the speed at which every stop/yield law ahead can still be met by braking.
//! With no such feature ahead and no speed limit exceeded, the target halves the current speed (a generic
//! "reduce energy" response for collision risk). `stop` targets 0; `alert` has no target.
//!
//! Before asking to brake, the [`brake_check`] rolls out braking and keeping on over the next seconds; when
//! braking would leave the vehicle in another road user's path and keeping on would not (a turn across
//! oncoming traffic already under way), the episode's intervention is an `alert` instead, and while the
//! episode lasts it is revised ([`Event::AlarmUpdate`]) whenever that verdict turns.

use laws::Frame;
use serde::Serialize;

use crate::decide::{Decision, PropertyRisk};

pub mod brake_check;

use brake_check::{BrakeCheck, PreviousPose};

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
    /// Horizon of the brake check ([`brake_check`]), s; 0 turns it off (always brake as told).
    pub brake_check_s: f64,
    /// Shortest alarm episode of a collision property ([`PropertyRisk::collision`]), s.
    pub collision_hold_s: f64,
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
            brake_check_s: DEFAULT_BRAKE_CHECK_S,
            collision_hold_s: DEFAULT_COLLISION_HOLD_S,
        }
    }
}

/// The default shortest episode of a collision property, s: on design runs (seed 9000, the demo's model)
/// 1 s removed the most collisions of 0, 0.5, 1 and 2 s (`docs/MEASUREMENTS.md`, session 20).
pub const DEFAULT_COLLISION_HOLD_S: f64 = 1.0;

/// The brake check's default horizon, s: the lead the product aims for (2 s on the independent
/// intersection) with a margin, as the forests' (`monitor::select::forest::HORIZON_S`).
pub const DEFAULT_BRAKE_CHECK_S: f64 = 3.0;

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
    /// An active episode's intervention changed (the brake check turned: `alert` instead of braking, or
    /// braking again); carries the intervention sent, which replaces the episode's earlier one.
    AlarmUpdate(Intervention),
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
    /// Per property, in the order first seen.
    slots: Vec<Slot>,
    /// The previous frame's time and heading (for the brake check's yaw rate).
    previous: Option<PreviousPose>,
    /// The vehicle's own acceleration: that of the last frame on which no intervention of ours asked it
    /// to brake (the brake check's "keeping on" future), m/s².
    own_accel_mps2: f64,
}

/// One property's enforcement state.
#[derive(Debug)]
struct Slot {
    name: String,
    /// An alarm episode is active.
    active: bool,
    /// Its violation has been logged.
    violation_logged: bool,
    /// Consecutive frames with risk at or above its θ (for the debounce).
    streak: u32,
    /// The active episode's last intervention asks the vehicle to brake (`slow_down` or `stop`).
    braking: bool,
    /// When the active episode started, s.
    started_t: f64,
}

impl Enforcer {
    /// A fresh enforcer.
    pub fn new(config: EnforceConfig) -> Self {
        Enforcer {
            config,
            slots: Vec::new(),
            previous: None,
            own_accel_mps2: 0.0,
        }
    }

    /// The settings.
    pub fn config(&self) -> &EnforceConfig {
        &self.config
    }

    /// Consumes one frame's decision and appends the resulting events.
    pub fn step(&mut self, frame: &Frame, decision: &Decision, events: &mut Vec<Event>) {
        let brakes = matches!(self.config.action, Action::SlowDown | Action::Stop);
        let curvature = brake_check::curvature(frame, self.previous);
        self.previous = Some(PreviousPose {
            t: frame.t,
            heading: frame.heading,
        });
        if !self.slots.iter().any(|s| s.braking) && frame.accel_mps2.is_finite() {
            self.own_accel_mps2 = frame.accel_mps2;
        }
        let own_accel_mps2 = self.own_accel_mps2;
        // The check is about the vehicle, not a property: one verdict per frame for every episode, with
        // the hysteresis of the vehicle's state (some episode holds off braking). Rolled out at most once
        // per frame, and only when an episode needs it.
        let holding_off = brakes && self.slots.iter().any(|s| s.active && !s.braking);
        let mut outlook: Option<BrakeCheck> = None;
        for (pos, prop) in decision.properties.iter().enumerate() {
            let (threshold, debounce) = self.threshold_of(prop);
            let clear_below = (threshold - self.config.hysteresis).max(0.0);
            // Sessions keep a fixed property order: the same position is checked first, a search by
            // name only when the order changed (e.g. after a model swap).
            let same_pos = self.slots.get(pos).is_some_and(|s| s.name == prop.name);
            let idx = if same_pos {
                pos
            } else if let Some(i) = self.slots.iter().position(|s| s.name == prop.name) {
                i
            } else {
                self.slots.push(Slot {
                    name: prop.name.clone(),
                    active: false,
                    violation_logged: false,
                    streak: 0,
                    braking: false,
                    started_t: f64::NEG_INFINITY,
                });
                self.slots.len() - 1
            };
            if prop.violated && !self.slots[idx].violation_logged {
                self.slots[idx].violation_logged = true;
                events.push(Event::Violation {
                    t: frame.t,
                    property: prop.name.clone(),
                });
            }
            let risk = laws::geometry::finite_or_zero(prop.risk);
            let slot = &mut self.slots[idx];
            slot.streak = if risk >= threshold {
                slot.streak.saturating_add(1)
            } else {
                0
            };
            let starts = !slot.active && risk >= threshold && slot.streak >= debounce;
            // A collision's episode lasts at least the hold: braking for one frame lowers the risk, and
            // a `clear` then would let the vehicle go on into the conflict it was braking for.
            let held =
                prop.collision && frame.t - slot.started_t < self.config.collision_hold_s - 1e-9;
            let ends = slot.active && risk < clear_below && !held;
            let was_braking = slot.braking;
            let active = slot.active;
            if ends {
                slot.active = false;
                slot.braking = false;
                events.push(Event::AlarmEnd(self.intervention(
                    frame,
                    prop,
                    Action::Clear,
                    None,
                )));
                continue;
            }
            if !(starts || active) {
                continue;
            }
            // An episode starts or goes on: brake, unless braking would leave the vehicle in another
            // road user's path and keeping on would not.
            let check = if brakes && self.config.brake_check_s > 0.0 {
                Some(*outlook.get_or_insert_with(|| {
                    // The road users where the model sees them: smoothed and moved ahead as it reads
                    // them.
                    brake_check::check(
                        decision.seen.as_ref().unwrap_or(frame),
                        &brake_check::Futures {
                            curvature,
                            own_accel_mps2,
                            decel_mps2: self.config.decel_mps2,
                            horizon_s: self.config.brake_check_s,
                        },
                    )
                }))
            } else {
                None
            };
            let hold_off = check.is_some_and(|c| c.hold_off(holding_off));
            let action = if hold_off {
                Action::Alert
            } else {
                self.config.action
            };
            let now_braking = matches!(action, Action::SlowDown | Action::Stop);
            let slot = &mut self.slots[idx];
            slot.active = true;
            slot.braking = now_braking;
            if starts {
                slot.started_t = frame.t;
                events.push(Event::AlarmStart(
                    self.intervention(frame, prop, action, check),
                ));
            } else if now_braking != was_braking {
                events.push(Event::AlarmUpdate(
                    self.intervention(frame, prop, action, check),
                ));
            }
        }
    }

    /// The θ and debounce (frames) that apply to `prop`: with calibrated thresholds, its interventions'
    /// own where the model has them, else its alarm's.
    fn threshold_of(&self, prop: &PropertyRisk) -> (f64, u32) {
        match prop.enforcement.or(prop.calibrated) {
            Some((theta, debounce)) if self.config.use_calibrated => (theta, debounce.max(1)),
            _ => (self.config.threshold, 1),
        }
    }

    fn intervention(
        &self,
        frame: &Frame,
        prop: &PropertyRisk,
        action: Action,
        check: Option<BrakeCheck>,
    ) -> Intervention {
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
            explanation: explain(prop, &self.config, self.threshold_of(prop).0, action, check),
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

fn explain(
    prop: &PropertyRisk,
    config: &EnforceConfig,
    threshold: f64,
    action: Action,
    check: Option<BrakeCheck>,
) -> String {
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
    if let Some(check) = check {
        let verdict = if action == Action::Alert {
            "so no slow-down: the vehicle's own controller stays in charge"
        } else {
            "so braking is safe"
        };
        text.push_str(&format!("; brake check: {}, {verdict}", check.describe()));
    }
    text
}
