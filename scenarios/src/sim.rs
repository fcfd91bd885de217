//! The stepping loop: one seeded run of a scenario, one [`Frame`] per tick.
//!
//! Each tick: build the ego's perception and the frame from the current world state, then let the driver
//! (and the optional external speed cap) choose the acceleration, then advance the ego and every NPC by one
//! frame period. A run ends at its duration, five frames after the ego reaches the route end, or one second
//! after a collision.

use laws::frame::{gear, light_color, planned_turn, turn_signal};
use laws::{Frame, Obstacle};
use rand_chacha::ChaCha8Rng;

use crate::collision::Rect;
use crate::ego::{Driver, Perception, MAX_BRAKE_MPS2};
use crate::light::Light;
use crate::npc::{Lane, NpcView, Traffic, PEDESTRIAN, PED_SIZE_M, VEHICLE};
use crate::road::{Road, LANE_CENTRE_M, LANE_WIDTH_M};
use crate::scenario::{ControlSpec, Scenario, TurnSpec};
use crate::seed::rng_for;

/// Ego footprint: front bumper ahead of the reference point (rear axle), m.
pub const EGO_FRONT_M: f64 = 3.6986;
/// Ego footprint: rear bumper behind the reference point, m.
pub const EGO_REAR_M: f64 = 1.0014;
/// Ego width, m.
pub const EGO_WIDTH_M: f64 = 2.06;
const WHEELBASE_M: f64 = 2.697298;
const MAX_STEER_RAD: f64 = 0.6;
/// Deceleration bound of the AV controller obeying a speed cap, m/s².
const CAP_DECEL_MPS2: f64 = 6.0;
/// Frames emitted after the destination is reached / after a collision.
const DESTINATION_TAIL: u32 = 5;
const COLLISION_TAIL_S: f64 = 1.0;
/// Range within which road users are perceived and reported, m.
const PERCEPTION_RANGE_M: f64 = 150.0;

/// An intervention from avguard for the next tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Command {
    /// Speed the ego's controller must not exceed, m/s; `Some(0.0)` is a stop. `None`: no cap.
    pub speed_cap_mps: Option<f64>,
}

/// Left-turn conflict zone: route interval and x range where the ego path overlaps the oncoming lane.
#[derive(Debug, Clone, Copy)]
struct Conflict {
    s_lo: f64,
    s_hi: f64,
    x_lo: f64,
    x_hi: f64,
}

/// One run in progress.
#[derive(Debug, Clone)]
pub struct Simulation {
    road: Road,
    light: Option<Light>,
    dt: f64,
    duration_s: f64,
    rng: ChaCha8Rng,
    driver: Driver,
    traffic: Traffic,
    /// Ego rear-axle route position, speed, acceleration.
    s: f64,
    v: f64,
    k: u64,
    ended: bool,
    tail_left: Option<u32>,
    destination: bool,
    ego_arrived_t: Option<f64>,
    conflict: Option<Conflict>,
}

impl Simulation {
    /// Starts run `seed` of `scenario`.
    pub fn new(scenario: &Scenario, seed: u64) -> Simulation {
        let mut rng = rng_for(seed);
        let road = Road::new(scenario.road());
        let dt = scenario.frame_period_s();
        let light = road.junction().filter(|j| j.control == ControlSpec::Light).and_then(|_| {
            let l = scenario.light();
            Light::try_new(l.green_s, l.yellow_s, l.red_s, l.cycle_offset_s.sample(&mut rng))
        });
        let driver = Driver::sample(scenario.ego(), dt, &mut rng);
        let s = scenario.ego().start_s_m.sample(&mut rng);
        let v = scenario.ego().start_speed_kph.sample(&mut rng) / 3.6;
        let traffic = Traffic::sample(scenario, &road, s + EGO_FRONT_M, &mut rng);
        let conflict = conflict_zone(&road);
        Simulation {
            road,
            light,
            dt,
            duration_s: scenario.duration_s(),
            rng,
            driver,
            traffic,
            s,
            v,
            k: 0,
            ended: false,
            tail_left: None,
            destination: false,
            ego_arrived_t: None,
            conflict,
        }
    }

