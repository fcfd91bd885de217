//! Responsibility-Sensitive Safety (RSS; Shalev-Shwartz, Shammah and Shashua, "On a Formal Model of Safe
//! and Scalable Self-driving Cars", 2017): the industry's reactive collision check, as a comparator for the
//! proactive monitor and as the flag signal `rssDangerous`.
//!
//! RSS calls a pair of road users *dangerous* when they are closer than a minimum safe distance both
//! longitudinally and laterally; the safe distances assume each party keeps accelerating for its response
//! time and then brakes with at least its minimum braking. The formulas (all accelerations magnitudes):
//! - **stopping distance** `s(v) = v ρ + ½ a_max ρ² + (v + ρ a_max)² / (2 b_min)` (speed capped at the
//!   maximum speed on acceleration during ρ);
//! - **same direction**, rear r behind front f: `[s_r(v_r) − v_f² / (2 b_max,f)]₊`;
//! - **opposite direction**, approaching: `s_c(v_c)` with `b_min,correct` for the party in its correct lane
//!   (taken to be the ego) plus `s_o(v_o)` with `b_min` for the other;
//! - **lateral**, with each party's lateral speed towards the other `u` and `u_ρ = u + ρ a_lat,max`:
//!   `(μ_1 + μ_2)/2 + [Σ (u + u_ρ)/2 · ρ + u_ρ |u_ρ| / (2 b_lat,min)]₊` (signed braking term, as ad-rss-lib
//!   computes it; with equal margins this is the paper's `μ + [...]₊`).
//! - **intersection** (crossing paths), following ad-rss-lib's structured intersection checker: safe when a
//!   party without priority can still stop before the conflict area (`distance to enter > s(v)`), or when
//!   the worst-case occupancies do not overlap in time (one is sure to have left — braking at `b_max` — before
//!   the other can arrive — accelerating for ρ then braking at `b_min`); otherwise dangerous. ad-rss-lib's
//!   further longitudinal check between two vehicles inside the intersection is not made.
//!
//! **Geometry without a map.** ad-rss-lib builds its situations from lane geometry; frames carry none, so
//! situations are built in the ego frame: a road user heading within 20° of the ego's heading (or of its
//! opposite) is a same- (opposite-) direction situation with longitudinal and lateral distances measured
//! between the footprints along and across the ego heading; any other is an intersection situation whose
//! conflict area is where the straight paths cross ([`crate::geometry::crossing`]). A road user flagged
//! `priority` has priority over the ego; otherwise neither has (both must be able to stop).
//!
//! **Parameters.** [`RssParams::CARLA`] (also `Default`) are CARLA's RSS sensor defaults, from
//! `LibCarla/source/carla/rss/RssCheck.cpp` (CARLA 0.9.10+): `RssCheck::GetDefaultVehicleDynamics` for the
//! ego (a_lon,max 3.5, b_max 8, b_min 4, b_min,correct 3, a_lat,max 0.2, b_lat,min 0.8 m/s², μ 0.1 m,
//! ρ 1 s, max speed on acceleration 100 m/s); the same with ρ = 2 s for other vehicles (the default actor
//! constellation callback), which also assumes a vehicle standing still does not accelerate (a_lon,max =
//! 0); `RssCheck::GetDefaultPedestrianDynamics` for pedestrians (a_lon,max 2, b_max 4, b_min 2,
//! b_min,correct 2, a_lat,max 0.001, b_lat,min 0.001 m/s², μ 0.1 m, ρ 0.5 s, max speed 10 m/s). CARLA checks
//! pedestrians with ad-rss-lib's unstructured mode; here they use the structured formulas above.

use crate::frame::{obstacle_type, Frame, Obstacle};
use crate::geometry::crossing::{crossing, MIN_CROSSING_RAD};
use crate::geometry::{EgoFrame, Mover, EGO_FRONT_M, EGO_REAR_M, EGO_WIDTH_M};

