//! The road fields of a frame from the path ahead: what [`super::tracker::MapTracker::fill`] writes.
//!
//! Arc lengths are along the path (see [`Path`]); the ego's reference point (rear-axle centre) is at `s`,
//! its front bumper at `s + EGO_FRONT_M`, its rear bumper at `s + EGO_REAR_M` (LawBreaker's Lincoln MKZ,
//! as the scenario generator uses). Every rule below matches how the scenario generator fills the same
//! fields, so that a model learned on generated runs reads map-derived frames the same way:
//!
//! - `junction_dist`: the first junction on the path whose span the rear bumper has not left: its entry
//!   minus the front bumper, 0 once the front bumper is in it. `lane_number` is 0 while the reference point
//!   is inside a junction span, else the ego lane's same-direction lane count.
//! - `stopline_dist`: the next stop line (a traffic light's or a stop sign's) at or ahead of the front
//!   bumper; `stopsign_dist` the same for stop-sign lines only.
//! - `crosswalk_dist`: the first crosswalk on the path that the rear bumper has not left: entry minus the
//!   front bumper, 0 while on it.
//! - The **governing junction** is the first junction on the path that the reference point has not left.
//!   Its **governing signals** are the traffic lights whose stop lines lie on the path after the previous
//!   junction and before its exit (so a light stays governing after the ego passes its stop line, until the
//!   ego leaves the junction). Without a junction ahead, the signals whose stop lines are ahead of the front
//!   bumper govern. `signal_ahead` says whether any signal governs; `light_color`/`light_blink` come from
//!   the latest detection of the first governing signal (by stop-line position, then map order) that the
//!   detection reports, **matched by signal id**; 0 (unknown) when the detection has none of them.
//! - `planned_turn`: the turn of the first lane of the path inside the governing junction (left and U-turn
//!   are left).
//! - `speed_limit`: the ego lane's limit.
//! - `traffic_jam`: at least [`JAM_MIN_VEHICLES`] vehicles slower than [`JAM_SPEED_MPS`] inside the governing
//!   junction's polygon (LawBreaker's `isTrafficJam`).
//! - Obstacle `priority` (right of way over the ego), rules in order:
//!   1. a pedestrian or bicycle inside the polygon of a crosswalk on the path ahead (not yet left by the
//!      rear bumper, within [`PRIORITY_RANGE_M`] of the front bumper);
//!   2. when the ego turns left (or U-turns) at the governing junction, within [`PRIORITY_RANGE_M`] of its
//!      entry: a moving vehicle inside the junction or within [`PRIORITY_RANGE_M`] of its outline whose
//!      heading is opposite (more than 135°) to the ego path's heading at the junction entry (oncoming
//!      traffic in an unprotected left turn);
//!   3. when no signal governs the junction (stop sign or uncontrolled) and the ego's front bumper has not
//!      entered it yet (within [`PRIORITY_RANGE_M`]): a vehicle moving inside the junction's polygon (it is
//!      already crossing);
//!   4. at a stop-sign junction (a stop-sign line on the path before it, no signal governing), arrival
//!      order, as the generator's stop-sign rule: a vehicle that came to rest at another stop-sign line
//!      leading into the junction (its front within [`ARRIVAL_M`] before the line or 1 m past it, slower
//!      than 0.5 m/s, heading along the line's lane within 45°) before the ego came to rest at its own
//!      line — or at any time while the ego has not — keeps right of way while the ego is within
//!      [`PRIORITY_RANGE_M`] of the junction and has not left it, for as long as the vehicle is in the
//!      junction's polygon or near its line and in the frame. [`StopOrder`] carries the arrival times from
//!      frame to frame; it starts afresh at each junction.

use laws::frame::{obstacle_type, planned_turn};
use laws::signals::{EGO_FRONT_M, EGO_REAR_M};
use laws::Frame;

use super::geometry::{angle_diff, point_in_polygon, Point};
use super::route::Path;
use super::{FeatureKind, HdMap, Turn};