    fn t(&self) -> f64 {
        self.k as f64 * self.dt
    }

    /// Emits the frame of the current state and advances the world by one frame period under `cmd`.
    /// Returns `None` once the run has ended.
    pub fn step(&mut self, cmd: &Command) -> Option<Frame> {
        if self.ended {
            return None;
        }
        let t = self.t();
        let front_s = self.s + EGO_FRONT_M;
        let (mut frame, perception) = self.observe(t, front_s);

        // Run end bookkeeping.
        if frame.collision && self.tail_left.is_none() {
            self.tail_left = Some((COLLISION_TAIL_S / self.dt).round() as u32);
        }
        if frame.destination && self.tail_left.is_none() {
            self.tail_left = Some(DESTINATION_TAIL);
        }
        match &mut self.tail_left {
            Some(0) => self.ended = true,
            Some(n) => *n -= 1,
            None => {}
        }
        if t + self.dt > self.duration_s + 1e-9 {
            self.ended = true;
        }

        // Control.
        let mut a = self.driver.control(&perception, self.dt, &mut self.rng);
        if let Some(cap) = cmd.speed_cap_mps {
            a = a.min((cap.max(0.0) - self.v).clamp(-CAP_DECEL_MPS2, self.driver.idm.max_accel_mps2));
        }
        if frame.collision {
            a = -MAX_BRAKE_MPS2;
        }
        if self.v <= 0.0 && a < 0.0 {
            a = 0.0;
        }
        frame.accel_mps2 = a;
        frame.throttle_pct = (a.max(0.0) / self.driver.idm.max_accel_mps2 * 100.0).min(100.0) as f32;
        frame.brake_pct = ((-a).max(0.0) / MAX_BRAKE_MPS2 * 100.0).min(100.0) as f32;

        // Advance.
        let v_new = (self.v + a * self.dt).max(0.0);
        let view = NpcView {
            road: &self.road,
            light: self.light.as_ref(),
            t,
            dt: self.dt,
            ego_in_junction: self.road.in_junction(self.s + EGO_FRONT_M) || self.road.in_junction(self.s - EGO_REAR_M),
        };
        self.traffic.step(&view);
        self.s += 0.5 * (self.v + v_new) * self.dt;
        self.v = v_new;
        self.k += 1;
        Some(frame)
    }