/// A road user's RSS dynamics. Accelerations are magnitudes (≥ 0), in m/s².
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RssDynamics {
    /// Largest longitudinal acceleration during the response time.
    pub accel_max_lon_mps2: f64,
    /// Hardest longitudinal braking (what a leader may do).
    pub brake_max_lon_mps2: f64,
    /// Least longitudinal braking after the response time.
    pub brake_min_lon_mps2: f64,
    /// Least longitudinal braking of a vehicle in its correct lane facing oncoming traffic.
    pub brake_min_correct_lon_mps2: f64,
    /// Largest lateral acceleration during the response time.
    pub accel_max_lat_mps2: f64,
    /// Least lateral braking after the response time.
    pub brake_min_lat_mps2: f64,
    /// Lateral fluctuation margin μ, m.
    pub lateral_margin_m: f64,
    /// Response time ρ, s.
    pub response_time_s: f64,
    /// Speed not exceeded while accelerating during the response time, m/s.
    pub max_speed_on_accel_mps: f64,
}

/// CARLA's vehicle defaults (see the module docs), with response time `rho`.
const fn carla_vehicle(rho: f64) -> RssDynamics {
    RssDynamics {
        accel_max_lon_mps2: 3.5,
        brake_max_lon_mps2: 8.0,
        brake_min_lon_mps2: 4.0,
        brake_min_correct_lon_mps2: 3.0,
        accel_max_lat_mps2: 0.2,
        brake_min_lat_mps2: 0.8,
        lateral_margin_m: 0.1,
        response_time_s: rho,
        max_speed_on_accel_mps: 100.0,
    }
}

/// The dynamics RSS assumes for the ego and for each kind of road user.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RssParams {
    /// The ego vehicle.
    pub ego: RssDynamics,
    /// Other vehicles (and bicycles and unknown road users).
    pub other_vehicle: RssDynamics,
    /// Pedestrians.
    pub pedestrian: RssDynamics,
    /// A vehicle slower than this is standing still and assumed not to accelerate (CARLA's special case),
    /// m/s.
    pub standstill_mps: f64,
}

impl Default for RssParams {
    fn default() -> Self {
        RssParams::CARLA
    }
}

/// Which RSS situation a pair is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RssSituation {
    /// Headings within 20°: one follows the other (or they drive side by side).
    SameDirection,
    /// Headings within 20° of opposite.
    OppositeDirection,
    /// Crossing paths, conflict area still ahead of (or around) both.
    Intersection,
    /// Crossing paths that one of them has already cleared.
    NotRelevant,
}

/// The RSS check of the ego against one road user.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RssVerdict {
    /// The situation the pair was classified in.
    pub situation: RssSituation,
    /// Longitudinally and laterally unsafe (intersections: neither stop nor time separation is assured).
    pub dangerous: bool,
    /// Longitudinal footprint gap, m (0 when the footprints overlap along the ego heading); for an
    /// intersection, the ego's distance to the conflict area.
    pub lon_distance_m: f64,
    /// The minimum safe longitudinal distance, m; for an intersection, the ego's stopping distance.
    pub lon_safe_distance_m: f64,
    /// Lateral footprint gap, m (0 when they overlap across the ego heading, and for intersections).
    pub lat_distance_m: f64,
    /// The minimum safe lateral distance, m (0 for intersections).
    pub lat_safe_distance_m: f64,
}

/// Speed and distance after accelerating at `accel` (negative: braking) for `t_s` from `v`, with the
/// speed kept within `[0, v_max]`.
fn accelerated(v: f64, accel: f64, t_s: f64, v_max: f64) -> (f64, f64) {
    let t_clamp = if accel > 0.0 {
        ((v_max - v) / accel).max(0.0)
    } else if accel < 0.0 {
        v / -accel
    } else {
        f64::INFINITY
    };
    let t1 = t_s.min(t_clamp);
    let v1 = if accel == 0.0 { v } else { v + accel * t1 };
    let d1 = v * t1 + 0.5 * accel * t1 * t1;
    (v1, d1 + v1 * (t_s - t1))
}

/// The worst-case stopping distance `s(v)` with least braking `brake_min` after the response time, m.
pub fn stopping_distance_m(v_mps: f64, dynamics: &RssDynamics, brake_min_mps2: f64) -> f64 {
    let (v_rho, d_rho) = accelerated(
        v_mps.max(0.0),
        dynamics.accel_max_lon_mps2,
        dynamics.response_time_s,
        dynamics.max_speed_on_accel_mps.max(v_mps),
    );
    d_rho + v_rho * v_rho / (2.0 * brake_min_mps2)
}

