//! Route geometry: arc length along the ego route to map pose, and the road features along it.
//!
//! The map is fixed and simple so that every run of a scenario shares it: the junction box is a square
//! centred on the map origin, roads run east–west and north–south, lanes are 3.5 m wide and traffic keeps
//! right. The ego drives east in the lane centred at `y = -1.75` m, starting `approach_m` before the junction
//! entry at `x = -size/2`, then goes straight, turns left (ending northbound at `x = +1.75`) or right (ending
//! southbound at `x = -1.75`) on a circular arc, then follows a straight exit.
//!
//! Route positions `s` are arc lengths in metres from the start of the approach. Features (stop line,
//! crosswalk, junction entry and exit, limit changes) are stored as route positions, so "distance ahead" is
//! a subtraction.

use std::f64::consts::FRAC_PI_2;

use crate::scenario::{ControlSpec, CrosswalkSide, RoadSpec, TurnSpec};

/// Lane width, m.
pub const LANE_WIDTH_M: f64 = 3.5;
/// Lateral offset of a lane centre from the road centre line, m.
pub const LANE_CENTRE_M: f64 = LANE_WIDTH_M / 2.0;
/// Crosswalk width along the route, m.
pub const CROSSWALK_WIDTH_M: f64 = 4.0;

/// A pose on the route: map position, heading (rad, ENU) and path curvature (1/m, left positive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Map x, m.
    pub x: f64,
    /// Map y, m.
    pub y: f64,
    /// Heading, rad.
    pub heading: f64,
    /// Signed curvature, 1/m.
    pub curvature: f64,
}

/// The arc through the junction of a turning route.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Arc {
    centre_x: f64,
    centre_y: f64,
    radius_m: f64,
    /// +1 for a left (counter-clockwise) turn, -1 for a right turn.
    sign: f64,
}

/// The junction as seen from the ego route.
#[derive(Debug, Clone, PartialEq)]
pub struct Junction {
    /// Half the side of the junction box, m.
    pub half_size_m: f64,
    /// Ego manoeuvre.
    pub turn: TurnSpec,
    /// Control of the ego approach.
    pub control: ControlSpec,
    /// Route position of the junction entry, m.
    pub entry_s: f64,
    /// Route position of the junction exit, m.
    pub exit_s: f64,
    /// Route position of the ego stop line, m (lights and stop signs).
    pub stop_line_s: Option<f64>,
    /// Route interval of the crosswalk (before the entry or after the exit), m.
    pub crosswalk_s: Option<(f64, f64)>,
    arc: Option<Arc>,
}

/// The ego route with its features.
#[derive(Debug, Clone, PartialEq)]
pub struct Road {
    start_x: f64,
    approach_m: f64,
    end_s: f64,
    lanes: i32,
    /// `(from_s, limit_mps)`, increasing in `from_s`, first at 0.
    limits: Vec<(f64, f64)>,
    junction: Option<Junction>,
}

impl Road {
    /// Builds the route of a (validated) road spec.
    pub fn new(spec: &RoadSpec) -> Road {
        let mut limits = vec![(0.0, spec.speed_limit_kph / 3.6)];
        limits.extend(spec.limit_changes.iter().map(|[s, kph]| (*s, kph / 3.6)));
        let (start_x, junction, end_s) = match &spec.junction {
            None => (-spec.approach_m, None, spec.approach_m + spec.exit_m),
            Some(j) => {
                let h = j.size_m / 2.0;
                let entry_s = spec.approach_m;
                let (arc, len) = match j.turn {
                    TurnSpec::Straight => (None, j.size_m),
                    TurnSpec::Left => {
                        let r = h + LANE_CENTRE_M;
                        (
                            Some(Arc {
                                centre_x: -h,
                                centre_y: -LANE_CENTRE_M + r,
                                radius_m: r,
                                sign: 1.0,
                            }),
                            r * FRAC_PI_2,
                        )
                    }
                    TurnSpec::Right => {
                        let r = h - LANE_CENTRE_M;
                        (
                            Some(Arc {
                                centre_x: -h,
                                centre_y: -LANE_CENTRE_M - r,
                                radius_m: r,
                                sign: -1.0,
                            }),
                            r * FRAC_PI_2,
                        )
                    }
                };
                let exit_s = entry_s + len;
                let crosswalk_s = j.crosswalk.then_some(match j.crosswalk_side {
                    CrosswalkSide::Entry => (entry_s - CROSSWALK_WIDTH_M, entry_s),
                    CrosswalkSide::Exit => (exit_s, exit_s + CROSSWALK_WIDTH_M),
                });
                let line_ref = match (j.crosswalk_side, crosswalk_s) {
                    (CrosswalkSide::Entry, Some((a, _))) => a,
                    _ => entry_s,
                };
                let stop_line_s = match j.control {
                    ControlSpec::None | ControlSpec::Yield => None,
                    ControlSpec::Light | ControlSpec::StopSign => {
                        Some(line_ref - j.stop_line_gap_m)
                    }
                };
                let junction = Junction {
                    half_size_m: h,
                    turn: j.turn,
                    control: j.control,
                    entry_s,
                    exit_s: entry_s + len,
                    stop_line_s,
                    crosswalk_s,
                    arc,
                };
                (
                    -h - spec.approach_m,
                    Some(junction),
                    entry_s + len + spec.exit_m,
                )
            }
        };
        Road {
            start_x,
            approach_m: spec.approach_m,
            end_s,
            lanes: spec.lanes,
            limits,
            junction,
        }
    }

