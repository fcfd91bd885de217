//! Perception of road users: obstacles in the frame (with their right of way over the ego), collisions,
//! the leader in the ego's path, jam counting and the inputs of the left-turn and crosswalk decisions.

use laws::geometry::{EGO_REAR_M, EGO_WIDTH_M};
use laws::{Frame, Obstacle};

use super::{Simulation, PERCEPTION_RANGE_M};
use crate::collision::Rect;
use crate::ego::Leader;
use crate::npc::{Lane, LineKind, Pedestrian, Vehicle, PEDESTRIAN, PED_SIZE_M, VEHICLE};
use crate::road::{Junction, Pose, Road, LANE_CENTRE_M, LANE_WIDTH_M};
use crate::scenario::ControlSpec;

/// An oncoming vehicle has right of way over the left-turning ego while it would reach the conflict zone
/// within this time, s (a gap smaller than the time the ego needs to clear the zone from the yield point).
const ONCOMING_PRIORITY_S: f64 = 4.5;

/// At a give-way junction the ego's lane counts as occupied this far beyond its footprint, m.
const GIVE_WAY_MARGIN_M: f64 = 0.5;

/// The ego is "at the turn" when its front is within this distance of the yield point (or past it), m.
const AT_TURN_M: f64 = 2.0;

/// What the driver-side decisions need from the road users of one frame.
pub(super) struct Users {
    /// Nearest road user in the ego path.
    pub leader: Option<Leader>,
    /// Vehicles below 1 m/s inside the junction box.
    pub jam_count: usize,
    /// Smallest judged time-to-arrival of oncoming traffic at the left-turn conflict zone, s.
    pub min_tta_s: f64,
    /// Smallest judged time-to-arrival of priority-road traffic at the ego's lane, s (give-way junction).
    pub give_way_tta_s: f64,
    /// A pedestrian has priority on the crosswalk.
    pub ped_priority: bool,
    /// ... and is in or next to the ego lane.
    pub ped_near_lane: bool,
}

/// The ego as the road users are judged against it, at one frame.
struct EgoView<'a> {
    t: f64,
    /// Route positions of the ego's front and rear bumpers, m.
    front_s: f64,
    rear_s: f64,
    pose: &'a Pose,
    /// The ego footprint (map frame).
    rect: &'a Rect,
    junction: Option<&'a Junction>,
}

/// A road user's footprint as seen from the route: centre at route position `s` and lateral offset
/// `lat`, its heading (map frame) and speed.
struct OnRoute {
    s: f64,
    lat: f64,
    heading: f64,
    speed_mps: f64,
    length_m: f64,
    width_m: f64,
}

impl Simulation {
    /// Adds every road user within range to `f.obstacles`, sets `f.collision`, and summarises them.
    pub(super) fn observe_users(
        &self,
        t: f64,
        front_s: f64,
        pose: &Pose,
        ego_rect: &Rect,
        junction: Option<&Junction>,
        f: &mut Frame,
    ) -> Users {
        let ego = EgoView {
            t,
            front_s,
            rear_s: self.s + EGO_REAR_M,
            pose,
            rect: ego_rect,
            junction,
        };
        let mut users = Users {
            leader: None,
            jam_count: 0,
            min_tta_s: f64::INFINITY,
            give_way_tta_s: f64::INFINITY,
            ped_priority: false,
            ped_near_lane: false,
        };
        for veh in &self.traffic.vehicles {
            self.observe_vehicle(veh, &ego, &mut users, f);
        }
        for ped in &self.traffic.pedestrians {
            self.observe_pedestrian(ped, &ego, &mut users, f);
        }
        users
    }

