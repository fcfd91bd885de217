//! From the wire `apollo.hdmap.Map` to [`HdMap`]: ids become indices, curves become polylines, and each
//! lane's features are placed along it from the geometry.

use std::collections::{HashMap, HashSet};

use super::geometry::{Point, Polyline};
use super::index::LaneIndex;
use super::{Crosswalk, FeatureKind, HdMap, Junction, Lane, LaneFeature, LaneIdx, Turn};
use crate::wire::apollo::hdmap::{
    self as pb, lane::LaneTurn, object_overlap_info::OverlapInfo, Curve, Map,
};

/// How far beyond its ends a lane's centre line is extended when looking for the stop lines and
/// crosswalks tied to it, m: maps often draw a stop line a few decimetres before the lane's first point.
const EXTEND_M: f64 = 3.0;

/// Half-width assumed when the map gives no lane width samples, m.
const DEFAULT_HALF_WIDTH_M: f64 = 1.75;

impl HdMap {
    /// Builds the map from its protobuf form. Lanes without a usable centre line are skipped, dangling
    /// references ignored; each is listed in [`HdMap::warnings`].
    pub fn from_proto(map: &Map) -> HdMap {
        let mut warnings = Vec::new();
        let mut lanes = Vec::with_capacity(map.lane.len());
        let mut lane_by_id = HashMap::with_capacity(map.lane.len());
        let mut kept: Vec<&pb::Lane> = Vec::with_capacity(map.lane.len());
        for lane in &map.lane {
            let id = id_of(lane.id.as_ref());
            let Some(centre) = lane.central_curve.as_ref().and_then(curve_polyline) else {
                warnings.push(format!("lane {id:?}: no usable centre line, skipped"));
                continue;
            };
            if lane_by_id.contains_key(&id) {
                warnings.push(format!("lane {id:?}: duplicate id, skipped"));
                continue;
            }
            let speed_limit_mps = match lane.speed_limit {
                Some(v) if v.is_finite() && v > 0.0 => v,
                // 0 is how some maps leave a lane's limit out.
                Some(0.0) => f64::INFINITY,
                Some(v) => {
                    warnings.push(format!(
                        "lane {id:?}: speed limit {v} m/s is not a positive number, read as no limit"
                    ));
                    f64::INFINITY
                }
                None => f64::INFINITY,
            };
            lane_by_id.insert(id.clone(), lanes.len());
            kept.push(lane);
            lanes.push(Lane {
                id,
                centre,
                speed_limit_mps,
                turn: match lane.turn() {
                    LaneTurn::LeftTurn => Turn::Left,
                    LaneTurn::RightTurn => Turn::Right,
                    LaneTurn::UTurn => Turn::UTurn,
                    LaneTurn::NoTurn => Turn::None,
                },
                successors: Vec::new(),
                predecessors: Vec::new(),
                n_same_direction: 1,
                half_width_m: half_width(lane),
                features: Vec::new(),
            });
        }
        let resolve = |ids: &[pb::Id], what: &str, owner: &str, warnings: &mut Vec<String>| {
            ids.iter()
                .filter_map(|i| {
                    let id = id_of(Some(i));
                    let found = lane_by_id.get(&id).copied();
                    if found.is_none() {
                        warnings.push(format!("lane {owner:?}: {what} {id:?} is not a lane"));
                    }
                    found
                })
                .collect::<Vec<LaneIdx>>()
        };
        let mut neighbours: Vec<Vec<LaneIdx>> = Vec::with_capacity(lanes.len());
        for (lane, src) in lanes.iter_mut().zip(&kept) {
            lane.successors = resolve(&src.successor_id, "successor", &lane.id, &mut warnings);
            lane.predecessors =
                resolve(&src.predecessor_id, "predecessor", &lane.id, &mut warnings);
            let mut n = resolve(
                &src.left_neighbor_forward_lane_id,
                "left neighbour",
                &lane.id,
                &mut warnings,
            );
            n.extend(resolve(
                &src.right_neighbor_forward_lane_id,
                "right neighbour",
                &lane.id,
                &mut warnings,
            ));
            neighbours.push(n);
        }
        for i in 0..lanes.len() {
            let n = same_direction_count(i, &neighbours);
            if let Some(lane) = lanes.get_mut(i) {
                lane.n_same_direction = n;
            }
        }

        let junctions: Vec<Junction> = map
            .junction
            .iter()
            .map(|j| Junction {
                id: id_of(j.id.as_ref()),
                polygon: polygon_points(j.polygon.as_ref()),
            })
            .collect();
        let crosswalks: Vec<Crosswalk> = map
            .crosswalk
            .iter()
            .map(|c| Crosswalk {
                id: id_of(c.id.as_ref()),
                polygon: polygon_points(c.polygon.as_ref()),
            })
            .collect();
        let signal_ids: Vec<String> = map.signal.iter().map(|s| id_of(s.id.as_ref())).collect();
        let stop_sign_ids: Vec<String> =
            map.stop_sign.iter().map(|s| id_of(s.id.as_ref())).collect();
        let by_id = |ids: &[String]| -> HashMap<String, usize> {
            ids.iter()
                .enumerate()
                .map(|(i, id)| (id.clone(), i))
                .collect()
        };
        let signal_idx = by_id(&signal_ids);
        let stop_idx = by_id(&stop_sign_ids);
        let junction_idx = by_id(&junctions.iter().map(|j| j.id.clone()).collect::<Vec<_>>());
        let crosswalk_idx = by_id(&crosswalks.iter().map(|c| c.id.clone()).collect::<Vec<_>>());
        let signal_lines: Vec<Vec<Vec<Point>>> = map
            .signal
            .iter()
            .map(|s| s.stop_line.iter().map(curve_points).collect())
            .collect();
        let stop_lines: Vec<Vec<Vec<Point>>> = map
            .stop_sign
            .iter()
            .map(|s| s.stop_line.iter().map(curve_points).collect())
            .collect();

        let mut seen: HashSet<(LaneIdx, FeatureKind)> = HashSet::new();
        for overlap in &map.overlap {
            let lane_objects: Vec<(LaneIdx, f64, f64)> = overlap
                .object
                .iter()
                .filter_map(|o| match &o.overlap_info {
                    Some(OverlapInfo::LaneOverlapInfo(info)) => {
                        let lane = lane_by_id.get(&id_of(o.id.as_ref())).copied()?;
                        Some((lane, info.start_s(), info.end_s()))
                    }
                    _ => None,
                })
                .collect();
            for other in &overlap.object {
                let other_id = id_of(other.id.as_ref());
                let kind = match &other.overlap_info {
                    Some(OverlapInfo::SignalOverlapInfo(_)) => signal_idx
                        .get(&other_id)
                        .map(|&i| FeatureKind::SignalStop(i)),
                    Some(OverlapInfo::StopSignOverlapInfo(_)) => {
                        stop_idx.get(&other_id).map(|&i| FeatureKind::StopSign(i))
                    }
                    Some(OverlapInfo::CrosswalkOverlapInfo(_)) => crosswalk_idx
                        .get(&other_id)
                        .map(|&i| FeatureKind::Crosswalk(i)),
                    Some(OverlapInfo::JunctionOverlapInfo(_)) => junction_idx
                        .get(&other_id)
                        .map(|&i| FeatureKind::Junction(i)),
                    _ => None,
                };
                let Some(kind) = kind else { continue };
                for &(lane_i, start_s, end_s) in &lane_objects {
                    if !seen.insert((lane_i, kind)) {
                        continue;
                    }
                    let Some(lane) = lanes.get_mut(lane_i) else {
                        continue;
                    };
                    let (a, b) = match kind {
                        FeatureKind::SignalStop(i) => {
                            let s = line_position(&lane.centre, signal_lines.get(i), start_s);
                            (s, s)
                        }
                        FeatureKind::StopSign(i) => {
                            let s = line_position(&lane.centre, stop_lines.get(i), start_s);
                            (s, s)
                        }
                        FeatureKind::Crosswalk(i) => crosswalks
                            .get(i)
                            .and_then(|c| lane.centre.inside_interval(&c.polygon, EXTEND_M))
                            .unwrap_or((start_s, end_s)),
                        FeatureKind::Junction(i) => junctions
                            .get(i)
                            .and_then(|j| lane.centre.inside_interval(&j.polygon, EXTEND_M))
                            .unwrap_or((start_s, end_s)),
                    };
                    lane.features.push(LaneFeature {
                        kind,
                        start_s: a,
                        end_s: b.max(a),
                    });
                }
            }
        }
        // A lane (or its road) that names a junction without an overlap lies in it entirely.
        let mut road_junction: HashMap<String, String> = HashMap::new();
        for road in &map.road {
            let Some(j) = road.junction_id.as_ref().map(|j| id_of(Some(j))) else {
                continue;
            };
            if j.is_empty() {
                continue;
            }
            for section in &road.section {
                for lane in &section.lane_id {
                    road_junction.insert(id_of(Some(lane)), j.clone());
                }
            }
        }
        for (i, (lane, src)) in lanes.iter_mut().zip(&kept).enumerate() {
            let named = src
                .junction_id
                .as_ref()
                .map(|j| id_of(Some(j)))
                .filter(|j| !j.is_empty())
                .or_else(|| road_junction.get(&lane.id).cloned());
            if let Some(j) = named.and_then(|j| junction_idx.get(&j).copied()) {
                if seen.insert((i, FeatureKind::Junction(j))) {
                    let (start_s, end_s) = junctions
                        .get(j)
                        .and_then(|p| lane.centre.inside_interval(&p.polygon, EXTEND_M))
                        .unwrap_or((0.0, lane.centre.length()));
                    lane.features.push(LaneFeature {
                        kind: FeatureKind::Junction(j),
                        start_s,
                        end_s,
                    });
                }
            }
            lane.features
                .sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        }
        let index = LaneIndex::new(&lanes);
        HdMap {
            lanes,
            lane_by_id,
            junctions,
            crosswalks,
            signal_ids,
            stop_sign_ids,
            index,
            warnings,
        }
    }
}

