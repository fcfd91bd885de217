//! The ego driver: a parameterised human-like policy on top of the Intelligent Driver Model (IDM).
//!
//! Longitudinal control only (the ego follows its route): IDM for car following and free driving, plus
//! "virtual stopped leaders" at places where the driver decides to stop (red or yellow light, stop sign,
//! yield point of an unprotected left turn, a jammed junction, a crosswalk with a pedestrian). The
//! human-like parts that make some runs violate laws or collide:
//! - **reaction delay**: a decision computed at t reaches the pedals at t + reaction time;
//! - **attention lapses** (Poisson arrivals): during a lapse the driver keeps the pedal where it was and
//!   takes no new decision;
//! - **dilemma zone** at yellow: stop only when the deceleration needed is at most what this driver accepts;
//! - **gap acceptance** with a critical gap and misjudged oncoming speeds;
//! - per-run compliance draws (rolling stops, entering a jammed junction, not yielding to far pedestrians,
//!   missing a limit sign).

use std::collections::VecDeque;

use laws::frame::light_color;
use rand::Rng;

use crate::scenario::{EgoSpec, LapseEffect};

/// IDM parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IdmParams {
    pub max_accel_mps2: f64,
    pub comfort_decel_mps2: f64,
    pub time_headway_s: f64,
    pub min_gap_m: f64,
}

/// The road user the IDM follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Leader {
    /// Bumper-to-bumper gap, m.
    pub gap_m: f64,
    /// Its speed along the follower's path, m/s.
    pub speed_mps: f64,
}

impl Leader {
    /// A standing leader `gap_m` ahead (a virtual one stands for a stop point).
    pub fn standing(gap_m: f64) -> Leader {
        Leader {
            gap_m,
            speed_mps: 0.0,
        }
    }
}

/// IDM acceleration for speed `v` and desired speed `v0` (m/s), with an optional leader.
pub(crate) fn idm(p: &IdmParams, v: f64, v0: f64, leader: Option<Leader>) -> f64 {
    let free = 1.0 - (v / v0.max(0.1)).powi(4);
    let interaction = leader.map_or(0.0, |l| {
        let (gap, v_lead) = (l.gap_m, l.speed_mps);
        let dyn_gap = v * p.time_headway_s
            + v * (v - v_lead) / (2.0 * (p.max_accel_mps2 * p.comfort_decel_mps2).sqrt());
        let s_star = p.min_gap_m + dyn_gap.max(0.0);
        (s_star / gap.max(0.05)).powi(2)
    });
    p.max_accel_mps2 * (free - interaction)
}

/// Within this distance of a jammed junction's entry, a driver who respects the jam stops at once, m.
const JAM_WAIT_RANGE_M: f64 = 40.0;

/// Within this distance of a stop point the driver brakes kinematically to a standstill, m.
const FINAL_STOP_M: f64 = 1.5;

/// A left-turning driver judges the oncoming gap within this distance of the yield point, m.
const LEFT_TURN_LOOK_M: f64 = 10.0;

/// A driver approaching a give-way junction judges the gap from where they could still stop comfortably
/// after this long, s.
const GIVE_WAY_LOOK_S: f64 = 1.5;

/// The deceleration with which a driver slows towards the approach speed of a give-way junction, m/s².
const GIVE_WAY_APPROACH_DECEL_MPS2: f64 = 2.0;

/// Time constant of the pedal noise, s.
const PEDAL_NOISE_TAU_S: f64 = 0.5;

/// Hardest braking the ego can do, m/s².
pub(crate) const MAX_BRAKE_MPS2: f64 = 8.0;

