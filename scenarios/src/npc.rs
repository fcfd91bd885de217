//! Other road users: NPC vehicles (lawful IDM drivers on fixed lanes) and pedestrians on the crosswalk.
//!
//! NPCs are deliberately simple and law-abiding; the diversity of outcomes comes from the ego driver and
//! from the sampled timing of the NPCs (arrival times, headways, jam formation and release, braking
//! events). Cross traffic (including the jam stream) treats the ego as an obstacle when the ego's footprint
//! is on its lane ahead of it, so it never drives into an ego that occupies the box (cross traffic at a
//! stop sign also waits while the ego is inside the junction). Oncoming traffic has priority over a
//! left-turning ego and does not react to it, by design: a left-turn collision is the ego's fault (it took
//! a gap that was too small), which is the outcome the left-turn scenario measures.

use laws::frame::obstacle_type;
use rand::Rng;

use crate::collision::Rect;
use crate::ego::{idm, IdmParams, Leader};
use crate::light::Light;
use crate::road::{Road, LANE_CENTRE_M, LANE_WIDTH_M};
use crate::scenario::{ControlSpec, Scenario, VehicleRole};

/// Where an NPC vehicle drives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Lane {
    /// The ego route (lead and queued vehicles).
    Route,
    /// A straight line through the junction centre region: the point at lane position 0 and the heading.
    Line {
        x0: f64,
        y0: f64,
        heading: f64,
        kind: LineKind,
    },
}

/// Which straight lane through the junction a [`Lane::Line`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// Oncoming traffic (westbound): priority over a left-turning ego.
    Oncoming,
    /// Cross traffic (northbound, from the ego's right), including the jam stream.
    Cross,
    /// Cross traffic from the ego's left (southbound).
    CrossLeft,
}

/// Oncoming lane (westbound, north half of the east–west road).
const ONCOMING: Lane = Lane::Line {
    x0: 0.0,
    y0: LANE_CENTRE_M,
    heading: std::f64::consts::PI,
    kind: LineKind::Oncoming,
};
/// Cross lane (northbound, east half of the north–south road).
const CROSS: Lane = Lane::Line {
    x0: LANE_CENTRE_M,
    y0: 0.0,
    heading: std::f64::consts::FRAC_PI_2,
    kind: LineKind::Cross,
};

/// Cross lane from the left (southbound, west half of the north–south road).
const CROSS_LEFT: Lane = Lane::Line {
    x0: -LANE_CENTRE_M,
    y0: 0.0,
    heading: -std::f64::consts::FRAC_PI_2,
    kind: LineKind::CrossLeft,
};

/// A scripted braking event of a lead vehicle.
#[derive(Debug, Clone, Copy, PartialEq)]
struct BrakeEvent {
    at_t: f64,
    decel_mps2: f64,
    to_mps: f64,
    hold_s: f64,
}

/// One NPC vehicle. `s` is the position of the footprint centre along its lane.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Vehicle {
    pub id: i32,
    pub role: VehicleRole,
    pub lane: Lane,
    pub s: f64,
    pub v: f64,
    pub length_m: f64,
    pub width_m: f64,
    v_des: f64,
    /// Lane position where the front bumper stops (stop sign or light), if any.
    stop_front_s: Option<f64>,
    /// Stop-sign wait, s.
    wait_s: f64,
    /// Time the vehicle came to rest at its stop line (stop-sign arrival order).
    pub arrived_t: Option<f64>,
    /// Passed its stop line (no more stopping).
    cleared_line: bool,
    /// Stationary until this time.
    release_t: f64,
    brake: Option<BrakeEvent>,
    /// Jam head: lane position where its front stops (the blocked exit beyond the box) and how long it
    /// stays there; its followers queue back into the box.
    block: Option<Block>,
    /// Cross traffic: how long the driver takes to react to the ego entering the lane ahead, s.
    reaction_s: f64,
    /// Since when the ego has been on the lane ahead (reset when it leaves it).
    ego_seen_t: Option<f64>,
}

/// A blocked exit: the jam head stops here for `hold_s`, then drives on.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Block {
    front_s: f64,
    hold_s: f64,
    since_t: Option<f64>,
}

/// A pedestrian walking across the crosswalk (north or south).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pedestrian {
    pub id: i32,
    pub x: f64,
    pub y: f64,
    /// +1 walking north, -1 south.
    pub dir: f64,
    start_t: f64,
    pub speed_mps: f64,
    end_y: f64,
}

/// What an NPC needs to know about the world to move.
pub(crate) struct NpcView<'a> {
    pub road: &'a Road,
    pub light: Option<&'a Light>,
    pub t: f64,
    pub dt: f64,
    /// Whether any part of the ego is inside the junction.
    pub ego_in_junction: bool,
    /// The ego footprint (map frame), extended ahead of the ego while it is inside the junction (the road
    /// it is about to cover).
    pub ego: Rect,
}

