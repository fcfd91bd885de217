//! avguard's prediction signals: where the ego and the road users are heading, from one frame.
//!
//! These extend LawBreaker's vocabulary (which only says where things *are*) with what a constant-speed,
//! constant-heading extrapolation says will happen; they exist so that a monitor's abstraction can see a
//! violation or a collision coming. Definitions and edge cases (v: ego speed; "stopped": v ≤
//! [`STOPPED_MPS`], LawBreaker's `speed < 0.5` km/h):
//! - **Required deceleration** to stop at a feature `d` metres ahead (`stoplineAhead.decel`,
//!   `stopSignAhead.decel`, `junctionAhead.decel`), m/s²: `v² / 2d`. 0 when stopped or when there is no such
//!   feature ahead; `+inf` when moving with the front on the line (`d = 0`: it can no longer stop before
//!   it). The junction's distance is 0 *inside* the junction (frame contract), where there is nothing left
//!   to stop for: 0 there.
//! - **Time to the junction entry** at the current speed (`junctionAhead.time`), s: `d / v`; 0 inside the
//!   junction; `+inf` when stopped before it or when there is none.
//! - **Closest point of approach** (`closestApproach`, `.time`, `.ttc`): per road user (every kind), the
//!   smallest footprint gap to the ego within [`CPA_HORIZON_S`] if both keep their velocity
//!   ([`crate::geometry::cpa`], exact for translating footprints), and when it is reached; the signals are
//!   those of the most critical road user (smallest gap, then earliest). `.ttc` is that time when the gap
//!   reaches 0 (a footprint-aware, 2-D time to collision), else `+inf`. No road user: `+inf` everywhere.
//! - **Time to collision at the current acceleration** (`closestApproach.accTtc`), s: when the ego's
//!   footprint would first touch a road user's if the ego kept its acceleration (braking to a standstill
//!   and staying there) and the road user its velocity, within [`CPA_HORIZON_S`]
//!   ([`crate::geometry::contact`], exact); the earliest over every road user, `+inf` when none. Where
//!   `.ttc` sees a car pulling away from a give-way line as never arriving, this sees it as soon as it
//!   accelerates, and it sees a car that has begun to brake as stopping short.
//! - **Priority conflict** (`PriorityConflict`, `.time`, `.egoTime`, `.gap`): for each road user flagged
//!   `priority` whose straight path crosses the ego's ([`crate::geometry::crossing`]) in a conflict area
//!   that neither has left yet: its distance (front) to the area, its time to reach it, the ego's time to
//!   reach it, and the predicted gap between their occupancies of the area, s — 0 when ego and road user
//!   would be in it at the same time (what predicts a collision at a junction), otherwise the time between
//!   one leaving and the other arriving. Occupancy at constant speed: from front-in to rear-out; a stopped
//!   party outside never arrives (gap `+inf`); a stopped party inside never leaves. The signals are those
//!   of the most critical such road user (smallest gap, then the earliest to arrive); `+inf` when there is
//!   none.

use crate::frame::{Frame, Obstacle};
use crate::geometry::contact::Accelerating;
use crate::geometry::cpa::{closest_approach, closest_approach_lower_bound};
use crate::geometry::crossing::crossing;
use crate::geometry::{ego_rect, EgoFrame, Mover, Rect};

/// At or below this speed a vehicle counts as stopped, m/s (LawBreaker's `speed < 0.5` km/h).
pub const STOPPED_MPS: f64 = 0.5 / 3.6;

/// How far ahead the closest point of approach looks, s.
pub const CPA_HORIZON_S: f64 = 5.0;

/// The deceleration needed to stop within `dist_m` from `v_mps`, m/s² (see the module docs).
pub fn required_decel_mps2(v_mps: f64, dist_m: f64) -> f64 {
    if !dist_m.is_finite() || v_mps <= STOPPED_MPS {
        0.0
    } else if dist_m <= 0.0 {
        f64::INFINITY
    } else {
        v_mps * v_mps / (2.0 * dist_m)
    }
}

/// The time to cover `dist_m` at `v_mps`: 0 when already there (`dist_m ≤ 0`), `+inf` when stopped.
pub fn time_to_reach_s(v_mps: f64, dist_m: f64) -> f64 {
    if dist_m <= 0.0 {
        0.0
    } else if v_mps <= STOPPED_MPS || !dist_m.is_finite() {
        f64::INFINITY
    } else {
        dist_m / v_mps
    }
}

/// The time until a speed of `v_mps` reaches `limit_mps` at a constant acceleration `accel_mps2`: 0 when
/// it is there already (`v ≥ limit`), `(limit − v) / a` when speeding up, `+inf` when not (`a ≤ 0`), when
/// the acceleration is not finite, when there is no limit (`+inf`), or when the speed or limit is NaN.
pub fn time_to_limit_s(v_mps: f64, limit_mps: f64, accel_mps2: f64) -> f64 {
    if v_mps.is_nan() || limit_mps.is_nan() {
        f64::INFINITY
    } else if v_mps >= limit_mps {
        0.0
    } else if accel_mps2 > 0.0 && accel_mps2.is_finite() {
        (limit_mps - v_mps) / accel_mps2
    } else {
        f64::INFINITY
    }
}

/// The gap between two occupancy intervals `[a_in, a_out]` and `[b_in, b_out]`, s: 0 when they overlap,
/// `+inf` when either party never arrives.
fn occupancy_gap_s(a_in: f64, a_out: f64, b_in: f64, b_out: f64) -> f64 {
    if a_in.is_infinite() || b_in.is_infinite() {
        f64::INFINITY
    } else if a_in <= b_out && b_in <= a_out {
        0.0
    } else {
        (a_in - b_out).max(b_in - a_out)
    }
}