/// Vehicles that make a jam.
pub const JAM_MIN_VEHICLES: usize = 3;
/// A vehicle slower than this counts towards a jam, m/s.
pub const JAM_SPEED_MPS: f64 = 1.0;
/// How far from the ego right of way is judged, m.
pub const PRIORITY_RANGE_M: f64 = 30.0;
/// A vehicle faster than this is moving, m/s.
const MOVING_MPS: f64 = 0.5;
/// A road user at rest with its front this close before its stop-sign line has arrived there (rule 4), m.
pub const ARRIVAL_M: f64 = 3.0;
/// ... or this far past it, m.
const ARRIVAL_PAST_M: f64 = 1.0;
/// A vehicle farther than this from its lane's centre at the line is not at that line, m.
const ARRIVAL_LATERAL_M: f64 = 2.5;
/// Two features of the same object closer than this along the path are one, m.
const SAME_FEATURE_M: f64 = 1.0;

/// A traffic light as detected: map signal id, Apollo colour, blinking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LightObservation {
    /// The map signal id perception reported.
    pub id: String,
    /// Apollo `TrafficLight.Color`.
    pub color: i32,
    /// Blinking.
    pub blink: bool,
}

/// One feature placed along the path.
#[derive(Debug, Clone, Copy)]
struct Placed {
    kind: FeatureKind,
    start: f64,
    end: f64,
}

/// What [`fill`] keeps between frames: scratch space (no allocation per frame once warm) and the arrival
/// order at a stop-sign junction.
#[derive(Debug, Default)]
pub struct Scratch {
    placed: Vec<Placed>,
    governing: Vec<(f64, usize)>,
    stop_order: StopOrder,
}

/// Arrival order at a stop-sign junction (priority rule 4): when the ego and each other vehicle came to
/// rest at a stop-sign line leading into it.
#[derive(Debug, Default)]
pub struct StopOrder {
    /// The junction the times are for.
    junction: Option<usize>,
    /// Its stop-sign lines other than the ego's: (point on the lane centre, the lane's heading there).
    lines: Vec<(Point, f64)>,
    /// When the ego came to rest at its line, s.
    ego: Option<f64>,
    /// (obstacle id, when it came to rest at its line, that line's point).
    others: Vec<(i32, f64, Point)>,
}

impl StopOrder {
    /// Follows the frame: `stop` is the governing stop-sign junction with the path arc length and point of
    /// the ego's stop-sign line before it (`None` elsewhere); `front` is the ego's front bumper's arc
    /// length.
    fn update(
        &mut self,
        map: &HdMap,
        stop: Option<(usize, f64, Point)>,
        front: f64,
        frame: &Frame,
    ) {
        let junction = stop.map(|(j, _, _)| j);
        if junction != self.junction {
            *self = StopOrder {
                junction,
                lines: stop.map_or_else(Vec::new, |(j, _, own)| stop_lines_into(map, j, own)),
                ..StopOrder::default()
            };
        }
        let Some((j, line, _)) = stop else {
            return;
        };
        let at_rest = |speed: f64| speed < MOVING_MPS;
        if self.ego.is_none()
            && at_rest(frame.speed_mps)
            && (line - ARRIVAL_M..=line + ARRIVAL_PAST_M).contains(&front)
        {
            self.ego = Some(frame.t);
        }
        let polygon = map.junctions().get(j).map(|j| &j.polygon[..]);
        // A vehicle stays recorded while it is in the frame and in the junction or near its line.
        self.others.retain(|&(id, _, at)| {
            frame.obstacles.iter().any(|o| {
                o.id == id && {
                    let p = Point::new(o.x, o.y);
                    polygon.is_some_and(|poly| point_in_polygon(p, poly))
                        || (p - at).norm() <= 2.0 * ARRIVAL_M + o.length
                }
            })
        });
        for o in &frame.obstacles {
            if o.kind != obstacle_type::VEHICLE
                || !at_rest(o.speed_mps)
                || self.others.iter().any(|&(id, _, _)| id == o.id)
            {
                continue;
            }
            let dir = Point::new(o.heading.cos(), o.heading.sin());
            let nose = Point::new(o.x, o.y) + dir * (o.length / 2.0);
            let arrived = self.lines.iter().find(|&&(at, heading)| {
                let along = Point::new(heading.cos(), heading.sin());
                let ahead = (at - nose).dot(&along);
                let lateral = (at - nose).perp(&along).abs();
                angle_diff(o.heading, heading).abs() < std::f64::consts::FRAC_PI_4
                    && (-ARRIVAL_PAST_M..=ARRIVAL_M).contains(&ahead)
                    && lateral <= ARRIVAL_LATERAL_M
            });
            if let Some(&(at, _)) = arrived {
                self.others.push((o.id, frame.t, at));
            }
        }
    }

