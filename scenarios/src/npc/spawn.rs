//! Sampling one NPC vehicle of a `[[vehicles]]` group: its size, desired speed, lane and starting state by
//! role (lead and queued cars on the ego route, oncoming/cross/jam streams timed by their arrival at the
//! junction).

use rand::Rng;

use super::{Block, BrakeEvent, Lane, Vehicle, CROSS, CROSS_LEFT, ONCOMING};
use crate::road::Road;
use crate::scenario::{ControlSpec, CrossSide, VehicleRole, VehicleSpec};

/// Samples the `k`-th vehicle of group `spec`; `cursor` carries the previous vehicle's rear position
/// (lead, queue) or arrival time (streams) between calls.
pub(super) fn vehicle(
    spec: &VehicleSpec,
    road: &Road,
    ego_front_s: f64,
    k: usize,
    cursor: &mut f64,
    rng: &mut impl Rng,
    id: i32,
) -> Vehicle {
    let length_m = rng.random_range(4.3..=5.0);
    let width_m = rng.random_range(1.8..=2.0);
    let v_des = spec.speed_kph.sample(rng) / 3.6;
    let junction = road.junction();
    let half = junction.map_or(10.0, |j| j.half_size_m);
    let mut veh = Vehicle {
        id,
        role: spec.role,
        lane: Lane::Route,
        s: 0.0,
        v: v_des,
        length_m,
        width_m,
        v_des,
        stop_front_s: None,
        wait_s: spec.hold_s.sample(rng),
        arrived_t: None,
        cleared_line: false,
        release_t: f64::NEG_INFINITY,
        brake: None,
        block: None,
        reaction_s: 0.0,
        ego_seen_t: None,
    };
    match spec.role {
        VehicleRole::Lead => {
            let rear = if k == 0 {
                ego_front_s + spec.gap_m.sample(rng)
            } else {
                *cursor + spec.gap_m.sample(rng)
            };
            veh.s = rear + length_m / 2.0;
            *cursor = rear + length_m;
            veh.stop_front_s = junction.and_then(|j| j.stop_line_s);
            veh.brake = spec.brake_at_s.map(|at| BrakeEvent {
                at_t: at.sample(rng),
                decel_mps2: spec.brake_decel_mps2.sample(rng),
                to_mps: spec.brake_to_kph.sample(rng) / 3.6,
                hold_s: spec.hold_s.sample(rng),
            });
        }
        VehicleRole::Queue => {
            let line = junction
                .and_then(|j| j.stop_line_s.or(Some(j.entry_s)))
                .unwrap_or(road.end_s());
            let front = if k == 0 {
                line - rng.random_range(0.3..=1.2)
            } else {
                *cursor - spec.gap_m.sample(rng)
            };
            veh.s = front - length_m / 2.0;
            *cursor = front - length_m;
            veh.v = 0.0;
            veh.stop_front_s = junction.and_then(|j| j.stop_line_s);
        }
        VehicleRole::Oncoming | VehicleRole::Cross | VehicleRole::Jam => {
            veh.lane = match (spec.role, spec.side) {
                (VehicleRole::Oncoming, _) => ONCOMING,
                (_, CrossSide::Left) => CROSS_LEFT,
                (_, CrossSide::Right) => CROSS,
            };
            veh.reaction_s = spec.reaction_s.sample(rng);
            let t_arrive = if k == 0 {
                spec.first_arrival_s.sample(rng)
            } else {
                *cursor + spec.headway_s.sample(rng)
            };
            *cursor = t_arrive;
            veh.s = -v_des * t_arrive;
            // Cross traffic stops at its own line at a stop sign or a light; on a priority road it has none.
            if spec.role == VehicleRole::Cross
                && junction.is_some_and(|j| {
                    matches!(j.control, ControlSpec::StopSign | ControlSpec::Light)
                })
            {
                veh.stop_front_s = Some(-half - 1.0);
            }
        }
    }
    if spec.role == VehicleRole::Jam && k == 0 {
        veh.block = Some(Block {
            front_s: half + spec.gap_m.sample(rng),
            hold_s: spec.hold_s.sample(rng),
            since_t: None,
        });
    }
    veh
}