    /// One NPC vehicle within range: collision, leader, jam count, its right of way, and its obstacle.
    fn observe_vehicle(&self, veh: &Vehicle, ego: &EgoView<'_>, users: &mut Users, f: &mut Frame) {
        let (x, y, heading) = veh.position(&self.road);
        if (x - ego.pose.x).hypot(y - ego.pose.y) > PERCEPTION_RANGE_M {
            return;
        }
        let rect = Rect {
            centre_x: x,
            centre_y: y,
            heading,
            half_length_m: veh.length_m / 2.0,
            half_width_m: veh.width_m / 2.0,
        };
        if ego.rect.overlaps(&rect) {
            f.collision = true;
        }
        let (s, lat) = match veh.lane {
            Lane::Route => (veh.s, 0.0),
            Lane::Line { .. } => self.road.project(x, y),
        };
        let on_route = OnRoute {
            s,
            lat,
            heading,
            speed_mps: veh.v,
            length_m: veh.length_m,
            width_m: veh.width_m,
        };
        consider_leader(&mut users.leader, &self.road, ego.front_s, &on_route);
        let half = ego.junction.map_or(0.0, |j| j.half_size_m);
        let in_box = ego.junction.is_some() && x.abs() < half && y.abs() < half;
        if in_box && veh.v < 1.0 {
            users.jam_count += 1;
        }
        let priority = match veh.lane {
            Lane::Line {
                kind: LineKind::Oncoming,
                ..
            } => self.oncoming_priority(veh, x, ego, &mut users.min_tta_s),
            // The controls are exclusive: a stop sign's arrival order, or a give-way junction's priority
            // road.
            Lane::Line {
                kind: LineKind::Cross,
                ..
            } => ego.junction.is_some_and(|j| {
                self.priority_road(veh, j, ego, &mut users.give_way_tta_s)
                    || self.cross_priority(veh, y, in_box, j, ego)
            }),
            Lane::Line {
                kind: LineKind::CrossLeft,
                ..
            } => ego
                .junction
                .is_some_and(|j| self.priority_road(veh, j, ego, &mut users.give_way_tta_s)),
            Lane::Route => false,
        };
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

    /// An oncoming (westbound) vehicle at `x` has right of way over a left-turning ego until its rear
    /// passes the conflict zone; lowers `min_tta_s` to its judged time to arrive there.
    fn oncoming_priority(
        &self,
        veh: &Vehicle,
        x: f64,
        ego: &EgoView<'_>,
        min_tta_s: &mut f64,
    ) -> bool {
        let Some(c) = self.conflict else {
            return false;
        };
        let rear_x = x + veh.length_m / 2.0;
        let front_x = x - veh.length_m / 2.0;
        if !(ego.rear_s < c.s_hi && rear_x > c.x_lo) {
            return false;
        }
        let judged_v = (veh.v * (1.0 + self.driver.judgement_error)).max(0.1);
        let tta = if front_x <= c.x_hi {
            0.0
        } else {
            (front_x - c.x_hi) / judged_v
        };
        *min_tta_s = min_tta_s.min(tta);
        // Right of way matters once the ego is at the turn (front within AT_TURN_M of the yield point or
        // past it): oncoming cars passing the ego on its approach do not have to be yielded to yet.
        let at_turn = ego.front_s > c.s_lo - 0.5 - AT_TURN_M;
        at_turn && tta < ONCOMING_PRIORITY_S
    }

    /// At a give-way junction, priority-road traffic has right of way until its rear has passed the ego's
    /// lane (plus a margin) or the ego has crossed; lowers `tta_s` to its judged time to arrive at the lane.
    fn priority_road(
        &self,
        veh: &Vehicle,
        j: &Junction,
        ego: &EgoView<'_>,
        tta_s: &mut f64,
    ) -> bool {
        let Lane::Line { y0, heading, .. } = veh.lane else {
            return false;
        };
        if j.control != ControlSpec::Yield || ego.rear_s >= j.exit_s {
            return false;
        }
        // The ego lane's centre line in the vehicle's lane coordinate, and the occupied strip around it.
        let lane_s = (-LANE_CENTRE_M - y0) / heading.sin();
        let margin = EGO_WIDTH_M / 2.0 + GIVE_WAY_MARGIN_M;
        let (front, rear) = (veh.s + veh.length_m / 2.0, veh.s - veh.length_m / 2.0);
        if rear >= lane_s + margin {
            return false;
        }
        let judged_v = (veh.v * (1.0 + self.driver.judgement_error)).max(0.1);
        *tta_s = tta_s.min((lane_s - margin - front).max(0.0) / judged_v);
        true
    }

    /// A cross vehicle at `y` has right of way at a stop sign when it arrived first, or while it moves in
    /// the box.
    fn cross_priority(
        &self,
        veh: &Vehicle,
        y: f64,
        in_box: bool,
        j: &Junction,
        ego: &EgoView<'_>,
    ) -> bool {
        if !(j.control == ControlSpec::StopSign
            && y - veh.length_m / 2.0 < j.half_size_m
            && ego.rear_s < j.exit_s)
        {
            return false;
        }
        let first = match (veh.arrived_t, self.ego_arrived_t) {
            (Some(a), Some(e)) => a < e,
            (Some(_), None) => true,
            _ => false,
        };
        first || (in_box && veh.v > 0.5)
    }

    /// One pedestrian: collision, leader, its right of way on the crosswalk, and its obstacle.
    fn observe_pedestrian(
        &self,
        ped: &Pedestrian,
        ego: &EgoView<'_>,
        users: &mut Users,
        f: &mut Frame,
    ) {
        let rect = Rect {
            centre_x: ped.x,
            centre_y: ped.y,
            heading: ped.heading(),
            half_length_m: PED_SIZE_M / 2.0,
            half_width_m: PED_SIZE_M / 2.0,
        };
        if ego.rect.overlaps(&rect) {
            f.collision = true;
        }
        let walking = ped.walking(ego.t);
        let v = if walking { ped.speed_mps } else { 0.0 };
        let (s, lat) = self.road.project(ped.x, ped.y);
        let on_route = OnRoute {
            s,
            lat,
            heading: ped.heading(),
            speed_mps: v,
            length_m: PED_SIZE_M,
            width_m: PED_SIZE_M,
        };
        consider_leader(&mut users.leader, &self.road, ego.front_s, &on_route);
        let mut priority = false;
        if let Some((_, b)) = ego.junction.and_then(|j| j.crosswalk_s) {
            // Still to cross the ego lane (its far edge plus a margin) in the walking direction.
            let lane_far_edge = -LANE_CENTRE_M + ped.dir * (LANE_WIDTH_M / 2.0 + 1.0);
            let still_to_cross = ped.dir * (lane_far_edge - ped.y) > 0.0;
            priority = walking && ego.rear_s <= b && still_to_cross;
            if priority && (ped.y + LANE_CENTRE_M).abs() < 4.0 {
                users.ped_near_lane = true;
            }
        }
        users.ped_priority |= priority;
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
}

/// Updates `leader` with a road user if it is in the ego's path ahead: its footprint, rotated into the
/// route frame, overlaps the ego corridor.
fn consider_leader(leader: &mut Option<Leader>, road: &Road, front_s: f64, user: &OnRoute) {
    let dh = user.heading - road.pose(user.s).heading;
    let (c, s) = (dh.cos().abs(), dh.sin().abs());
    let ext_long = user.length_m / 2.0 * c + user.width_m / 2.0 * s;
    let ext_lat = user.length_m / 2.0 * s + user.width_m / 2.0 * c;
    if user.lat.abs() > EGO_WIDTH_M / 2.0 + ext_lat + 0.25 {
        return;
    }
    let gap = user.s - ext_long - front_s;
    if user.s + ext_long < front_s - 0.5 || gap > 100.0 {
        return;
    }
    let v_along = (user.speed_mps * dh.cos()).max(0.0);
    if leader.is_none_or(|l| gap < l.gap_m) {
        *leader = Some(Leader {
            gap_m: gap,
            speed_mps: v_along,
        });
    }
}