    /// Builds the frame and the driver's perception for the current state.
    fn observe(&mut self, t: f64, front_s: f64) -> (Frame, Perception) {
        let pose = self.road.pose(self.s);
        let rear_s = self.s - EGO_REAR_M;
        let junction = self.road.junction().cloned();
        let ego_rect = Rect {
            centre_x: pose.x + (EGO_FRONT_M - EGO_REAR_M) / 2.0 * pose.heading.cos(),
            centre_y: pose.y + (EGO_FRONT_M - EGO_REAR_M) / 2.0 * pose.heading.sin(),
            heading: pose.heading,
            half_length_m: (EGO_FRONT_M + EGO_REAR_M) / 2.0,
            half_width_m: EGO_WIDTH_M / 2.0,
        };
        let mut p = Perception {
            t,
            v: self.v,
            limit_mps: self.road.limit_at(self.s),
            first_limit_mps: self.road.limit_at(0.0),
            ..Perception::default()
        };
        p.limits_ahead = self
            .road
            .limits()
            .iter()
            .filter(|(from, _)| *from > front_s && *from - front_s < 150.0)
            .map(|(from, lim)| (from - front_s, *lim))
            .collect();

        // Road features.
        let in_junction = self.road.in_junction(self.s);
        let mut f = Frame {
            t,
            x: pose.x,
            y: pose.y,
            z: 0.0,
            heading: pose.heading,
            speed_mps: self.v,
            gear: gear::DRIVE,
            steering_pct: ((WHEELBASE_M * pose.curvature).atan() / MAX_STEER_RAD * 100.0).clamp(-100.0, 100.0)
                as f32,
            speed_limit_mps: p.limit_mps,
            lane_number: if in_junction { 0 } else { self.road.lanes() },
            low_beam: false,
            ..Frame::default()
        };
        if let Some(j) = &junction {
            f.junction_dist_m = if front_s < j.entry_s {
                j.entry_s - front_s
            } else if rear_s < j.exit_s {
                0.0
            } else {
                f64::INFINITY
            };
            let before_exit = self.s < j.exit_s;
            let line_dist = j.stop_line_s.filter(|line| front_s <= *line).map(|line| line - front_s);
            if let Some(d) = line_dist {
                f.stopline_dist_m = d;
            }
            if let Some((a, b)) = j.crosswalk_s {
                f.crosswalk_dist_m = if front_s < a {
                    a - front_s
                } else if rear_s <= b {
                    0.0
                } else {
                    f64::INFINITY
                };
            }
            if before_exit {
                f.planned_turn = match j.turn {
                    TurnSpec::Straight => planned_turn::STRAIGHT,
                    TurnSpec::Left => planned_turn::LEFT,
                    TurnSpec::Right => planned_turn::RIGHT,
                };
                if f.planned_turn != planned_turn::STRAIGHT {
                    let entry_dist = (j.entry_s - front_s).max(0.0);
                    if self.driver.signals_turns && entry_dist < 60.0 {
                        f.turn_signal = if j.turn == TurnSpec::Left { turn_signal::LEFT } else { turn_signal::RIGHT };
                    }
                    let radius = match j.turn {
                        TurnSpec::Left => j.half_size_m + LANE_CENTRE_M,
                        _ => j.half_size_m - LANE_CENTRE_M,
                    };
                    p.turn = Some((entry_dist, radius));
                }
            }
            match j.control {
                ControlSpec::Light => {
                    if let Some(light) = self.light.filter(|_| before_exit) {
                        f.light_color = light.color_at(t);
                        f.signal_ahead = true;
                        if let Some(d) = line_dist {
                            p.light = Some((f.light_color, d));
                        }
                    }
                }
                ControlSpec::StopSign => {
                    if let Some(d) = line_dist {
                        f.stopsign_dist_m = d;
                    }
                    if let Some(line) = j.stop_line_s {
                        if self.ego_arrived_t.is_none() && self.v < 2.5 && line - front_s < 3.0 {
                            self.ego_arrived_t = Some(t);
                        }
                        if front_s < line + 0.5 {
                            p.stop_sign = Some((line - front_s, self.stop_sign_clear(j.half_size_m)));
                        }
                    }
                }
                ControlSpec::None => {
                    // Priority to the right is not modelled; the ego yields to cross traffic that is moving
                    // in the junction or about to enter it, like at a stop sign without the stop.
                    let has_cross = self.traffic.vehicles.iter().any(|v| matches!(v.lane, Lane::Line { id: 2, .. }));
                    if has_cross && front_s < j.entry_s + 0.5 && !self.stop_sign_clear(j.half_size_m) {
                        p.stop_sign = Some((j.entry_s - front_s, false));
                    }
                }
            }
        }

        // Road users.
        let mut leader: Option<(f64, f64)> = None;
        let mut jam_count = 0;
        let mut min_tta = f64::INFINITY;
        let mut ped_priority = false;
        let mut ped_near_lane = false;
        let half = junction.as_ref().map_or(0.0, |j| j.half_size_m);
        for veh in &self.traffic.vehicles {
            let (x, y, heading) = veh.position(&self.road);
            if (x - pose.x).hypot(y - pose.y) > PERCEPTION_RANGE_M {
                continue;
            }
            let rect = Rect { centre_x: x, centre_y: y, heading, half_length_m: veh.length_m / 2.0, half_width_m: veh.width_m / 2.0 };
            if ego_rect.overlaps(&rect) {
                f.collision = true;
            }
            let (s_o, lat) = match veh.lane {
                Lane::Route => (veh.s, 0.0),
                Lane::Line { .. } => self.road.project(x, y),
            };
            consider_leader(&mut leader, &self.road, front_s, s_o, lat, heading, veh.v, veh.length_m, veh.width_m);
            let in_box = junction.is_some() && x.abs() < half && y.abs() < half;
            if in_box && veh.v < 1.0 {
                jam_count += 1;
            }
            let mut priority = false;
            if let (Some(c), Lane::Line { id: 1, .. }) = (self.conflict, veh.lane) {
                // Oncoming (westbound): priority until its rear passes the conflict zone.
                let rear_x = x + veh.length_m / 2.0;
                let front_x = x - veh.length_m / 2.0;
                if rear_s < c.s_hi && rear_x > c.x_lo {
                    let judged_v = (veh.v * (1.0 + self.driver.judgement_error)).max(0.1);
                    let tta = if front_x <= c.x_hi { 0.0 } else { (front_x - c.x_hi) / judged_v };
                    min_tta = min_tta.min(tta);
                    priority = tta < 5.0;
                }
            }
            if let (Some(j), Lane::Line { id: 2, .. }) = (&junction, veh.lane) {
                if j.control == ControlSpec::StopSign && y - veh.length_m / 2.0 < half && rear_s < j.exit_s {
                    let first = match (veh.arrived_t, self.ego_arrived_t) {
                        (Some(a), Some(e)) => a < e,
                        (Some(_), None) => true,
                        _ => false,
                    };
                    priority = first || (in_box && veh.v > 0.5);
                }
            }
            f.obstacles.push(Obstacle {
                id: veh.id,
                kind: VEHICLE,
                x,
                y,
                heading: heading.rem_euclid(std::f64::consts::TAU),
                speed_mps: veh.v,
                length: veh.length_m,
                width: veh.width_m,
                priority,
            });
        }
        let crosswalk = junction.as_ref().and_then(|j| j.crosswalk_s);
        for ped in &self.traffic.pedestrians {
            let rect = Rect { centre_x: ped.x, centre_y: ped.y, heading: ped.heading(), half_length_m: PED_SIZE_M / 2.0, half_width_m: PED_SIZE_M / 2.0 };
            if ego_rect.overlaps(&rect) {
                f.collision = true;
            }
            let walking = ped.walking(t);
            let v = if walking { ped.speed_mps } else { 0.0 };
            let (s_o, lat) = self.road.project(ped.x, ped.y);
            consider_leader(&mut leader, &self.road, front_s, s_o, lat, ped.heading(), v, PED_SIZE_M, PED_SIZE_M);
            let mut priority = false;
            if let Some((_, b)) = crosswalk {
                // Still to cross the ego lane (its far edge plus a margin) in the walking direction.
                let lane_far_edge = -LANE_CENTRE_M + ped.dir * (LANE_WIDTH_M / 2.0 + 1.0);
                let still_to_cross = ped.dir * (lane_far_edge - ped.y) > 0.0;
                priority = walking && rear_s <= b && still_to_cross;
                if priority && (ped.y + LANE_CENTRE_M).abs() < 4.0 {
                    ped_near_lane = true;
                }
            }
            ped_priority |= priority;
            f.obstacles.push(Obstacle {
                id: ped.id,
                kind: PEDESTRIAN,
                x: ped.x,
                y: ped.y,
                heading: ped.heading().rem_euclid(std::f64::consts::TAU),
                speed_mps: v,
                length: PED_SIZE_M,
                width: PED_SIZE_M,
                priority,
            });
        }
        p.leader = leader;
        if let Some(j) = &junction {
            f.traffic_jam = jam_count >= 3 && self.s < j.exit_s;
            if f.traffic_jam && front_s < j.entry_s + 0.5 {
                p.jam = Some(j.entry_s - front_s);
            }
            if let Some(c) = self.conflict {
                if front_s < c.s_lo + 0.5 {
                    p.left_yield = Some((c.s_lo - 0.5 - front_s, min_tta));
                }
            }
            if let Some((a, _)) = crosswalk {
                if ped_priority && front_s < a + 0.5 {
                    p.crosswalk = Some((a - front_s, ped_near_lane));
                }
            }
        }
        if front_s >= self.road.end_s() - 5.0 {
            self.destination = true;
        }
        f.destination = self.destination;
        if f.light_color == light_color::NONE {
            f.signal_ahead = false;
        }
        (f, p)
    }