/// The minimum safe longitudinal distance for a `rear` road user at `v_rear` behind a `front` one at
/// `v_front`, both in the same direction, m.
pub fn same_direction_m(v_rear: f64, v_front: f64, rear: &RssDynamics, front: &RssDynamics) -> f64 {
    let front_stop = v_front.max(0.0).powi(2) / (2.0 * front.brake_max_lon_mps2);
    (stopping_distance_m(v_rear, rear, rear.brake_min_lon_mps2) - front_stop).max(0.0)
}

/// The minimum safe longitudinal distance between two road users approaching each other, m: `correct`
/// (in its own lane, braking at least `b_min,correct`) at `v_correct`, `other` at `v_other`, speeds ≥ 0.
pub fn opposite_direction_m(
    v_correct: f64,
    v_other: f64,
    correct: &RssDynamics,
    other: &RssDynamics,
) -> f64 {
    stopping_distance_m(v_correct, correct, correct.brake_min_correct_lon_mps2)
        + stopping_distance_m(v_other, other, other.brake_min_lon_mps2)
}

/// One party's worst-case lateral displacement towards the other, m (negative: away), from its lateral
/// speed towards the other `u`.
fn lateral_displacement_m(u: f64, d: &RssDynamics) -> f64 {
    let rho = d.response_time_s;
    let u_rho = u + rho * d.accel_max_lat_mps2;
    (u + u_rho) / 2.0 * rho + u_rho * u_rho.abs() / (2.0 * d.brake_min_lat_mps2)
}

/// The minimum safe lateral distance between two road users side by side, m, from each one's lateral
/// speed towards the other.
pub fn lateral_m(u_a: f64, u_b: f64, a: &RssDynamics, b: &RssDynamics) -> f64 {
    (a.lateral_margin_m + b.lateral_margin_m) / 2.0
        + (lateral_displacement_m(u_a, a) + lateral_displacement_m(u_b, b)).max(0.0)
}

/// The time to cover `dist_m` from speed `v`, accelerating at `accel_response` for the response time and
/// at `accel_after` afterwards (negative: braking), speed within `[0, v_max]`; `+inf` when the road user
/// stops first. ad-rss-lib's `calculateTimeToCoverDistance`.
pub fn time_to_cover_s(
    v: f64,
    dist_m: f64,
    dynamics: &RssDynamics,
    accel_response: f64,
    accel_after: f64,
) -> f64 {
    if dist_m <= 0.0 {
        return 0.0;
    }
    let v_max = dynamics.max_speed_on_accel_mps.max(v);
    let mut v = v.max(0.0);
    let (mut t, mut rest) = (0.0, dist_m);
    for (accel, duration) in [
        (accel_response, dynamics.response_time_s.max(0.0)),
        (accel_after, f64::INFINITY),
    ] {
        // Accelerating (or braking) until the speed reaches a bound or the phase ends.
        let t_clamp = if accel > 0.0 {
            ((v_max - v) / accel).max(0.0)
        } else if accel < 0.0 {
            v / -accel
        } else {
            0.0
        };
        let t1 = duration.min(t_clamp);
        let d1 = v * t1 + 0.5 * accel * t1 * t1;
        if d1 >= rest {
            // ½ a τ² + v τ = rest, the first root.
            let tau = if accel == 0.0 {
                rest / v
            } else {
                (-v + (v * v + 2.0 * accel * rest).max(0.0).sqrt()) / accel
            };
            return t + tau;
        }
        rest -= d1;
        t += t1;
        v = (v + accel * t1).clamp(0.0, v_max);
        // Constant speed for the rest of the phase.
        let t2 = duration - t1;
        if t2 > 0.0 {
            if v <= 0.0 {
                if duration.is_infinite() {
                    return f64::INFINITY;
                }
            } else if v * t2 >= rest {
                return t + rest / v;
            } else {
                rest -= v * t2;
            }
            t += t2;
        }
    }
    f64::INFINITY
}