    /// Whether vehicle `id` arrived before the ego (or arrived while the ego has not).
    fn first(&self, id: i32) -> bool {
        self.others
            .iter()
            .find(|&&(o, _, _)| o == id)
            .is_some_and(|&(_, t, _)| self.ego.is_none_or(|e| t < e))
    }
}

/// The stop-sign lines of lanes leading into junction `j` (the lane itself, or one of its successors,
/// enters it), except the one at `own` (the ego's): (point, lane heading).
fn stop_lines_into(map: &HdMap, j: usize, own: Point) -> Vec<(Point, f64)> {
    let enters = |l: &super::Lane| l.junction_span().is_some_and(|(lj, _, _)| lj == j);
    map.lanes()
        .iter()
        .filter(|l| {
            enters(l)
                || l.successors
                    .iter()
                    .any(|&s| map.lane(s).is_some_and(enters))
        })
        .flat_map(|l| {
            l.features
                .iter()
                .filter(|f| matches!(f.kind, FeatureKind::StopSign(_)))
                .map(|f| (l.centre.point_at(f.start_s), l.centre.heading_at(f.start_s)))
        })
        .filter(|&(p, _)| (p - own).norm() > SAME_FEATURE_M)
        .collect()
}

/// Writes the road fields of `frame` for an ego whose reference point is at path arc length `s`. Fields
/// are written whether or not a feature exists (+inf / 0 / false when none), so nothing from an earlier
/// frame is held.
pub fn fill(
    map: &HdMap,
    path: &Path,
    s: f64,
    horizon_m: f64,
    lights: &[LightObservation],
    scratch: &mut Scratch,
    frame: &mut Frame,
) {
    let front = s + EGO_FRONT_M;
    let rear = s + EGO_REAR_M;
    place_features(map, path, front + horizon_m, &mut scratch.placed);
    let placed = &scratch.placed;

    let junctions = || {
        placed.iter().filter_map(|p| match p.kind {
            FeatureKind::Junction(j) => Some((j, p.start, p.end)),
            _ => None,
        })
    };
    let next_junction = junctions().find(|&(_, _, end)| end > rear);
    frame.junction_dist_m = match next_junction {
        Some((_, a, _)) if front < a => a - front,
        Some(_) => 0.0,
        None => f64::INFINITY,
    };
    let in_junction = junctions().any(|(_, a, b)| a <= s && s < b);
    let current = path.current_lane().and_then(|l| map.lane(l));
    frame.lane_number = if in_junction {
        0
    } else {
        current.map_or(1, |l| l.n_same_direction)
    };
    frame.speed_limit_mps = current.map_or(f64::INFINITY, |l| l.speed_limit_mps);

    let line_ahead = |stop_sign_only: bool| {
        placed
            .iter()
            .filter(|p| match p.kind {
                FeatureKind::SignalStop(_) => !stop_sign_only,
                FeatureKind::StopSign(_) => true,
                _ => false,
            })
            .find(|p| p.start >= front)
            .map_or(f64::INFINITY, |p| p.start - front)
    };
    frame.stopline_dist_m = line_ahead(false);
    frame.stopsign_dist_m = line_ahead(true);
    frame.crosswalk_dist_m = placed
        .iter()
        .find(|p| matches!(p.kind, FeatureKind::Crosswalk(_)) && p.end >= rear)
        .map_or(f64::INFINITY, |p| (p.start - front).max(0.0));

    // The governing junction and its signals.
    let governing = junctions().find(|&(_, _, end)| end > s);
    let previous_exit = governing.map_or(f64::NEG_INFINITY, |(_, a, _)| {
        junctions()
            .filter(|&(_, _, end)| end <= a)
            .map(|(_, _, end)| end)
            .fold(f64::NEG_INFINITY, f64::max)
    });
    scratch.governing.clear();
    for p in placed {
        if let FeatureKind::SignalStop(i) = p.kind {
            let governs = match governing {
                Some((_, _, exit)) => p.start > previous_exit && p.start < exit,
                None => p.start >= front,
            };
            if governs {
                scratch.governing.push((p.start, i));
            }
        }
    }
    frame.signal_ahead = !scratch.governing.is_empty();
    let seen = scratch.governing.iter().find_map(|&(_, i)| {
        let id = map.signal_ids().get(i)?;
        lights.iter().find(|l| &l.id == id)
    });
    frame.light_color = seen.map_or(0, |l| l.color);
    frame.light_blink = seen.is_some_and(|l| l.blink);

    let governing_turn = governing.and_then(|(j, _, _)| {
        path.lanes.iter().find_map(|&(lane, _)| {
            let l = map.lane(lane)?;
            let (lj, _, _) = l.junction_span()?;
            (lj == j).then_some(l.turn)
        })
    });
    frame.planned_turn = match governing_turn {
        Some(Turn::Left | Turn::UTurn) => planned_turn::LEFT,
        Some(Turn::Right) => planned_turn::RIGHT,
        _ => planned_turn::STRAIGHT,
    };

    let polygon = governing.and_then(|(j, _, _)| map.junctions().get(j).map(|j| &j.polygon));
    frame.traffic_jam = polygon.is_some_and(|poly| {
        frame
            .obstacles
            .iter()
            .filter(|o| {
                o.kind == obstacle_type::VEHICLE
                    && o.speed_mps < JAM_SPEED_MPS
                    && point_in_polygon(Point::new(o.x, o.y), poly)
            })
            .count()
            >= JAM_MIN_VEHICLES
    });

    // A stop-sign junction: the ego's stop-sign line between the previous junction and this one.
    let stop = governing
        .filter(|_| !frame.signal_ahead)
        .and_then(|(j, entry, _)| {
            let line = placed
                .iter()
                .filter(|p| matches!(p.kind, FeatureKind::StopSign(_)))
                .filter(|p| p.start > previous_exit && p.start <= entry + SAME_FEATURE_M)
                .map(|p| p.start)
                .next_back()?;
            Some((j, line, point_at(map, path, line)?))
        });
    scratch.stop_order.update(map, stop, front, frame);
    priorities(
        map,
        path,
        (front, rear),
        governing,
        frame,
        placed,
        polygon,
        &scratch.stop_order,
    );
}