    /// Stop sign: the ego may go when no cross vehicle has priority and none is moving in the junction.
    fn stop_sign_clear(&self, half: f64) -> bool {
        self.traffic.vehicles.iter().all(|veh| {
            let Lane::Line { id: 2, .. } = veh.lane else { return true };
            let (_, y, _) = veh.position(&self.road);
            let rear_y = y - veh.length_m / 2.0;
            if rear_y > half {
                return true; // already through
            }
            let first = match (veh.arrived_t, self.ego_arrived_t) {
                (Some(a), Some(e)) => a < e,
                (Some(_), None) => true,
                _ => false,
            };
            let moving_close = veh.v > 0.5 && {
                let judged_v = (veh.v * (1.0 + self.driver.judgement_error)).max(0.1);
                let tta = (-half - (y + veh.length_m / 2.0)).max(0.0) / judged_v;
                tta < self.driver.critical_gap_s()
            };
            !(first || moving_close)
        })
    }
}

/// Updates `leader` with a road user at route position `s_o` (centre) and lateral offset `lat` if it is in
/// the ego's path ahead: its footprint, rotated into the route frame, overlaps the ego corridor.
#[allow(clippy::too_many_arguments)]
fn consider_leader(
    leader: &mut Option<(f64, f64)>,
    road: &Road,
    front_s: f64,
    s_o: f64,
    lat: f64,
    heading: f64,
    v: f64,
    length: f64,
    width: f64,
) {
    let dh = heading - road.pose(s_o).heading;
    let (c, s) = (dh.cos().abs(), dh.sin().abs());
    let ext_long = length / 2.0 * c + width / 2.0 * s;
    let ext_lat = length / 2.0 * s + width / 2.0 * c;
    if lat.abs() > EGO_WIDTH_M / 2.0 + ext_lat + 0.25 {
        return;
    }
    let gap = s_o - ext_long - front_s;
    if s_o + ext_long < front_s - 0.5 || gap > 100.0 {
        return;
    }
    let v_along = (v * dh.cos()).max(0.0);
    if leader.is_none_or(|(g, _)| gap < g) {
        *leader = Some((gap, v_along));
    }
}