/// What the driver perceives at one tick (built by the simulation from the world state). Distances are
/// from the ego's front bumper along the route.
#[derive(Debug, Clone, Default)]
pub(crate) struct Perception {
    /// Simulation time, s.
    pub t: f64,
    pub speed_mps: f64,
    /// Speed limit in force.
    pub limit_mps: f64,
    /// Upcoming limit changes.
    pub limits_ahead: Vec<LimitAhead>,
    /// The first limit of the route (what a driver who missed the signs keeps to).
    pub first_limit_mps: f64,
    /// Nearest road user in the ego path.
    pub leader: Option<Leader>,
    /// The light governing the ego lane (only while its stop line is ahead).
    pub light: Option<LightAhead>,
    /// A stop sign (while its line is ahead or just reached), or a junction without control whose cross
    /// traffic the ego must let pass.
    pub stop_sign: Option<StopSignAhead>,
    /// A turn at the junction ahead.
    pub turn: Option<TurnAhead>,
    /// An unprotected left turn, or a give-way junction.
    pub give_way: Option<GiveWay>,
    /// Distance to the junction entry while the junction ahead is jammed, m.
    pub jam_dist_m: Option<f64>,
    /// A crosswalk while a pedestrian has priority.
    pub crosswalk: Option<CrosswalkAhead>,
}

/// An upcoming speed-limit sign.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LimitAhead {
    pub dist_m: f64,
    pub limit_mps: f64,
}

/// The light ahead: its colour ([`light_color`]) and the distance to its stop line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LightAhead {
    pub color: i32,
    pub dist_m: f64,
}

/// A stop line ahead and whether the junction is clear to go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StopSignAhead {
    pub dist_m: f64,
    pub clear: bool,
}

/// A turn ahead: distance to the junction entry (0 inside) and the turn radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TurnAhead {
    pub dist_m: f64,
    pub radius_m: f64,
}

/// A place where the ego must let priority traffic pass (an unprotected left turn, a give-way junction):
/// distance to the yield point and the smallest judged time-to-arrival of priority traffic at the
/// conflict zone (`inf` when none). At a give-way junction (`approach`) the driver also slows to look. A
/// driver who has not committed holds until their front is `hold_m` past the yield point (where the
/// priority traffic's lane begins).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GiveWay {
    pub dist_m: f64,
    pub min_tta_s: f64,
    pub approach: bool,
    pub hold_m: f64,
}

/// A crosswalk where a pedestrian has priority, and whether one is in or next to the ego lane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CrosswalkAhead {
    pub dist_m: f64,
    pub ped_near_lane: bool,
}

/// Stop-sign progress.
#[derive(Debug, Clone, Copy, PartialEq)]
enum StopSign {
    Approaching,
    Stopped { since_t: f64 },
    Go,
}

/// One run's driver: sampled parameters and decision state.
#[derive(Debug, Clone)]
pub(crate) struct Driver {
    pub idm: IdmParams,
    v_factor: f64,
    ignore_limits: bool,
    lapse_rate_per_s: f64,
    lapse_s: (f64, f64),
    lapse_effect: LapseEffect,
    yellow_stop_decel_mps2: f64,
    critical_gap_s: f64,
    pub judgement_error: f64,
    rolling_stop: bool,
    jam_ignore: bool,
    jam_stop_decel_mps2: f64,
    ped_ignore: bool,
    lateral_accel_mps2: f64,
    give_way_approach_mps: f64,
    /// Pedal noise: standard deviation, m/s² (0: none), and its current value.
    pedal_noise_mps2: f64,
    noise_mps2: f64,
    /// Uses the turn signal before turning.
    pub signals_turns: bool,
    // Decision state.
    pending: VecDeque<f64>,
    last_desired: f64,
    lapse_until_t: f64,
    light_seen: i32,
    light_stop: bool,
    stop_sign: StopSign,
    give_way_committed: bool,
}

