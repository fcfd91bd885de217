//! Perception of road users: obstacles in the frame (with their right of way over the ego), collisions,
//! the leader in the ego's path, jam counting and the inputs of the left-turn and crosswalk decisions.

use laws::{Frame, Obstacle};

use super::{Simulation, EGO_REAR_M, EGO_WIDTH_M, PERCEPTION_RANGE_M};
use crate::collision::Rect;
use crate::ego::Leader;
use crate::npc::{Lane, LineKind, PEDESTRIAN, PED_SIZE_M, VEHICLE};
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
        // Road users.
        let rear_s = self.s - EGO_REAR_M;
        let mut leader: Option<Leader> = None;
        let mut jam_count = 0;
        let mut min_tta = f64::INFINITY;
        let mut give_way_tta = f64::INFINITY;
        let mut ped_priority = false;
        let mut ped_near_lane = false;
        let half = junction.map_or(0.0, |j| j.half_size_m);
        for veh in &self.traffic.vehicles {
            let (x, y, heading) = veh.position(&self.road);
            if (x - pose.x).hypot(y - pose.y) > PERCEPTION_RANGE_M {
                continue;
            }
            let rect = Rect {
                centre_x: x,
                centre_y: y,
                heading,
                half_length_m: veh.length_m / 2.0,
                half_width_m: veh.width_m / 2.0,
            };
            if ego_rect.overlaps(&rect) {
                f.collision = true;
            }
            let (s_o, lat) = match veh.lane {
                Lane::Route => (veh.s, 0.0),
                Lane::Line { .. } => self.road.project(x, y),
            };
            consider_leader(
                &mut leader,
                &self.road,
                front_s,
                s_o,
                lat,
                heading,
                veh.v,
                veh.length_m,
                veh.width_m,
            );
            let in_box = junction.is_some() && x.abs() < half && y.abs() < half;
            if in_box && veh.v < 1.0 {
                jam_count += 1;
            }
            let mut priority = false;
            if let (
                Some(c),
                Lane::Line {
                    kind: LineKind::Oncoming,
                    ..
                },
            ) = (self.conflict, veh.lane)
            {
                // Oncoming (westbound): priority until its rear passes the conflict zone.
                let rear_x = x + veh.length_m / 2.0;
                let front_x = x - veh.length_m / 2.0;
                if rear_s < c.s_hi && rear_x > c.x_lo {
                    let judged_v = (veh.v * (1.0 + self.driver.judgement_error)).max(0.1);
                    let tta = if front_x <= c.x_hi {
                        0.0
                    } else {
                        (front_x - c.x_hi) / judged_v
                    };
                    min_tta = min_tta.min(tta);
                    // Right of way matters once the ego is at the turn (front within AT_TURN_M of the
                    // yield point or past it): oncoming cars passing the ego on its approach do not have to
                    // be yielded to yet.
                    let at_turn = front_s > c.s_lo - 0.5 - AT_TURN_M;
                    priority = at_turn && tta < ONCOMING_PRIORITY_S;
                }
            }
            if let (
                Some(j),
                Lane::Line {
                    y0,
                    heading,
                    kind: LineKind::Cross | LineKind::CrossLeft,
                    ..
                },
            ) = (junction, veh.lane)
            {
                if j.control == ControlSpec::Yield && rear_s < j.exit_s {
                    // The priority road has right of way until the vehicle's rear has passed the ego's
                    // lane (plus a margin), or the ego has crossed.
                    let lane_s = (-LANE_CENTRE_M - y0) / heading.sin();
                    let margin = EGO_WIDTH_M / 2.0 + GIVE_WAY_MARGIN_M;
                    let (front, rear) = (veh.s + veh.length_m / 2.0, veh.s - veh.length_m / 2.0);
                    if rear < lane_s + margin {
                        priority = true;
                        let judged_v = (veh.v * (1.0 + self.driver.judgement_error)).max(0.1);
                        give_way_tta =
                            give_way_tta.min((lane_s - margin - front).max(0.0) / judged_v);
                    }
                }
            }
            if let (
                Some(j),
                Lane::Line {
                    kind: LineKind::Cross,
                    ..
                },
            ) = (junction, veh.lane)
            {
                if j.control == ControlSpec::StopSign
                    && y - veh.length_m / 2.0 < half
                    && rear_s < j.exit_s
                {
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
        let crosswalk = junction.and_then(|j| j.crosswalk_s);
        for ped in &self.traffic.pedestrians {
            let rect = Rect {
                centre_x: ped.x,
                centre_y: ped.y,
                heading: ped.heading(),
                half_length_m: PED_SIZE_M / 2.0,
                half_width_m: PED_SIZE_M / 2.0,
            };
            if ego_rect.overlaps(&rect) {
                f.collision = true;
            }
            let walking = ped.walking(t);
            let v = if walking { ped.speed_mps } else { 0.0 };
            let (s_o, lat) = self.road.project(ped.x, ped.y);
            consider_leader(
                &mut leader,
                &self.road,
                front_s,
                s_o,
                lat,
                ped.heading(),
                v,
                PED_SIZE_M,
                PED_SIZE_M,
            );
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
        Users {
            leader,
            jam_count,
            min_tta_s: min_tta,
            give_way_tta_s: give_way_tta,
            ped_priority,
            ped_near_lane,
        }
    }
}

/// Updates `leader` with a road user at route position `s_o` (centre) and lateral offset `lat` if it is in
/// the ego's path ahead: its footprint, rotated into the route frame, overlaps the ego corridor.
#[allow(clippy::too_many_arguments)]
fn consider_leader(
    leader: &mut Option<Leader>,
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
    if leader.is_none_or(|l| gap < l.gap_m) {
        *leader = Some(Leader {
            gap_m: gap,
            speed_mps: v_along,
        });
    }
}
