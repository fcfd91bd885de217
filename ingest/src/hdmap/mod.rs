//! Apollo HD maps: loading, lane matching, route following and the road fields of a frame.
//!
//! Tour of the main types:
//! - [`HdMap`] is the map as avguard uses it: [`Lane`]s (centre line as a [`geometry::Polyline`], speed
//!   limit, turn, successors, same-direction neighbours, and the road features along the lane as
//!   [`LaneFeature`]s), junction and crosswalk polygons, signal ids. It is built once from an
//!   `apollo.hdmap.Map` ([`HdMap::load`] picks text or binary by the file extension, as Apollo does) and
//!   shared read-only between connections.
//! - [`index::LaneIndex`] is an R-tree over every centre-line segment: the candidate lanes near a pose in
//!   microseconds.
//! - [`tracker::MapTracker`] is one run's state: the matched lane, the path ahead (the routing response's
//!   lanes when one was sent, else successor lanes by the least turn), the latest traffic-light
//!   detections. [`tracker::MapTracker::fill`] writes a frame's road fields.
//!
//! Feature positions along a lane are computed from the geometry (a stop line where it crosses the centre
//! line, a crosswalk or junction where the centre line is inside its polygon, the line extended 3 m beyond
//! the lane's ends so that a stop line or polygon edge just before the lane's first point counts); the
//! map's overlaps (and a lane's or its road's `junction_id`) say which features belong to which lane, and
//! the overlaps' `start_s`/`end_s` are used only when the geometry does not cross. Real maps need this:
//! cube_town's signal stop lines lie up to 0.6 m before their lanes' first points and its junction
//! polygons reach 1 m into the approach lanes, while the overlaps start at 0.

pub mod context;
mod convert;
pub mod geometry;
pub mod index;
mod load;
pub mod route;
pub mod tracker;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use geometry::{Point, Polyline};

pub use load::{MapError, MapFormat, DEFAULT_MAX_MAP_BYTES};

/// Index of a lane in [`HdMap::lanes`].
pub type LaneIdx = usize;

/// A lane's turn at a junction (`apollo.hdmap.Lane.LaneTurn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// `NO_TURN` (also used when the map says nothing).
    None,
    /// `LEFT_TURN`.
    Left,
    /// `RIGHT_TURN`.
    Right,
    /// `U_TURN`.
    UTurn,
}

/// What a feature along a lane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureKind {
    /// The stop line of a traffic light (index into [`HdMap::signal_ids`]).
    SignalStop(usize),
    /// The stop line of a stop sign (index into [`HdMap::stop_sign_ids`]).
    StopSign(usize),
    /// A crosswalk (index into [`HdMap::crosswalks`]).
    Crosswalk(usize),
    /// The part of the lane inside a junction (index into [`HdMap::junctions`]).
    Junction(usize),
}

/// A road feature along a lane, in the lane's arc length. Stop lines have `start_s == end_s`. `start_s`
/// may be slightly negative: a stop line a little before the lane's first point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaneFeature {
    /// What it is.
    pub kind: FeatureKind,
    /// Where it starts along the lane, m.
    pub start_s: f64,
    /// Where it ends along the lane, m.
    pub end_s: f64,
}

/// One lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The map's lane id.
    pub id: String,
    /// Centre line, in the direction of travel.
    pub centre: Polyline,
    /// Speed limit, m/s; +inf when the map gives none.
    pub speed_limit_mps: f64,
    /// Turn at a junction.
    pub turn: Turn,
    /// Lanes this one leads into.
    pub successors: Vec<LaneIdx>,
    /// Lanes leading into this one.
    pub predecessors: Vec<LaneIdx>,
    /// Number of lanes in the same direction, this one included (through left/right forward
    /// neighbours, transitively).
    pub n_same_direction: i32,
    /// Half of the lane's width, m (the widest sample; 1.75 m when the map gives none).
    pub half_width_m: f64,
    /// Features along the lane, ascending by `start_s`.
    pub features: Vec<LaneFeature>,
}

impl Lane {
    /// The junction span of this lane, if it lies in one: (junction, start_s, end_s).
    pub fn junction_span(&self) -> Option<(usize, f64, f64)> {
        self.features.iter().find_map(|f| match f.kind {
            FeatureKind::Junction(j) => Some((j, f.start_s, f.end_s)),
            _ => None,
        })
    }
}

/// A junction.
#[derive(Debug, Clone, PartialEq)]
pub struct Junction {
    /// The map's junction id.
    pub id: String,
    /// Outline (open ring).
    pub polygon: Vec<Point>,
}

/// A crosswalk.
#[derive(Debug, Clone, PartialEq)]
pub struct Crosswalk {
    /// The map's crosswalk id.
    pub id: String,
    /// Outline (open ring).
    pub polygon: Vec<Point>,
}

/// The HD map as avguard uses it. Built by [`HdMap::load`] or [`HdMap::from_proto`]; immutable after.
#[derive(Debug)]
pub struct HdMap {
    lanes: Vec<Lane>,
    lane_by_id: HashMap<String, LaneIdx>,
    junctions: Vec<Junction>,
    crosswalks: Vec<Crosswalk>,
    signal_ids: Vec<String>,
    stop_sign_ids: Vec<String>,
    index: index::LaneIndex,
    warnings: Vec<String>,
}

impl HdMap {
    /// Every lane.
    pub fn lanes(&self) -> &[Lane] {
        &self.lanes
    }

    /// The lane with index `i`.
    pub fn lane(&self, i: LaneIdx) -> Option<&Lane> {
        self.lanes.get(i)
    }

    /// The index of the lane with map id `id`.
    pub fn lane_by_id(&self, id: &str) -> Option<LaneIdx> {
        self.lane_by_id.get(id).copied()
    }

    /// Every junction.
    pub fn junctions(&self) -> &[Junction] {
        &self.junctions
    }

    /// Every crosswalk.
    pub fn crosswalks(&self) -> &[Crosswalk] {
        &self.crosswalks
    }

    /// The ids of the traffic lights, as perception reports them.
    pub fn signal_ids(&self) -> &[String] {
        &self.signal_ids
    }

    /// The ids of the stop signs.
    pub fn stop_sign_ids(&self) -> &[String] {
        &self.stop_sign_ids
    }

    /// The spatial index of the lanes' centre lines.
    pub fn index(&self) -> &index::LaneIndex {
        &self.index
    }

    /// What was skipped while building the map (lanes without geometry, dangling ids, ...).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