impl Driver {
    /// Samples a driver.
    pub fn sample(spec: &EgoSpec, dt: f64, rng: &mut impl Rng) -> Driver {
        let reaction_s = spec.reaction_s.sample(rng);
        // At most 3 s / 1 ms = 3000 ticks: the scenario bounds `reaction_s` and the frame period.
        let delay_ticks = (reaction_s / dt).round() as usize;
        Driver {
            idm: IdmParams {
                max_accel_mps2: spec.max_accel_mps2.sample(rng),
                comfort_decel_mps2: spec.comfort_decel_mps2.sample(rng),
                time_headway_s: spec.time_headway_s.sample(rng),
                min_gap_m: spec.min_gap_m.sample(rng),
            },
            v_factor: spec.desired_speed_factor.sample(rng),
            ignore_limits: chance(spec.ignore_limit_prob, rng),
            lapse_rate_per_s: spec.lapses_per_min.sample(rng) / 60.0,
            lapse_s: (spec.lapse_s.lo(), spec.lapse_s.hi()),
            lapse_effect: spec.lapse_effect,
            yellow_stop_decel_mps2: spec.yellow_stop_decel_mps2.sample(rng),
            critical_gap_s: spec.critical_gap_s.sample(rng),
            judgement_error: spec.speed_judgement_error.sample(rng),
            rolling_stop: chance(spec.rolling_stop_prob, rng),
            jam_ignore: chance(spec.jam_ignore_prob, rng),
            jam_stop_decel_mps2: spec.jam_stop_decel_mps2.sample(rng),
            ped_ignore: chance(spec.ped_ignore_prob, rng),
            lateral_accel_mps2: spec.lateral_accel_mps2.sample(rng),
            give_way_approach_mps: spec.give_way_approach_kph.sample(rng) / 3.6,
            pedal_noise_mps2: spec.pedal_noise_mps2.sample(rng),
            noise_mps2: 0.0,
            signals_turns: rng.random_bool(0.95),
            pending: std::iter::repeat_n(0.0, delay_ticks).collect(),
            last_desired: 0.0,
            lapse_until_t: f64::NEG_INFINITY,
            light_seen: light_color::NONE,
            light_stop: false,
            stop_sign: StopSign::Approaching,
            give_way_committed: false,
        }
    }

    /// Critical gap for crossing conflicting traffic, s.
    pub fn critical_gap_s(&self) -> f64 {
        self.critical_gap_s
    }

    /// True while the driver is in an attention lapse.
    pub fn in_lapse(&self, t: f64) -> bool {
        t < self.lapse_until_t
    }

    /// The acceleration reaching the pedals at this tick, m/s² (before any external speed cap).
    pub fn control(&mut self, p: &Perception, dt: f64, rng: &mut impl Rng) -> f64 {
        // One draw per tick whatever happens, so that the random stream does not depend on the branch.
        let lapse_draw: f64 = rng.random();
        let lapse_len = rng.random_range(self.lapse_s.0..=self.lapse_s.1);
        if !self.in_lapse(p.t) && lapse_draw < self.lapse_rate_per_s * dt {
            self.lapse_until_t = p.t + lapse_len;
        }
        match (self.in_lapse(p.t), self.lapse_effect) {
            (false, _) => self.last_desired = self.decide(p),
            (true, LapseEffect::Freeze) => {}
            (true, LapseEffect::Inattentive) => {
                // Eyes on the lane ahead only: the junction's control goes unnoticed.
                let lane_only = Perception {
                    light: None,
                    stop_sign: None,
                    give_way: None,
                    jam_dist_m: None,
                    crosswalk: None,
                    ..p.clone()
                };
                self.last_desired = self.decide(&lane_only);
            }
        }
        self.pending.push_back(self.last_desired);
        let mut a = self.pending.pop_front().unwrap_or(self.last_desired);
        if self.pedal_noise_mps2 > 0.0 {
            // An Ornstein–Uhlenbeck error with a 0.5 s time constant: a human foot does not hold a pedal
            // still, during a lapse or otherwise. Applied while moving (a car held at a standstill stays).
            let decay = (-dt / PEDAL_NOISE_TAU_S).exp();
            let draw: f64 = rng.sample(rand_distr::StandardNormal);
            self.noise_mps2 = self.noise_mps2 * decay
                + self.pedal_noise_mps2 * (1.0 - decay * decay).sqrt() * draw;
            if p.speed_mps > 1.0 {
                a += self.noise_mps2;
            }
        }
        a.clamp(-MAX_BRAKE_MPS2, self.idm.max_accel_mps2)
    }

    /// The driver's desired acceleration from what they perceive now: following (the leader, the speed
    /// they want), bounded by every point they decide to stop at and by a jam they wait for.
    fn decide(&mut self, p: &Perception) -> f64 {
        let v0 = self.desired_speed(p);
        let mut a = self.follow(p, v0);
        let stops = [
            self.light_stop_point(p),
            self.stop_sign_point(p),
            self.give_way_point(p),
            self.jam_stop_point(p),
            self.crosswalk_stop_point(p),
        ];
        for dist in stops.into_iter().flatten() {
            a = a.min(self.stop_accel(p.speed_mps, v0, dist));
        }
        a.min(self.jam_brake(p)).min(self.give_way_brake(p))
    }