const NPC_IDM: IdmParams = IdmParams {
    max_accel_mps2: 1.5,
    comfort_decel_mps2: 2.5,
    time_headway_s: 1.4,
    min_gap_m: 2.0,
};

impl Vehicle {
    pub fn position(&self, road: &Road) -> (f64, f64, f64) {
        match self.lane {
            Lane::Route => {
                let p = road.pose(self.s);
                (p.x, p.y, p.heading)
            }
            Lane::Line {
                x0, y0, heading, ..
            } => (
                x0 + self.s * heading.cos(),
                y0 + self.s * heading.sin(),
                heading,
            ),
        }
    }

    fn front(&self) -> f64 {
        self.s + self.length_m / 2.0
    }

    fn desired_speed(&self, t: f64) -> f64 {
        match self.brake {
            Some(b)
                if t >= b.at_t
                    && t < b.at_t + b.hold_s + (self.v_des - b.to_mps).max(0.0) / b.decel_mps2 =>
            {
                b.to_mps
            }
            _ => self.v_des,
        }
    }

    /// Desired acceleration given the vehicle ahead on the same lane (`leader`: its rear position and speed).
    fn accel(&mut self, view: &NpcView<'_>, leader: Option<(f64, f64)>) -> f64 {
        if view.t < self.release_t {
            return -9.0;
        }
        let v0 = self.desired_speed(view.t);
        let mut leader = leader.map(|(rear, v)| Leader {
            gap_m: rear - self.front(),
            speed_mps: v,
        });
        let ego_gap = self.ego_gap(&view.ego);
        self.ego_seen_t = ego_gap.and(self.ego_seen_t.or(Some(view.t)));
        // The driver brakes for the ego only once they have reacted to it.
        let reacted = self
            .ego_seen_t
            .is_some_and(|since| view.t >= since + self.reaction_s);
        if let Some(gap) = ego_gap.filter(|_| reacted) {
            if leader.is_none_or(|l| gap < l.gap_m) {
                leader = Some(Leader::standing(gap));
            }
        }
        let mut a = idm(&NPC_IDM, self.v, v0, leader);
        let front = self.front();
        if let Some(block) = &mut self.block {
            let gap = block.front_s - front;
            match block.since_t {
                None if self.v < 0.2 && gap < 1.5 => block.since_t = Some(view.t),
                Some(since) if view.t >= since + block.hold_s => self.block = None,
                _ => {}
            }
            if self.block.is_some() {
                a = a.min(idm(
                    &NPC_IDM,
                    self.v,
                    v0,
                    Some(Leader::standing(gap + NPC_IDM.min_gap_m - 0.5)),
                ));
            }
        }
        if let Some(b) = self.brake {
            if view.t >= b.at_t && self.v > v0 + 0.05 {
                a = a.min(-b.decel_mps2);
            }
        }
        if let Some(stop) = self.stop_front_s.filter(|_| !self.cleared_line) {
            let gap = stop - self.front();
            if gap < -0.5 {
                self.cleared_line = true;
            } else if self.must_stop(view, gap) {
                a = a.min(idm(
                    &NPC_IDM,
                    self.v,
                    v0,
                    Some(Leader::standing(gap + NPC_IDM.min_gap_m - 0.5)),
                ));
            }
        }
        a
    }