fn id_of(id: Option<&pb::Id>) -> String {
    id.and_then(|i| i.id.clone()).unwrap_or_default()
}

fn curve_points(curve: &Curve) -> Vec<Point> {
    curve
        .segment
        .iter()
        .filter_map(|seg| {
            seg.curve_type
                .as_ref()
                .map(|pb::curve_segment::CurveType::LineSegment(line)| line)
        })
        .flat_map(|line| line.point.iter())
        .map(|p| Point::new(p.x(), p.y()))
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .collect()
}

fn curve_polyline(curve: &Curve) -> Option<Polyline> {
    Polyline::new(curve_points(curve))
}

fn polygon_points(polygon: Option<&pb::Polygon>) -> Vec<Point> {
    polygon
        .map(|p| {
            p.point
                .iter()
                .map(|q| Point::new(q.x(), q.y()))
                .filter(|q| q.x.is_finite() && q.y.is_finite())
                .collect()
        })
        .unwrap_or_default()
}

fn half_width(lane: &pb::Lane) -> f64 {
    let widest = |samples: &[pb::LaneSampleAssociation]| {
        samples
            .iter()
            .map(pb::LaneSampleAssociation::width)
            .filter(|w| w.is_finite() && *w > 0.0)
            .fold(0.0_f64, f64::max)
    };
    let w = widest(&lane.left_sample).max(widest(&lane.right_sample));
    if w > 0.0 {
        w
    } else {
        DEFAULT_HALF_WIDTH_M
    }
}

/// Where one of `lines` crosses the (extended) centre line, choosing the crossing nearest the overlap's
/// `start_s`; the overlap's `start_s` itself when no line crosses.
fn line_position(centre: &Polyline, lines: Option<&Vec<Vec<Point>>>, start_s: f64) -> f64 {
    lines
        .into_iter()
        .flatten()
        .flat_map(|line| centre.crossings(line, EXTEND_M))
        .min_by(|a, b| (a - start_s).abs().total_cmp(&(b - start_s).abs()))
        .unwrap_or(start_s)
}

/// Lanes reachable through left/right forward neighbours, this one included.
fn same_direction_count(start: LaneIdx, neighbours: &[Vec<LaneIdx>]) -> i32 {
    let mut seen = HashSet::from([start]);
    let mut todo = vec![start];
    while let Some(i) = todo.pop() {
        for &n in neighbours.get(i).into_iter().flatten() {
            if seen.insert(n) {
                todo.push(n);
            }
        }
    }
    i32::try_from(seen.len()).unwrap_or(i32::MAX)
}