/// Collects the features of the path's lanes up to `until`, in path arc length, sorted, with the same
/// object seen from two lanes merged and consecutive junction spans of one junction joined.
fn place_features(map: &HdMap, path: &Path, until: f64, out: &mut Vec<Placed>) {
    out.clear();
    for &(lane, start) in &path.lanes {
        if start > until {
            break;
        }
        let Some(l) = map.lane(lane) else { continue };
        for f in &l.features {
            let placed = Placed {
                kind: f.kind,
                start: start + f.start_s,
                end: start + f.end_s,
            };
            if let Some(prev) = out.iter_mut().rev().find(|p| p.kind == placed.kind) {
                let touching = placed.start <= prev.end + SAME_FEATURE_M;
                if touching {
                    prev.start = prev.start.min(placed.start);
                    prev.end = prev.end.max(placed.end);
                    continue;
                }
            }
            out.push(placed);
        }
    }
    out.sort_by(|a, b| a.start.total_cmp(&b.start));
}

/// Right of way per obstacle (rules in the module docs).
#[allow(clippy::too_many_arguments)]
fn priorities(
    map: &HdMap,
    path: &Path,
    (front, rear): (f64, f64),
    governing: Option<(usize, f64, f64)>,
    frame: &mut Frame,
    placed: &[Placed],
    polygon: Option<&Vec<Point>>,
    stop_order: &StopOrder,
) {
    let crosswalks: Vec<&Vec<Point>> = placed
        .iter()
        .filter_map(|p| match p.kind {
            FeatureKind::Crosswalk(c) if p.end >= rear && p.start <= front + PRIORITY_RANGE_M => {
                map.crosswalks().get(c).map(|c| &c.polygon)
            }
            _ => None,
        })
        .collect();
    let signalled = frame.signal_ahead;
    let near_junction = governing.filter(|&(_, a, _)| a <= front + PRIORITY_RANGE_M);
    let turning_left = near_junction.is_some() && frame.planned_turn == planned_turn::LEFT;
    let entry_heading = near_junction.and_then(|(_, a, _)| heading_at(map, path, a));
    let not_entered = near_junction.is_some_and(|(_, a, _)| front < a);
    for ob in &mut frame.obstacles {
        let p = Point::new(ob.x, ob.y);
        let walker = ob.kind == obstacle_type::PEDESTRIAN || ob.kind == obstacle_type::BICYCLE;
        ob.priority = if walker {
            crosswalks.iter().any(|c| point_in_polygon(p, c))
        } else if ob.kind == obstacle_type::VEHICLE
            && near_junction.is_some()
            && stop_order.first(ob.id)
        {
            true
        } else if ob.kind == obstacle_type::VEHICLE && ob.speed_mps > MOVING_MPS {
            let inside = polygon.is_some_and(|poly| point_in_polygon(p, poly));
            let oncoming = turning_left
                && entry_heading
                    .is_some_and(|h| angle_diff(ob.heading, h).abs() > 0.75 * std::f64::consts::PI)
                && (inside || polygon.is_some_and(|poly| within(p, poly, PRIORITY_RANGE_M)));
            let crossing = !signalled && not_entered && inside;
            oncoming || crossing
        } else {
            false
        };
    }
}