/// The left-turn conflict zone (the ego footprint overlapping the oncoming lane), found by sampling the arc.
fn conflict_zone(road: &Road) -> Option<Conflict> {
    let j = road.junction().filter(|j| j.turn == TurnSpec::Left)?;
    let margin = EGO_WIDTH_M / 2.0;
    let mut zone: Option<Conflict> = None;
    let steps = ((j.exit_s - j.entry_s) / 0.1).ceil() as usize;
    for i in 0..=steps {
        let s = j.entry_s + i as f64 * 0.1;
        let p = road.pose(s);
        if p.y > -margin && p.y < LANE_WIDTH_M + margin {
            let z = zone.get_or_insert(Conflict { s_lo: s, s_hi: s, x_lo: p.x, x_hi: p.x });
            z.s_hi = s;
            z.x_lo = z.x_lo.min(p.x);
            z.x_hi = z.x_hi.max(p.x);
        }
    }
    zone
}

/// Runs `scenario` open loop (no commands) with `seed` and returns every frame.
pub fn run(scenario: &Scenario, seed: u64) -> Vec<Frame> {
    let mut sim = Simulation::new(scenario, seed);
    let cmd = Command::default();
    let mut frames = Vec::with_capacity((scenario.duration_s() / scenario.frame_period_s()) as usize + 2);
    while let Some(frame) = sim.step(&cmd) {
        frames.push(frame);
    }
    frames
}

#[cfg(test)]
mod tests;