impl RssParams {
    /// CARLA's RSS sensor defaults (see the module docs for the source).
    pub const CARLA: RssParams = RssParams {
        ego: carla_vehicle(1.0),
        other_vehicle: carla_vehicle(2.0),
        pedestrian: RssDynamics {
            accel_max_lon_mps2: 2.0,
            brake_max_lon_mps2: 4.0,
            brake_min_lon_mps2: 2.0,
            brake_min_correct_lon_mps2: 2.0,
            accel_max_lat_mps2: 0.001,
            brake_min_lat_mps2: 0.001,
            lateral_margin_m: 0.1,
            response_time_s: 0.5,
            max_speed_on_accel_mps: 10.0,
        },
        standstill_mps: 0.01,
    };

    /// The same dynamics with every response time (the ego's, other vehicles' and pedestrians') times
    /// `scale` (≥ 0; 1 leaves them as they are). The response time is the knob a safety engineer turns to
    /// trade RSS's warnings against its false alarms: a shorter one shrinks every safe distance.
    ///
    /// # Panics
    /// If `scale` is negative or not finite (a caller bug: the scales are constants).
    pub fn with_response_scale(self, scale: f64) -> RssParams {
        assert!(
            scale.is_finite() && scale >= 0.0,
            "response-time scale {scale} is not a finite non-negative number"
        );
        let scaled = |d: RssDynamics| RssDynamics {
            response_time_s: d.response_time_s * scale,
            ..d
        };
        RssParams {
            ego: scaled(self.ego),
            other_vehicle: scaled(self.other_vehicle),
            pedestrian: scaled(self.pedestrian),
            ..self
        }
    }

    /// The dynamics RSS assumes for `o`.
    pub fn dynamics_of(&self, o: &Obstacle) -> RssDynamics {
        if o.kind == obstacle_type::PEDESTRIAN {
            return self.pedestrian;
        }
        let mut d = self.other_vehicle;
        if o.speed_mps <= self.standstill_mps {
            d.accel_max_lon_mps2 = 0.0;
        }
        d
    }

    /// True when the ego is in a dangerous situation with some road user of `f`.
    pub fn dangerous(&self, f: &Frame) -> bool {
        let frame = EgoFrame::of(f);
        f.obstacles
            .iter()
            .any(|o| self.check_in(&frame, f.speed_mps, o).dangerous)
    }

    /// The RSS check of the ego of `f` against `o`.
    pub fn check(&self, f: &Frame, o: &Obstacle) -> RssVerdict {
        self.check_in(&EgoFrame::of(f), f.speed_mps, o)
    }

    /// The same from the frame's road users already in the ego frame (`movers[i]` is
    /// `EgoFrame::of(f).mover(&f.obstacles[i])`), so that other signals can share them.
    pub(crate) fn dangerous_movers(&self, f: &Frame, movers: &[Mover]) -> bool {
        f.obstacles
            .iter()
            .zip(movers)
            .any(|(o, m)| self.check_mover(m, f.speed_mps, o).dangerous)
    }

    fn check_in(&self, frame: &EgoFrame, ego_v: f64, o: &Obstacle) -> RssVerdict {
        self.check_mover(&frame.mover(o), ego_v, o)
    }

    fn check_mover(&self, m: &Mover, ego_v: f64, o: &Obstacle) -> RssVerdict {
        let other = self.dynamics_of(o);
        if m.rect.sin.abs() < MIN_CROSSING_RAD.sin() {
            self.structured(m, ego_v, &other)
        } else {
            self.intersection(m, ego_v, o.speed_mps, o.priority, &other)
        }
    }