/// The lane of the path at arc length `s`, and `s` along it.
fn lane_at<'m>(map: &'m HdMap, path: &Path, s: f64) -> Option<(&'m super::Lane, f64)> {
    let (lane, start) = path
        .lanes
        .iter()
        .rev()
        .find(|(_, start)| *start <= s)
        .or_else(|| path.lanes.first())?;
    Some((map.lane(*lane)?, s - start))
}

/// Direction of travel at path arc length `s`.
fn heading_at(map: &HdMap, path: &Path, s: f64) -> Option<f64> {
    lane_at(map, path, s).map(|(lane, at)| lane.centre.heading_at(at))
}

/// The point of the path at arc length `s`.
fn point_at(map: &HdMap, path: &Path, s: f64) -> Option<Point> {
    lane_at(map, path, s).map(|(lane, at)| lane.centre.point_at(at))
}

/// Whether `p` is within `d` of the polygon's outline.
fn within(p: Point, polygon: &[Point], d: f64) -> bool {
    let n = polygon.len();
    (0..n).any(|i| {
        let a = polygon[i];
        let b = polygon[(i + 1) % n];
        let seg = b - a;
        let len2 = seg.norm_squared();
        let t = if len2 > 0.0 {
            ((p - a).dot(&seg) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (p - (a + seg * t)).norm() <= d
    })
}
