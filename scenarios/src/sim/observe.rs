//! Perception: the frame and the driver's view of the current world state (road features here, road users
//! in [`super::users`]). Observing only reads the world; [`Simulation::note_progress`] records the little
//! the world remembers about the ego.

use laws::frame::{gear, light_color, planned_turn, turn_signal};
use laws::geometry::EGO_REAR_M;
use laws::Frame;

use super::users::Users;
use super::{Simulation, MAX_STEER_RAD, WHEELBASE_M};
use crate::ego::{
    CrosswalkAhead, GiveWay, LightAhead, LimitAhead, Perception, StopSignAhead, TurnAhead,
};
use crate::npc::{Lane, LineKind};
use crate::road::{Junction, Pose, LANE_CENTRE_M, LANE_WIDTH_M};
use crate::scenario::{ControlSpec, TurnSpec};

impl Simulation {
    /// Records what the world remembers about the ego at this tick: when it came to rest at a stop-sign
    /// line (its place in the arrival order) and whether it reached the end of its route. Runs before
    /// [`Simulation::observe`], which only reads.
    pub(super) fn note_progress(&mut self, t: f64, front_s: f64) {
        let stop_sign_line = self
            .road
            .junction()
            .filter(|j| j.control == ControlSpec::StopSign)
            .and_then(|j| j.stop_line_s);
        if let Some(line) = stop_sign_line {
            if self.ego_arrived_t.is_none() && self.v < 2.5 && line - front_s < 3.0 {
                self.ego_arrived_t = Some(t);
            }
        }
        if front_s >= self.road.end_s() - 5.0 {
            self.destination = true;
        }
    }

    /// The frame and the driver's perception of the current state.
    pub(super) fn observe(&self, t: f64, front_s: f64) -> (Frame, Perception) {
        let pose = self.road.pose(self.s);
        let mut f = self.ego_frame(t, &pose);
        let mut p = self.perceive_limits(t, front_s);
        let junction = self.road.junction();
        if let Some(j) = junction {
            self.observe_junction(j, t, front_s, &mut f, &mut p);
        }
        let users = self.observe_users(t, front_s, &pose, &self.ego_rect(), junction, &mut f);
        self.perceive_users(&users, junction, front_s, &mut f, &mut p);
        f.destination = self.destination;
        if f.light_color == light_color::NONE {
            f.signal_ahead = false;
        }
        (f, p)
    }

    /// The ego's own part of the frame: pose, speed, controls and the lane count.
    fn ego_frame(&self, t: f64, pose: &Pose) -> Frame {
        Frame {
            t,
            x: pose.x,
            y: pose.y,
            z: 0.0,
            heading: pose.heading,
            speed_mps: self.v,
            gear: gear::DRIVE,
            steering_pct: ((WHEELBASE_M * pose.curvature).atan() / MAX_STEER_RAD * 100.0)
                .clamp(-100.0, 100.0) as f32,
            speed_limit_mps: self.road.limit_at(self.s),
            lane_number: if self.road.in_junction(self.s) {
                0
            } else {
                self.road.lanes()
            },
            low_beam: false,
            ..Frame::default()
        }
    }

    /// The perception's start: time, speed, and the speed limits in force and ahead (within 150 m).
    fn perceive_limits(&self, t: f64, front_s: f64) -> Perception {
        Perception {
            t,
            speed_mps: self.v,
            limit_mps: self.road.limit_at(self.s),
            first_limit_mps: self.road.limit_at(0.0),
            limits_ahead: self
                .road
                .limits()
                .iter()
                .filter(|(from, _)| *from > front_s && *from - front_s < 150.0)
                .map(|(from, lim)| LimitAhead {
                    dist_m: from - front_s,
                    limit_mps: *lim,
                })
                .collect(),
            ..Perception::default()
        }
    }