    /// Same- or opposite-direction situation: longitudinal and lateral distances in the ego frame.
    fn structured(&self, m: &Mover, ego_v: f64, other: &RssDynamics) -> RssVerdict {
        let r = &m.rect;
        let same = r.cos > 0.0;
        let ext_lon = r.half_extent_on(1.0, 0.0);
        let (ahead_gap, behind_gap) = (r.cx - ext_lon - EGO_FRONT_M, EGO_REAR_M - (r.cx + ext_lon));
        let (lon_distance_m, lon_safe_distance_m) = if ahead_gap > 0.0 {
            let safe = if same {
                same_direction_m(ego_v, m.v_lon_mps, &self.ego, other)
            } else {
                opposite_direction_m(ego_v, -m.v_lon_mps, &self.ego, other)
            };
            (ahead_gap, safe)
        } else if behind_gap > 0.0 {
            // Behind and heading the opposite way, it drives away: any gap is safe.
            let safe = if same {
                same_direction_m(m.v_lon_mps, ego_v, other, &self.ego)
            } else {
                0.0
            };
            (behind_gap, safe)
        } else {
            (0.0, 0.0)
        };
        let half_ego = EGO_WIDTH_M / 2.0;
        let ext_lat = r.half_extent_on(0.0, 1.0);
        let (left_gap, right_gap) = (r.cy - ext_lat - half_ego, -half_ego - (r.cy + ext_lat));
        let (lat_distance_m, lat_safe_distance_m) = if left_gap > 0.0 {
            (left_gap, lateral_m(-m.v_lat_mps, 0.0, other, &self.ego))
        } else if right_gap > 0.0 {
            (right_gap, lateral_m(m.v_lat_mps, 0.0, other, &self.ego))
        } else {
            (0.0, 0.0)
        };
        // Overlapping projections are unsafe whatever the safe distance (touching counts as overlap).
        let lon_unsafe = lon_distance_m <= 0.0 || lon_distance_m <= lon_safe_distance_m;
        let lat_unsafe = lat_distance_m <= 0.0 || lat_distance_m <= lat_safe_distance_m;
        RssVerdict {
            situation: if same {
                RssSituation::SameDirection
            } else {
                RssSituation::OppositeDirection
            },
            dangerous: lon_unsafe && lat_unsafe,
            lon_distance_m,
            lon_safe_distance_m,
            lat_distance_m,
            lat_safe_distance_m,
        }
    }

    /// Crossing paths: ad-rss-lib's intersection rule on the conflict area of the straight paths.
    fn intersection(
        &self,
        m: &Mover,
        ego_v: f64,
        other_v: f64,
        other_priority: bool,
        other: &RssDynamics,
    ) -> RssVerdict {
        let mut verdict = RssVerdict {
            situation: RssSituation::NotRelevant,
            dangerous: false,
            lon_distance_m: f64::INFINITY,
            lon_safe_distance_m: 0.0,
            lat_distance_m: 0.0,
            lat_safe_distance_m: 0.0,
        };
        let Some(c) = crossing(&m.rect).filter(|c| c.open()) else {
            return verdict;
        };
        let ego = &self.ego;
        let ego_stop = stopping_distance_m(ego_v, ego, ego.brake_min_lon_mps2);
        verdict.situation = RssSituation::Intersection;
        verdict.lon_distance_m = c.ego_enter_m.max(0.0);
        verdict.lon_safe_distance_m = ego_stop;
        // A party without priority that can still stop before the area makes the situation safe. Without
        // a priority flag neither has priority, so either one stopping will do.
        if c.ego_enter_m > ego_stop {
            return verdict;
        }
        if !other_priority
            && c.other_enter_m > stopping_distance_m(other_v, other, other.brake_min_lon_mps2)
        {
            return verdict;
        }
        // Otherwise the worst-case occupancies must not overlap in time.
        let reach = |v: f64, d: f64, dy: &RssDynamics| {
            time_to_cover_s(v, d, dy, dy.accel_max_lon_mps2, -dy.brake_min_lon_mps2)
        };
        let leave = |v: f64, d: f64, dy: &RssDynamics| {
            time_to_cover_s(v, d, dy, -dy.brake_max_lon_mps2, -dy.brake_max_lon_mps2)
        };
        let (ego_reach, other_reach) = (
            reach(ego_v, c.ego_enter_m, ego),
            reach(other_v, c.other_enter_m, other),
        );
        let separated = ego_reach > leave(other_v, c.other_leave_m, other)
            || other_reach > leave(ego_v, c.ego_leave_m, ego)
            || (ego_reach.is_infinite() && other_reach.is_infinite());
        verdict.dangerous = !separated;
        verdict
    }
}

#[cfg(test)]
mod tests;
