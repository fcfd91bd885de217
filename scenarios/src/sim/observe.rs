//! Perception: the frame and the driver's view of the current world state (road features here, road users
//! in [`super::users`]).

use laws::frame::{gear, light_color, planned_turn, turn_signal};
use laws::Frame;

use super::{Simulation, EGO_REAR_M, MAX_STEER_RAD, WHEELBASE_M};
use crate::ego::{
    CrosswalkAhead, GiveWay, LightAhead, LimitAhead, Perception, StopSignAhead, TurnAhead,
};
use crate::npc::{Lane, LineKind};
use crate::road::{LANE_CENTRE_M, LANE_WIDTH_M};
use crate::scenario::{ControlSpec, TurnSpec};

impl Simulation {
    /// Builds the frame and the driver's perception for the current state.
    pub(super) fn observe(&mut self, t: f64, front_s: f64) -> (Frame, Perception) {
        let pose = self.road.pose(self.s);
        let rear_s = self.s - EGO_REAR_M;
        let junction = self.road.junction().cloned();
        let ego_rect = self.ego_rect();
        let mut p = Perception {
            t,
            speed_mps: self.v,
            limit_mps: self.road.limit_at(self.s),
            first_limit_mps: self.road.limit_at(0.0),
            ..Perception::default()
        };
        p.limits_ahead = self
            .road
            .limits()
            .iter()
            .filter(|(from, _)| *from > front_s && *from - front_s < 150.0)
            .map(|(from, lim)| LimitAhead {
                dist_m: from - front_s,
                limit_mps: *lim,
            })
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
            steering_pct: ((WHEELBASE_M * pose.curvature).atan() / MAX_STEER_RAD * 100.0)
                .clamp(-100.0, 100.0) as f32,
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
            let line_dist = j
                .stop_line_s
                .filter(|line| front_s <= *line)
                .map(|line| line - front_s);
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
            }
            match j.control {
                ControlSpec::Light => {
                    if let Some(light) = self.light.filter(|_| before_exit) {
                        f.light_color = light.color_at(t);
                        f.signal_ahead = true;
                        if let Some(d) = line_dist {
                            p.light = Some(LightAhead {
                                color: f.light_color,
                                dist_m: d,
                            });
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
                            p.stop_sign = Some(StopSignAhead {
                                dist_m: line - front_s,
                                clear: self.stop_sign_clear(j.half_size_m),
                            });
                        }
                    }
                }
                // Give way: decided with the road users' times to arrival (below).
                ControlSpec::Yield => {}
                ControlSpec::None => {
                    // Priority to the right is not modelled; the ego yields to cross traffic that is moving
                    // in the junction or about to enter it, like at a stop sign without the stop.
                    let has_cross = self.traffic.vehicles.iter().any(|v| {
                        matches!(
                            v.lane,
                            Lane::Line {
                                kind: LineKind::Cross,
                                ..
                            }
                        )
                    });
                    if has_cross
                        && front_s < j.entry_s + 0.5
                        && !self.stop_sign_clear(j.half_size_m)
                    {
                        p.stop_sign = Some(StopSignAhead {
                            dist_m: j.entry_s - front_s,
                            clear: false,
                        });
                    }
                }
            }
        }

        let users = self.observe_users(t, front_s, &pose, &ego_rect, junction.as_ref(), &mut f);
        let crosswalk = junction.as_ref().and_then(|j| j.crosswalk_s);
        p.leader = users.leader;
        if let Some(j) = &junction {
            f.traffic_jam = users.jam_count >= 3 && self.s < j.exit_s;
            if f.traffic_jam && front_s < j.entry_s + 0.5 {
                p.jam_dist_m = Some(j.entry_s - front_s);
            }
            if let Some(c) = self.conflict {
                if front_s < c.s_lo + 0.5 {
                    p.give_way = Some(GiveWay {
                        dist_m: c.s_lo - 0.5 - front_s,
                        min_tta_s: users.min_tta_s,
                        approach: false,
                        hold_m: 0.5,
                    });
                }
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
            if let Some((a, _)) = crosswalk {
                if users.ped_priority && front_s < a + 0.5 {
                    p.crosswalk = Some(CrosswalkAhead {
                        dist_m: a - front_s,
                        ped_near_lane: users.ped_near_lane,
                    });
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