    /// The junction's road features: distances to it, its stop line and crosswalk, the planned turn, and
    /// what controls it.
    fn observe_junction(
        &self,
        j: &Junction,
        t: f64,
        front_s: f64,
        f: &mut Frame,
        p: &mut Perception,
    ) {
        let rear_s = self.s + EGO_REAR_M;
        f.junction_dist_m = if front_s < j.entry_s {
            j.entry_s - front_s
        } else if rear_s < j.exit_s {
            0.0
        } else {
            f64::INFINITY
        };
        if let Some(d) = stop_line_ahead(j, front_s) {
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
        if self.s < j.exit_s {
            self.observe_turn(j, front_s, f, p);
        }
        match j.control {
            ControlSpec::Light => self.observe_light(j, t, front_s, f, p),
            ControlSpec::StopSign => self.observe_stop_sign(j, front_s, f, p),
            ControlSpec::None => self.observe_uncontrolled(j, front_s, p),
            // Give way: decided with the road users' times to arrival (`perceive_users`).
            ControlSpec::Yield => {}
        }
    }

    /// Before the junction's exit: the planned turn, the turn signal of a driver who signals, and the turn
    /// the driver slows for.
    fn observe_turn(&self, j: &Junction, front_s: f64, f: &mut Frame, p: &mut Perception) {
        f.planned_turn = match j.turn {
            TurnSpec::Straight => planned_turn::STRAIGHT,
            TurnSpec::Left => planned_turn::LEFT,
            TurnSpec::Right => planned_turn::RIGHT,
        };
        if f.planned_turn == planned_turn::STRAIGHT {
            return;
        }
        let entry_dist = (j.entry_s - front_s).max(0.0);
        if self.driver.signals_turns && entry_dist < 60.0 {
            f.turn_signal = if j.turn == TurnSpec::Left {
                turn_signal::LEFT
            } else {
                turn_signal::RIGHT
            };
        }
        let radius = match j.turn {
            TurnSpec::Left => j.half_size_m + LANE_CENTRE_M,
            _ => j.half_size_m - LANE_CENTRE_M,
        };
        p.turn = Some(TurnAhead {
            dist_m: entry_dist,
            radius_m: radius,
        });
    }

    /// A light junction: the colour until the ego leaves the junction, and the light the driver reacts to
    /// while its stop line is ahead.
    fn observe_light(&self, j: &Junction, t: f64, front_s: f64, f: &mut Frame, p: &mut Perception) {
        let Some(light) = self.light.filter(|_| self.s < j.exit_s) else {
            return;
        };
        f.light_color = light.color_at(t);
        f.signal_ahead = true;
        if let Some(d) = stop_line_ahead(j, front_s) {
            p.light = Some(LightAhead {
                color: f.light_color,
                dist_m: d,
            });
        }
    }

    /// A stop-sign junction: the sign's distance, and the line the driver stops at until the junction is
    /// clear (arrival order from [`Simulation::note_progress`]).
    fn observe_stop_sign(&self, j: &Junction, front_s: f64, f: &mut Frame, p: &mut Perception) {
        if let Some(d) = stop_line_ahead(j, front_s) {
            f.stopsign_dist_m = d;
        }
        if let Some(line) = j.stop_line_s.filter(|line| front_s < line + 0.5) {
            p.stop_sign = Some(StopSignAhead {
                dist_m: line - front_s,
                clear: self.stop_sign_clear(j.half_size_m),
            });
        }
    }

    /// A junction without control. Priority to the right is not modelled; the ego yields to cross traffic
    /// that is moving in the junction or about to enter it, like at a stop sign without the stop.
    fn observe_uncontrolled(&self, j: &Junction, front_s: f64, p: &mut Perception) {
        let has_cross = self.traffic.vehicles.iter().any(|v| {
            matches!(
                v.lane,
                Lane::Line {
                    kind: LineKind::Cross,
                    ..
                }
            )
        });
        if has_cross && front_s < j.entry_s + 0.5 && !self.stop_sign_clear(j.half_size_m) {
            p.stop_sign = Some(StopSignAhead {
                dist_m: j.entry_s - front_s,
                clear: false,
            });
        }
    }

    /// What the driver takes from the road users: the leader, a jammed junction ahead, the oncoming gap of
    /// a left turn or the priority road's gap at a give-way junction, and a pedestrian with priority.
    fn perceive_users(
        &self,
        users: &Users,
        junction: Option<&Junction>,
        front_s: f64,
        f: &mut Frame,
        p: &mut Perception,
    ) {
        p.leader = users.leader;
        let Some(j) = junction else {
            return;
        };
        f.traffic_jam = users.jam_count >= 3 && self.s < j.exit_s;
        if f.traffic_jam && front_s < j.entry_s + 0.5 {
            p.jam_dist_m = Some(j.entry_s - front_s);
        }
        if let Some(c) = self.conflict.filter(|c| front_s < c.s_lo + 0.5) {
            p.give_way = Some(GiveWay {
                dist_m: c.s_lo - 0.5 - front_s,
                min_tta_s: users.min_tta_s,
                approach: false,
                hold_m: 0.5,
            });
        }
        // The priority road's near lane begins this far into the box (its lanes are those of the ego's
        // road: the box is square).
        let lanes_m = f64::from(self.road.lanes()) * LANE_WIDTH_M;
        let hold_m = (j.half_size_m - lanes_m).max(0.5);
        if j.control == ControlSpec::Yield && front_s < j.entry_s + hold_m {
            p.give_way = Some(GiveWay {
                dist_m: j.entry_s - front_s,
                min_tta_s: users.give_way_tta_s,
                approach: true,
                hold_m,
            });
        }
        if let Some((a, _)) = j.crosswalk_s {
            if users.ped_priority && front_s < a + 0.5 {
                p.crosswalk = Some(CrosswalkAhead {
                    dist_m: a - front_s,
                    ped_near_lane: users.ped_near_lane,
                });
            }
        }
    }

    /// Stop sign: the ego may go when no cross vehicle has priority and none is moving in the junction.
    fn stop_sign_clear(&self, half: f64) -> bool {
        self.traffic.vehicles.iter().all(|veh| {
            let Lane::Line {
                kind: LineKind::Cross,
                ..
            } = veh.lane
            else {
                return true;
            };
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

/// Distance from the front bumper to the junction's stop line while the line is ahead.
fn stop_line_ahead(j: &Junction, front_s: f64) -> Option<f64> {
    j.stop_line_s
        .filter(|line| front_s <= *line)
        .map(|line| line - front_s)
}
