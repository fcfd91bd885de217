//! The stepping loop: one seeded run of a scenario, one [`Frame`] per tick.
//!
//! Each tick: build the ego's perception and the frame from the current world state, then let the driver
//! (and the optional external speed cap) choose the acceleration, then advance the ego and every NPC by one
//! frame period. A run ends at its duration, five frames after the ego reaches the route end, or one second
//! after a collision.

use laws::geometry::{EGO_FRONT_M, EGO_REAR_M, EGO_WIDTH_M};
use laws::Frame;
use rand_chacha::ChaCha8Rng;

use crate::collision::Rect;
use crate::ego::{Driver, MAX_BRAKE_MPS2};
use crate::light::Light;
use crate::npc::{NpcView, Traffic};
use crate::road::{Road, LANE_WIDTH_M};
use crate::scenario::{ControlSpec, Scenario, TurnSpec};
use crate::seed::rng_for;

mod observe;
mod users;

const WHEELBASE_M: f64 = 2.697298;
const MAX_STEER_RAD: f64 = 0.6;
/// Deceleration bound of the AV controller obeying a speed cap, m/s².
const CAP_DECEL_MPS2: f64 = 6.0;
/// Inside the junction the ego claims this much road ahead of its front bumper, m, plus its speed times
/// [`CLAIM_TIME_S`]; crossing NPCs treat the claim as an obstacle.
const CLAIM_BASE_M: f64 = 2.0;
/// See [`CLAIM_BASE_M`], s.
const CLAIM_TIME_S: f64 = 1.5;
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
        let light = road
            .junction()
            .filter(|j| j.control == ControlSpec::Light)
            .and_then(|_| {
                let l = scenario.light();
                Light::try_new(
                    l.green_s,
                    l.yellow_s,
                    l.red_s,
                    l.cycle_offset_s.sample(&mut rng),
                )
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

    /// The ego footprint at the current state (map frame).
    fn ego_rect(&self) -> Rect {
        let pose = self.road.pose(self.s);
        Rect {
            centre_x: pose.x + (EGO_FRONT_M + EGO_REAR_M) / 2.0 * pose.heading.cos(),
            centre_y: pose.y + (EGO_FRONT_M + EGO_REAR_M) / 2.0 * pose.heading.sin(),
            heading: pose.heading,
            half_length_m: (EGO_FRONT_M - EGO_REAR_M) / 2.0,
            half_width_m: EGO_WIDTH_M / 2.0,
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
        self.note_progress(t, front_s);
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
            // Brake towards the cap at up to CAP_DECEL_MPS2, landing on it rather than below; never
            // accelerate past it.
            let to_cap = (cap.max(0.0) - self.v) / self.dt;
            a = a.min(to_cap.clamp(-CAP_DECEL_MPS2, self.driver.idm.max_accel_mps2));
        }
        if frame.collision {
            a = -MAX_BRAKE_MPS2;
        }
        if a < 0.0 {
            // Braking ends at a standstill: record the deceleration that is actually applied.
            a = a.max(-self.v / self.dt);
        }
        frame.accel_mps2 = a;
        frame.throttle_pct =
            (a.max(0.0) / self.driver.idm.max_accel_mps2 * 100.0).min(100.0) as f32;
        frame.brake_pct = ((-a).max(0.0) / MAX_BRAKE_MPS2 * 100.0).min(100.0) as f32;

        // Advance.
        let v_new = (self.v + a * self.dt).max(0.0);
        let ego_in_junction = self.road.in_junction(self.s + EGO_FRONT_M)
            || self.road.in_junction(self.s + EGO_REAR_M);
        let mut ego_claim = self.ego_rect();
        if ego_in_junction {
            // Inside the box the ego claims the road it is about to cover: crossing drivers keep clear of
            // it instead of pulling into its path.
            let reach_m = CLAIM_BASE_M + CLAIM_TIME_S * self.v;
            ego_claim.half_length_m += reach_m / 2.0;
            ego_claim.centre_x += reach_m / 2.0 * ego_claim.heading.cos();
            ego_claim.centre_y += reach_m / 2.0 * ego_claim.heading.sin();
        }
        let view = NpcView {
            road: &self.road,
            light: self.light.as_ref(),
            t,
            dt: self.dt,
            ego_in_junction,
            ego: ego_claim,
        };
        self.traffic.step(&view);
        self.s += 0.5 * (self.v + v_new) * self.dt;
        self.v = v_new;
        self.k += 1;
        Some(frame)
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
            let z = zone.get_or_insert(Conflict {
                s_lo: s,
                s_hi: s,
                x_lo: p.x,
                x_hi: p.x,
            });
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
    let mut frames =
        Vec::with_capacity((scenario.duration_s() / scenario.frame_period_s()) as usize + 2);
    while let Some(frame) = sim.step(&cmd) {
        frames.push(frame);
    }
    frames
}

#[cfg(test)]
mod tests;