/// Which groups of motion signals a caller reads; the others keep their [`MotionSignals::NONE`] values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MotionNeeds {
    /// `closestApproach` and its time and time to collision.
    pub cpa: bool,
    /// `closestApproach.accTtc`.
    pub contact_accelerating: bool,
    /// `PriorityConflict` and its times and gap.
    pub priority_conflict: bool,
}

impl MotionNeeds {
    /// True when some motion signal is needed.
    pub fn any(&self) -> bool {
        self.cpa || self.contact_accelerating || self.priority_conflict
    }

    /// True when road user `o` can change a needed signal (only priority road users have a conflict).
    fn reads(&self, o: &Obstacle) -> bool {
        self.cpa || self.contact_accelerating || o.priority
    }
}

/// The obstacle-derived motion signals of one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotionSignals {
    /// Smallest predicted footprint gap to any road user within the horizon, m.
    pub cpa_m: f64,
    /// When it is reached, s.
    pub cpa_time_s: f64,
    /// When the footprints would first touch, s (`+inf` when they would not within the horizon).
    pub cpa_ttc_s: f64,
    /// When the footprints would first touch with the ego at its current acceleration, s (`+inf`: not
    /// within the horizon).
    pub accel_ttc_s: f64,
    /// The most critical priority road user's distance to the conflict area, m.
    pub conflict_m: f64,
    /// Its time to reach the area, s.
    pub conflict_time_s: f64,
    /// The ego's time to reach the area, s.
    pub conflict_ego_time_s: f64,
    /// The predicted gap between their occupancies of the area, s.
    pub conflict_gap_s: f64,
}

impl MotionSignals {
    /// No road user: everything `+inf`.
    pub const NONE: MotionSignals = MotionSignals {
        cpa_m: f64::INFINITY,
        cpa_time_s: f64::INFINITY,
        cpa_ttc_s: f64::INFINITY,
        accel_ttc_s: f64::INFINITY,
        conflict_m: f64::INFINITY,
        conflict_time_s: f64::INFINITY,
        conflict_ego_time_s: f64::INFINITY,
        conflict_gap_s: f64::INFINITY,
    };

    /// Computes the groups of `needs` from a frame.
    pub fn from_frame_needed(f: &Frame, needs: MotionNeeds) -> MotionSignals {
        let mut out = MotionSignals::NONE;
        if !needs.any() {
            return out;
        }
        let frame = EgoFrame::of(f);
        let ego = ego_rect();
        for o in &f.obstacles {
            if needs.reads(o) {
                out.consider(f, o, &frame.mover(o), &ego, needs);
            }
        }
        out.finish()
    }

    /// The same from the frame's road users already in the ego frame (`movers[i]` is
    /// `EgoFrame::of(f).mover(&f.obstacles[i])`), so that other signals can share them.
    pub(crate) fn from_movers(f: &Frame, movers: &[Mover], needs: MotionNeeds) -> MotionSignals {
        let mut out = MotionSignals::NONE;
        if !needs.any() {
            return out;
        }
        let ego = ego_rect();
        for (o, m) in f.obstacles.iter().zip(movers) {
            if needs.reads(o) {
                out.consider(f, o, m, &ego, needs);
            }
        }
        out.finish()
    }

    /// Takes road user `o` (`m` in the ego frame) into account.
    fn consider(&mut self, f: &Frame, o: &Obstacle, m: &Mover, ego: &Rect, needs: MotionNeeds) {
        let out = self;
        if needs.cpa {
            let w = (m.v_lon_mps - f.speed_mps, m.v_lat_mps);
            if closest_approach_lower_bound(ego, &m.rect, w, CPA_HORIZON_S) <= out.cpa_m {
                let a = closest_approach(ego, &m.rect, w, CPA_HORIZON_S);
                if a.dist_m < out.cpa_m || (a.dist_m == out.cpa_m && a.time_s < out.cpa_time_s) {
                    out.cpa_m = a.dist_m;
                    out.cpa_time_s = a.time_s;
                }
            }
        }
        if needs.contact_accelerating {
            let motion = Accelerating {
                speed_mps: f.speed_mps,
                accel_mps2: f.accel_mps2,
                other_mps: (m.v_lon_mps, m.v_lat_mps),
                horizon_s: out.accel_ttc_s.min(CPA_HORIZON_S),
            };
            if motion.gap_lower_bound(ego, &m.rect) <= 0.0 {
                if let Some(t) = motion.first_contact(ego, &m.rect) {
                    out.accel_ttc_s = out.accel_ttc_s.min(t);
                }
            }
        }
        if needs.priority_conflict && o.priority {
            let Some(c) = crossing(&m.rect).filter(|c| c.open()) else {
                return;
            };
            let ego_in = time_to_reach_s(f.speed_mps, c.ego_enter_m);
            let ego_out = time_to_reach_s(f.speed_mps, c.ego_leave_m);
            let other_in = time_to_reach_s(o.speed_mps, c.other_enter_m);
            let other_out = time_to_reach_s(o.speed_mps, c.other_leave_m);
            let gap = occupancy_gap_s(ego_in, ego_out, other_in, other_out);
            if gap < out.conflict_gap_s
                || (gap == out.conflict_gap_s && other_in < out.conflict_time_s)
            {
                out.conflict_m = c.other_enter_m.max(0.0);
                out.conflict_time_s = other_in;
                out.conflict_ego_time_s = ego_in;
                out.conflict_gap_s = gap;
            }
        }
    }

    /// The time to collision from the closest approach, once every road user is in.
    fn finish(mut self) -> MotionSignals {
        if self.cpa_m == 0.0 {
            self.cpa_ttc_s = self.cpa_time_s;
        }
        self
    }
}

#[cfg(test)]
mod tests;
