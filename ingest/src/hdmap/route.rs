//! Which way the ego goes: the routing response's lanes when one was sent, else successor lanes by the
//! least turn; and the [`Path`] ahead of the ego along them.

use std::collections::HashMap;

use super::geometry::angle_diff;
use super::{HdMap, LaneIdx};

/// The lanes of a routing response, with the order of their road segment along the route.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Route {
    order: HashMap<LaneIdx, usize>,
}

impl Route {
    /// The route through the lanes `lane_ids`, each given with the index of its road segment (lanes of
    /// parallel passages share it). Ids not in the map are ignored.
    pub fn new<'a>(map: &HdMap, lane_ids: impl IntoIterator<Item = (&'a str, usize)>) -> Route {
        let mut order = HashMap::new();
        for (id, road) in lane_ids {
            if let Some(lane) = map.lane_by_id(id) {
                order.entry(lane).or_insert(road);
            }
        }
        Route { order }
    }

    /// True when no lane of the route is in the map.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether `lane` is on the route.
    pub fn contains(&self, lane: LaneIdx) -> bool {
        self.order.contains_key(&lane)
    }

    fn road_of(&self, lane: LaneIdx) -> Option<usize> {
        self.order.get(&lane).copied()
    }
}

/// How much the direction of travel changes over `lane`, rad (absolute): from its start to its end.
fn turn_of(map: &HdMap, lane: LaneIdx) -> f64 {
    map.lane(lane).map_or(f64::INFINITY, |l| {
        let c = &l.centre;
        angle_diff(c.heading_at(c.length()), c.heading_at(0.0)).abs()
    })
}

/// The successor of `lane` the ego takes: on the route when the route continues through one (the one
/// furthest along it, then the least turn), else the one with the least turn (ties: the lowest lane id).
pub fn next_lane(map: &HdMap, lane: LaneIdx, route: Option<&Route>) -> Option<LaneIdx> {
    let succ = &map.lane(lane)?.successors;
    let by_turn = |a: &LaneIdx, b: &LaneIdx| {
        turn_of(map, *a)
            .total_cmp(&turn_of(map, *b))
            .then_with(|| lane_id(map, *a).cmp(lane_id(map, *b)))
    };
    if let Some(route) = route {
        let here = route.road_of(lane);
        let on_route = succ
            .iter()
            .copied()
            .filter(|s| match (route.road_of(*s), here) {
                (Some(r), Some(h)) => r >= h,
                (Some(_), None) => true,
                _ => false,
            })
            .min_by(|a, b| by_turn(a, b));
        if on_route.is_some() {
            return on_route;
        }
    }
    succ.iter().copied().min_by(|a, b| by_turn(a, b))
}

fn lane_id(map: &HdMap, lane: LaneIdx) -> &str {
    map.lane(lane).map_or("", |l| l.id.as_str())
}

/// A sequence of consecutive lanes with the path arc length at which each starts. The ego's lane is
/// `lanes[current]`; lanes before it are the ones it came from (kept so that a junction or crosswalk
/// still under the ego's rear counts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Path {
    /// (lane, path arc length of its start, m).
    pub lanes: Vec<(LaneIdx, f64)>,
    /// Index in `lanes` of the ego's lane.
    pub current: usize,
}

impl Path {
    /// Builds the path: `behind` (the lane the ego came from, when it leads into `lane`), `lane` starting at
    /// path arc length 0, then successors chosen by [`next_lane`] until `ahead_m` beyond `lane`'s start
    /// is covered (at most `max_lanes` lanes; a loop ends the path).
    pub fn build(
        map: &HdMap,
        behind: Option<LaneIdx>,
        lane: LaneIdx,
        route: Option<&Route>,
        ahead_m: f64,
    ) -> Path {
        const MAX_LANES: usize = 64;
        let mut lanes = Vec::with_capacity(8);
        let mut current = 0;
        if let Some(b) =
            behind.filter(|b| map.lane(*b).is_some_and(|l| l.successors.contains(&lane)))
        {
            let len = map.lane(b).map_or(0.0, |l| l.centre.length());
            lanes.push((b, -len));
            current = 1;
        }
        lanes.push((lane, 0.0));
        let mut end = map.lane(lane).map_or(0.0, |l| l.centre.length());
        let mut last = lane;
        while end < ahead_m && lanes.len() < MAX_LANES {
            let Some(next) = next_lane(map, last, route) else {
                break;
            };
            if lanes.iter().any(|(l, _)| *l == next) {
                break;
            }
            lanes.push((next, end));
            end += map.lane(next).map_or(0.0, |l| l.centre.length());
            last = next;
        }
        Path { lanes, current }
    }

    /// Whether `lane` is on the path at or after the ego's lane.
    pub fn position_ahead(&self, lane: LaneIdx) -> Option<usize> {
        self.lanes
            .iter()
            .enumerate()
            .skip(self.current)
            .find(|(_, (l, _))| *l == lane)
            .map(|(i, _)| i)
    }

    /// The ego's lane.
    pub fn current_lane(&self) -> Option<LaneIdx> {
        self.lanes.get(self.current).map(|(l, _)| *l)
    }

    /// The lane just behind the ego's lane on the path.
    pub fn lane_behind(&self) -> Option<LaneIdx> {
        self.current
            .checked_sub(1)
            .and_then(|i| self.lanes.get(i))
            .map(|(l, _)| *l)
    }
}