    /// Cross traffic only: the gap from this vehicle's front to the ego footprint when the ego is on its
    /// lane ahead (the lane corridor is the vehicle's width plus 0.3 m each side).
    fn ego_gap(&self, ego: &Rect) -> Option<f64> {
        let Lane::Line {
            x0,
            y0,
            heading,
            kind: LineKind::Cross | LineKind::CrossLeft,
        } = self.lane
        else {
            return None;
        };
        let (c, s) = (heading.cos(), heading.sin());
        let half_corridor = self.width_m / 2.0 + 0.3;
        let (mut along_lo, mut lat_lo, mut lat_hi) =
            (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for (x, y) in ego.corners() {
            let (dx, dy) = (x - x0, y - y0);
            along_lo = along_lo.min(dx * c + dy * s);
            let lat = -dx * s + dy * c;
            lat_lo = lat_lo.min(lat);
            lat_hi = lat_hi.max(lat);
        }
        let on_lane = lat_lo < half_corridor && lat_hi > -half_corridor;
        let gap = along_lo - self.front();
        // A corner test is exact for the lane-aligned extremes of a rectangle crossing the lane at an angle
        // up to the ego's own width; an ego already beside the front (gap < -1 m) is not "ahead".
        (on_lane && gap > -1.0 && gap < 60.0).then_some(gap.max(0.0))
    }

    /// Whether the vehicle must (still) hold at its stop line.
    fn must_stop(&mut self, view: &NpcView<'_>, gap: f64) -> bool {
        let control = view.road.junction().map(|j| j.control);
        match (control, self.lane) {
            (Some(ControlSpec::StopSign), _) => {
                if self.arrived_t.is_none() && self.v < 0.2 && gap < 1.5 {
                    self.arrived_t = Some(view.t);
                }
                match self.arrived_t {
                    None => true,
                    Some(at) => {
                        view.t < at + self.wait_s
                            || (self.lane != Lane::Route && view.ego_in_junction)
                    }
                }
            }
            (Some(ControlSpec::Light), lane) => {
                let Some(light) = view.light else {
                    return false;
                };
                // The cross road sees the opposite phase: green while the ego's light is red.
                let color = match lane {
                    Lane::Route => light.color_at(view.t),
                    Lane::Line { .. } => match light.color_at(view.t) {
                        laws::frame::light_color::RED => laws::frame::light_color::GREEN,
                        _ => laws::frame::light_color::RED,
                    },
                };
                match color {
                    laws::frame::light_color::RED => true,
                    laws::frame::light_color::YELLOW => {
                        self.v * self.v / (2.0 * gap.max(0.1)) < 3.0
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }
}

impl Pedestrian {
    pub fn walking(&self, t: f64) -> bool {
        t >= self.start_t && self.dir * (self.end_y - self.y) > 0.0
    }
    fn step(&mut self, t: f64, dt: f64) {
        if self.walking(t) {
            self.y += self.dir * self.speed_mps * dt;
        }
    }
    /// Heading of the walking direction, rad.
    pub fn heading(&self) -> f64 {
        self.dir * std::f64::consts::FRAC_PI_2
    }
}

/// All NPCs of a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Traffic {
    pub vehicles: Vec<Vehicle>,
    pub pedestrians: Vec<Pedestrian>,
}

/// Kind code of NPC vehicles and pedestrians in frames.
pub(crate) const VEHICLE: i32 = obstacle_type::VEHICLE;
pub(crate) const PEDESTRIAN: i32 = obstacle_type::PEDESTRIAN;
/// Pedestrian footprint side, m.
pub(crate) const PED_SIZE_M: f64 = 0.6;

impl Traffic {
    /// Samples the NPCs of one run. `ego_front_s` is the ego's initial front-bumper route position.
    pub fn sample(
        scenario: &Scenario,
        road: &Road,
        ego_front_s: f64,
        rng: &mut impl Rng,
    ) -> Traffic {
        let mut vehicles = Vec::new();
        let mut next_id = 1;
        for spec in scenario.vehicles() {
            let count = spec.count.sample(rng).round() as usize;
            let mut cursor = f64::NAN;
            for k in 0..count {
                let v = spawn::vehicle(spec, road, ego_front_s, k, &mut cursor, rng, next_id);
                next_id += 1;
                vehicles.push(v);
            }
        }
        let mut pedestrians = Vec::new();
        if let (Some(spec), Some((a, b))) = (
            scenario.pedestrians(),
            road.junction().and_then(|j| j.crosswalk_s),
        ) {
            let x = road.pose((a + b) / 2.0).x;
            let edge = road.lanes() as f64 * LANE_WIDTH_M + 2.0;
            let count = spec.count.sample(rng).round() as usize;
            for k in 0..count {
                let dir = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                pedestrians.push(Pedestrian {
                    id: 100 + k as i32,
                    x: x + rng.random_range(-1.2..=1.2),
                    y: -dir * edge,
                    dir,
                    start_t: spec.start_t_s.sample(rng),
                    speed_mps: spec.speed_mps.sample(rng),
                    end_y: dir * edge,
                });
            }
        }
        Traffic {
            vehicles,
            pedestrians,
        }
    }

    /// Advances every NPC by one tick.
    pub fn step(&mut self, view: &NpcView<'_>) {
        // Accelerations first (from the same snapshot), then integration: no order dependence.
        let snapshot: Vec<(Lane, f64, f64, f64)> = self
            .vehicles
            .iter()
            .map(|v| (v.lane, v.s, v.s - v.length_m / 2.0, v.v))
            .collect();
        let accels: Vec<f64> = self
            .vehicles
            .iter_mut()
            .map(|veh| {
                let leader = snapshot
                    .iter()
                    .filter(|(lane, s, _, _)| same_lane(*lane, veh.lane) && *s > veh.s)
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|&(_, _, rear, v)| (rear, v));
                veh.accel(view, leader)
            })
            .collect();
        for (veh, a) in self.vehicles.iter_mut().zip(accels) {
            let a = a.clamp(-9.0, NPC_IDM.max_accel_mps2);
            let v_new = (veh.v + a * view.dt).max(0.0);
            veh.s += 0.5 * (veh.v + v_new) * view.dt;
            veh.v = v_new;
        }
        for p in &mut self.pedestrians {
            p.step(view.t, view.dt);
        }
    }
}

fn same_lane(a: Lane, b: Lane) -> bool {
    match (a, b) {
        (Lane::Route, Lane::Route) => true,
        (Lane::Line { kind: x, .. }, Lane::Line { kind: y, .. }) => x == y,
        _ => false,
    }
}

mod spawn;

#[cfg(test)]
mod tests;
