//! One run's position on the map: lane matching with continuity, the path ahead, and the frame's road
//! fields.
//!
//! **Lane matching.** The R-tree gives every lane with a centre-line segment within
//! [`TrackerConfig::search_radius_m`] of the pose. A lane whose direction differs from the ego heading by
//! more than [`TrackerConfig::max_heading_diff_rad`] is not a candidate. Each remaining lane costs its
//! lateral offset, plus how far the pose lies beyond the lane's ends (so at a lane end the successor wins
//! over the extended predecessor), plus [`TrackerConfig::heading_weight_m_per_rad`] times the heading
//! difference, minus [`TrackerConfig::path_bonus_m`] when the lane is the current lane or on the path
//! ahead. The bonus is what keeps the match stable inside junctions, where the lanes of several turns start
//! at the same point and overlap: the ego stays on the lane its route (or least-turn choice) led it to until
//! the geometry clearly says otherwise. The cheapest lane wins; with none, the pose is off the map and the
//! frame gets map-less road fields (nothing ahead).

use std::sync::Arc;

use laws::Frame;

use super::context::{self, LightObservation, Scratch};
use super::geometry::{angle_diff, Point};
use super::index::Candidate;
use super::route::{Path, Route};
use super::{HdMap, LaneIdx};

/// Matching and look-ahead settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackerConfig {
    /// Lanes whose centre line is farther than this from the pose are not candidates, m.
    pub search_radius_m: f64,
    /// Largest difference between the ego heading and a lane's direction, rad.
    pub max_heading_diff_rad: f64,
    /// Cost of one radian of heading difference, m.
    pub heading_weight_m_per_rad: f64,
    /// Cost taken off the current lane and the lanes of the path ahead, m.
    pub path_bonus_m: f64,
    /// How far ahead of the front bumper features are reported, m (beyond: none ahead).
    pub horizon_m: f64,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            search_radius_m: 5.0,
            max_heading_diff_rad: std::f64::consts::FRAC_PI_2,
            heading_weight_m_per_rad: 2.0,
            path_bonus_m: 1.0,
            horizon_m: 200.0,
        }
    }
}

/// Where the ego is on the map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaneMatch {
    /// The matched lane.
    pub lane: LaneIdx,
    /// Arc length along it, m.
    pub s: f64,
    /// Signed lateral offset from its centre line, m (left positive).
    pub lateral: f64,
}

/// One run's map state (see the module docs). Cheap to create; the map is shared.
#[derive(Debug)]
pub struct MapTracker {
    map: Arc<HdMap>,
    config: TrackerConfig,
    route: Option<Route>,
    path: Path,
    lights: Vec<LightObservation>,
    candidates: Vec<Candidate>,
    scratch: Scratch,
    last: Option<LaneMatch>,
}

impl MapTracker {
    /// A tracker on `map` with no route and no lights seen.
    pub fn new(map: Arc<HdMap>, config: TrackerConfig) -> MapTracker {
        MapTracker {
            map,
            config,
            route: None,
            path: Path::default(),
            lights: Vec::new(),
            candidates: Vec::new(),
            scratch: Scratch::default(),
            last: None,
        }
    }

    /// The map.
    pub fn map(&self) -> &Arc<HdMap> {
        &self.map
    }

    /// Follows this route from now on (lane ids with their road segment index); an empty route (no lane
    /// in the map) is ignored.
    pub fn set_route<'a>(&mut self, lanes: impl IntoIterator<Item = (&'a str, usize)>) {
        let route = Route::new(&self.map, lanes);
        if !route.is_empty() {
            self.route = Some(route);
            // The path is rebuilt on the next match.
            self.path = Path::default();
        }
    }

    /// The latest traffic-light detection (replaces the previous one).
    pub fn set_lights(&mut self, lights: impl IntoIterator<Item = LightObservation>) {
        self.lights.clear();
        self.lights.extend(lights);
    }

    /// The last match, if the last pose was on the map.
    pub fn last_match(&self) -> Option<LaneMatch> {
        self.last
    }

    /// The current path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Matches a pose and updates the path; `None` when it is off the map.
    pub fn locate(&mut self, x: f64, y: f64, heading: f64) -> Option<LaneMatch> {
        let p = Point::new(x, y);
        let map = Arc::clone(&self.map);
        map.index().candidates(
            map.lanes(),
            p,
            self.config.search_radius_m,
            &mut self.candidates,
        );
        let best = self
            .candidates
            .iter()
            .filter_map(|c| {
                let lane = map.lane(c.lane)?;
                let dh = angle_diff(heading, c.projection.heading).abs();
                if dh > self.config.max_heading_diff_rad {
                    return None;
                }
                let len = lane.centre.length();
                let beyond = (-c.projection.s).max(0.0) + (c.projection.s - len).max(0.0);
                let bonus = if self.path.position_ahead(c.lane).is_some() {
                    self.config.path_bonus_m
                } else {
                    0.0
                };
                let cost =
                    c.projection.lateral.abs() + beyond + self.config.heading_weight_m_per_rad * dh
                        - bonus;
                Some((cost, c))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.lane.cmp(&b.1.lane)))
            .map(|(_, c)| *c);
        let Some(best) = best else {
            self.last = None;
            self.path = Path::default();
            return None;
        };
        let lane_len = map.lane(best.lane).map_or(0.0, |l| l.centre.length());
        let m = LaneMatch {
            lane: best.lane,
            s: best.projection.s.clamp(0.0, lane_len),
            lateral: best.projection.lateral,
        };
        if self.path.current_lane() != Some(m.lane) {
            let behind = match self.path.position_ahead(m.lane) {
                Some(pos) => pos
                    .checked_sub(1)
                    .and_then(|i| self.path.lanes.get(i))
                    .map(|(l, _)| *l),
                None => self.path.current_lane(),
            };
            let ahead = lane_len + laws::signals::EGO_FRONT_M + self.config.horizon_m;
            self.path = Path::build(&map, behind, m.lane, self.route.as_ref(), ahead);
        }
        self.last = Some(m);
        Some(m)
    }

    /// Writes the frame's road fields (and obstacle priorities) from its pose; a pose off the map gets
    /// map-less fields: nothing ahead, no limit, one lane, no light.
    pub fn fill(&mut self, frame: &mut Frame) {
        match self.locate(frame.x, frame.y, frame.heading) {
            Some(m) => context::fill(
                &self.map,
                &self.path,
                m.s,
                self.config.horizon_m,
                &self.lights,
                &mut self.scratch,
                frame,
            ),
            None => {
                frame.clear_road_fields();
                for ob in &mut frame.obstacles {
                    ob.priority = false;
                }
            }
        }
    }
}