    /// Route length, m.
    pub fn end_s(&self) -> f64 {
        self.end_s
    }
    /// Lanes per direction.
    pub fn lanes(&self) -> i32 {
        self.lanes
    }
    /// The junction, if the route has one.
    pub fn junction(&self) -> Option<&Junction> {
        self.junction.as_ref()
    }
    /// Speed limit in force at route position `s`, m/s.
    pub fn limit_at(&self, s: f64) -> f64 {
        self.limits
            .iter()
            .rev()
            .find(|(from, _)| *from <= s)
            .or(self.limits.first())
            .map_or(f64::INFINITY, |l| l.1)
    }
    /// Limit changes as `(from_s, limit_mps)`.
    pub fn limits(&self) -> &[(f64, f64)] {
        &self.limits
    }
    /// True when route position `s` lies inside the junction.
    pub fn in_junction(&self, s: f64) -> bool {
        self.junction
            .as_ref()
            .is_some_and(|j| s >= j.entry_s && s < j.exit_s)
    }

    /// The pose at route position `s` (clamped to the route's ends is not applied: positions past the end
    /// extend the exit straight).
    pub fn pose(&self, s: f64) -> Pose {
        let straight = |x: f64, y: f64, heading: f64, d: f64| Pose {
            x: x + d * heading.cos(),
            y: y + d * heading.sin(),
            heading,
            curvature: 0.0,
        };
        let Some(j) = &self.junction else {
            return straight(self.start_x, -LANE_CENTRE_M, 0.0, s);
        };
        if s < j.entry_s {
            return straight(self.start_x, -LANE_CENTRE_M, 0.0, s);
        }
        match j.arc {
            None => straight(-j.half_size_m, -LANE_CENTRE_M, 0.0, s - j.entry_s),
            Some(arc) => {
                let along = (s - j.entry_s).min(j.exit_s - j.entry_s);
                let pose = arc.pose(along);
                if s <= j.exit_s {
                    pose
                } else {
                    straight(pose.x, pose.y, pose.heading, s - j.exit_s)
                }
            }
        }
    }

    /// Projects a map point onto the route: `(s, lateral_m)`, lateral positive to the left of the route.
    /// Picks the closest of the route's pieces; positions before the start or past the end extrapolate the
    /// end straights.
    pub fn project(&self, x: f64, y: f64) -> (f64, f64) {
        let on_line = |x0: f64, y0: f64, heading: f64, s0: f64, lo: f64, hi: f64| {
            let (c, sn) = (heading.cos(), heading.sin());
            let (dx, dy) = (x - x0, y - y0);
            let along = (dx * c + dy * sn).clamp(lo, hi);
            let (px, py) = (x0 + along * c, y0 + along * sn);
            let lateral = -(x - px) * sn + (y - py) * c;
            let dist2 = (x - px).powi(2) + (y - py).powi(2);
            (s0 + along, lateral, dist2)
        };
        let Some(j) = &self.junction else {
            let (s, lat, _) = on_line(
                self.start_x,
                -LANE_CENTRE_M,
                0.0,
                0.0,
                f64::NEG_INFINITY,
                f64::INFINITY,
            );
            return (s, lat);
        };
        let first = on_line(
            self.start_x,
            -LANE_CENTRE_M,
            0.0,
            0.0,
            f64::NEG_INFINITY,
            self.approach_m,
        );
        let rest = match j.arc {
            None => on_line(
                -j.half_size_m,
                -LANE_CENTRE_M,
                0.0,
                j.entry_s,
                0.0,
                f64::INFINITY,
            ),
            Some(arc) => {
                let len = j.exit_s - j.entry_s;
                let end = arc.pose(len);
                let exit = on_line(end.x, end.y, end.heading, j.exit_s, 0.0, f64::INFINITY);
                let on_arc = arc.project(x, y, len, j.entry_s);
                if on_arc.2 < exit.2 {
                    on_arc
                } else {
                    exit
                }
            }
        };
        let best = if first.2 <= rest.2 { first } else { rest };
        (best.0, best.1)
    }
}

impl Arc {
    fn pose(&self, along: f64) -> Pose {
        let theta = along / self.radius_m;
        let r = self.radius_m;
        Pose {
            x: self.centre_x + r * theta.sin(),
            y: self.centre_y - self.sign * r * theta.cos(),
            heading: self.sign * theta,
            curvature: self.sign / r,
        }
    }

    /// `(s, lateral, dist²)` of the closest arc point.
    fn project(&self, x: f64, y: f64, len: f64, s0: f64) -> (f64, f64, f64) {
        let (dx, dy) = (x - self.centre_x, y - self.centre_y);
        // Angle swept from the arc start, measured in the turning direction.
        let theta = dx.atan2(-self.sign * dy).clamp(0.0, len / self.radius_m);
        let along = theta * self.radius_m;
        let p = self.pose(along);
        let radial = (dx * dx + dy * dy).sqrt();
        // Left of a left turn is towards the centre.
        let lateral = self.sign * (self.radius_m - radial);
        let dist2 = (x - p.x).powi(2) + (y - p.y).powi(2);
        (s0 + along, lateral, dist2)
    }
}

#[cfg(test)]
mod tests;