    /// The speed the driver wants: the limit in force (or the route's first one, for a driver who missed
    /// the signs) times their own factor, lowered ahead of a lower limit and of a turn.
    fn desired_speed(&self, p: &Perception) -> f64 {
        let b = self.idm.comfort_decel_mps2;
        let limit = if self.ignore_limits {
            p.first_limit_mps.max(p.limit_mps)
        } else {
            p.limit_mps
        };
        let mut v0 = limit * self.v_factor;
        if !self.ignore_limits {
            for sign in &p.limits_ahead {
                // Plan to be down to the new limit 20 m before the sign, braking gently.
                let room = (sign.dist_m - 20.0).max(0.0);
                v0 = v0.min(((sign.limit_mps * self.v_factor).powi(2) + b * room).sqrt());
            }
        }
        if let Some(turn) = p.turn {
            let v_turn = (self.lateral_accel_mps2 * turn.radius_m).sqrt();
            v0 = v0.min((v_turn * v_turn + 2.0 * b * turn.dist_m).sqrt());
        }
        if let Some(gw) = p
            .give_way
            .filter(|g| g.approach && !self.give_way_committed)
        {
            // Slow down to look: at most the approach speed at the yield point, braking gently.
            let room_m = gw.dist_m.max(0.0);
            v0 = v0.min(
                (self.give_way_approach_mps.powi(2) + 2.0 * GIVE_WAY_APPROACH_DECEL_MPS2 * room_m)
                    .sqrt(),
            );
        }
        v0
    }

    /// IDM behind the leader towards `v0`; above `v0` a driver brakes firmly (IDM's free-road term alone
    /// brakes weakly there), at most at their comfortable deceleration.
    fn follow(&self, p: &Perception, v0: f64) -> f64 {
        let v = p.speed_mps;
        let a = idm(&self.idm, v, v0, p.leader);
        if v > v0 + 0.2 {
            a.min(-(v - v0).min(self.idm.comfort_decel_mps2))
        } else {
            a
        }
    }

    /// The acceleration that stops the car `dist` m ahead: a standing virtual leader 0.5 m past the
    /// point's standstill gap (the front stops ~0.5 m before it), and in the last metres, where IDM would
    /// creep asymptotically, kinematic braking to a standstill at the point.
    fn stop_accel(&self, v: f64, v0: f64, dist: f64) -> f64 {
        let a = idm(
            &self.idm,
            v,
            v0,
            Some(Leader::standing(dist + self.idm.min_gap_m - 0.5)),
        );
        let to_point = dist - 0.5;
        if to_point < FINAL_STOP_M && v < 3.0 {
            // Never harder than the driver's comfortable deceleration: with the reaction delay a purely
            // kinematic demand would keep growing; a small overshoot is absorbed by the 0.5 m margin.
            a.min(-(v * v / (2.0 * to_point.max(0.05))).min(self.idm.comfort_decel_mps2))
        } else {
            a
        }
    }

    /// The stop line of a light, when the driver decided to stop for it. The decision is taken when the
    /// colour changes: at yellow (dilemma zone) only if the deceleration needed is one this driver
    /// accepts, at red unless it would need near-full braking.
    fn light_stop_point(&mut self, p: &Perception) -> Option<f64> {
        let LightAhead { color, dist_m } = p.light?;
        if color != self.light_seen {
            self.light_seen = color;
            let v = p.speed_mps;
            let needed = v * v / (2.0 * dist_m.max(0.1));
            self.light_stop = match color {
                light_color::YELLOW => needed <= self.yellow_stop_decel_mps2,
                light_color::RED => needed <= MAX_BRAKE_MPS2 * 0.9,
                _ => false,
            };
        }
        self.light_stop.then_some(dist_m)
    }

    /// The stop-sign line until the driver has stopped (or rolled through) and the junction is clear.
    fn stop_sign_point(&mut self, p: &Perception) -> Option<f64> {
        let StopSignAhead {
            dist_m: dist,
            clear,
        } = p.stop_sign?;
        let v = p.speed_mps;
        match self.stop_sign {
            StopSign::Approaching => {
                let rolled = self.rolling_stop && dist < 3.0 && v < 2.5;
                if rolled || (v < 0.1 && dist < 2.0) {
                    self.stop_sign = StopSign::Stopped { since_t: p.t };
                }
                (!rolled).then_some(dist)
            }
            StopSign::Stopped { since_t } => {
                let wait = if self.rolling_stop { 0.0 } else { 1.0 };
                if p.t >= since_t + wait && clear {
                    self.stop_sign = StopSign::Go;
                    None
                } else {
                    Some(dist)
                }
            }
            StopSign::Go => None,
        }
    }

    /// The yield point of an unprotected left turn or a give-way junction until the driver commits to a
    /// gap, judged only near the point: the gap must cover the time to get there and the critical gap. At
    /// a left turn the driver heads for the yield point; approaching a give-way junction they look from
    /// where they could still stop comfortably and head for the point only when the gap is too small.
    fn give_way_point(&mut self, p: &Perception) -> Option<f64> {
        let gw = p.give_way?;
        let dist = gw.dist_m;
        let look_m = self.give_way_look_m(&gw, p.speed_mps);
        let time_to_yield = dist.max(0.0) / p.speed_mps.max(2.0);
        if !self.give_way_committed
            && dist < look_m
            && gw.min_tta_s > self.critical_gap_s + time_to_yield
        {
            self.give_way_committed = true;
        }
        let holding = !self.give_way_committed && dist > -gw.hold_m;
        (holding && (!gw.approach || dist < look_m)).then_some(dist)
    }

    /// Where the driver judges the gap: near a left turn's yield point; on the approach to a give-way
    /// junction, far enough to stop comfortably after a moment's thought at the speed they are doing or
    /// are about to (the approach speed).
    fn give_way_look_m(&self, gw: &GiveWay, v: f64) -> f64 {
        if !gw.approach {
            return LEFT_TURN_LOOK_M;
        }
        let v_plan = v.max(self.give_way_approach_mps);
        let b = self.idm.comfort_decel_mps2;
        (v_plan * GIVE_WAY_LOOK_S + v_plan * v_plan / (2.0 * b) + 3.0).max(LEFT_TURN_LOOK_M)
    }

    /// A planned stop at a give-way junction: at least the constant deceleration that ends at the yield
    /// point (IDM alone creeps up to a standing target and brakes late).
    fn give_way_brake(&self, p: &Perception) -> f64 {
        let Some(gw) = p
            .give_way
            .filter(|g| g.approach && !self.give_way_committed)
        else {
            return f64::INFINITY;
        };
        let v = p.speed_mps;
        if gw.dist_m > -gw.hold_m && gw.dist_m < self.give_way_look_m(&gw, v) {
            -(v * v / (2.0 * (gw.dist_m - 0.5).max(0.05)))
        } else {
            f64::INFINITY
        }
    }

    /// Just before the entry of a jammed junction, for a driver who respects the jam.
    fn jam_stop_point(&self, p: &Perception) -> Option<f64> {
        let dist = p.jam_dist_m?;
        (!self.jam_ignore && dist > -0.5).then_some(dist - 0.3)
    }

    /// Close to a jammed junction a driver who respects the jam stops where they are and waits, rather
    /// than creeping up to the entry.
    fn jam_brake(&self, p: &Perception) -> f64 {
        match p.jam_dist_m {
            Some(dist) if !self.jam_ignore && dist > -0.5 && dist < JAM_WAIT_RANGE_M => {
                if p.speed_mps > 0.0 {
                    -self.jam_stop_decel_mps2
                } else {
                    0.0
                }
            }
            _ => f64::INFINITY,
        }
    }

    /// A crosswalk where a pedestrian has priority (a careless driver stops only for one near the lane).
    fn crosswalk_stop_point(&self, p: &Perception) -> Option<f64> {
        let CrosswalkAhead {
            dist_m,
            ped_near_lane,
        } = p.crosswalk?;
        ((!self.ped_ignore || ped_near_lane) && dist_m > -0.5).then_some(dist_m)
    }
}

/// A Bernoulli draw whose probability is itself drawn from `p`.
fn chance(p: crate::scenario::Span, rng: &mut impl Rng) -> bool {
    let prob = p.sample(rng);
    rng.random::<f64>() < prob
}

#[cfg(test)]
mod tests;
