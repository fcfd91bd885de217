//! The spatial index of lane centre lines: an R-tree (`rstar`) over every segment, tagged with its lane and
//! segment number. [`LaneIndex::candidates`] returns the lanes near a point with their projections; a
//! linear scan over the same segments ([`LaneIndex::candidates_linear`]) is kept as the baseline the
//! benchmark compares with and the tests check against.

use rstar::primitives::{GeomWithData, Line};
use rstar::RTree;

use super::geometry::{Point, Projection};
use super::{Lane, LaneIdx};

/// A centre-line segment: (lane, segment number within the lane).
type Segment = GeomWithData<Line<[f64; 2]>, (LaneIdx, usize)>;

/// A lane near the query point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The lane.
    pub lane: LaneIdx,
    /// The lane's segment the projection is on.
    pub segment: usize,
    /// The projection of the point onto the lane (its nearest segment).
    pub projection: Projection,
}

/// R-tree of every lane's centre-line segments.
#[derive(Debug)]
pub struct LaneIndex {
    tree: RTree<Segment>,
}

impl LaneIndex {
    /// Indexes the lanes' centre lines (bulk-loaded).
    pub fn new(lanes: &[Lane]) -> LaneIndex {
        let mut segments = Vec::new();
        for (i, lane) in lanes.iter().enumerate() {
            for k in 0..lane.centre.n_segments() {
                if let Some((a, b, _)) = lane.centre.segment(k) {
                    segments.push(GeomWithData::new(Line::new([a.x, a.y], [b.x, b.y]), (i, k)));
                }
            }
        }
        LaneIndex {
            tree: RTree::bulk_load(segments),
        }
    }

    /// Number of indexed segments.
    pub fn n_segments(&self) -> usize {
        self.tree.size()
    }

    /// Every lane with a centre-line segment within `radius_m` of `p`, once each, with the projection
    /// onto its nearest such segment; appended to `out` (cleared first), in no particular order.
    pub fn candidates(&self, lanes: &[Lane], p: Point, radius_m: f64, out: &mut Vec<Candidate>) {
        out.clear();
        for seg in self
            .tree
            .locate_within_distance([p.x, p.y], radius_m * radius_m)
        {
            let (lane, k) = seg.data;
            add(lanes, lane, k, p, out);
        }
    }

    /// The same result as [`LaneIndex::candidates`] by testing every segment of every lane.
    pub fn candidates_linear(lanes: &[Lane], p: Point, radius_m: f64, out: &mut Vec<Candidate>) {
        out.clear();
        for (lane, l) in lanes.iter().enumerate() {
            for k in 0..l.centre.n_segments() {
                let Some((a, b, _)) = l.centre.segment(k) else {
                    continue;
                };
                if segment_distance(a, b, p) <= radius_m {
                    add(lanes, lane, k, p, out);
                }
            }
        }
    }
}

/// Keeps, per lane, the projection onto its nearest segment. The end segments are projected with their
/// extensions, so a point just beyond a lane's end still gets an `s` past the length (the matcher then
/// prefers the successor).
fn add(lanes: &[Lane], lane: LaneIdx, k: usize, p: Point, out: &mut Vec<Candidate>) {
    let Some(projection) = lanes
        .get(lane)
        .and_then(|l| l.centre.project_on_segment(k, p))
    else {
        return;
    };
    let new = Candidate {
        lane,
        segment: k,
        projection,
    };
    // Ties (a point level with the vertex two segments share) go to the lower segment, so the result
    // does not depend on the order segments are visited in.
    let key = |c: &Candidate| (c.projection.lateral.abs(), c.segment);
    match out.iter_mut().find(|c| c.lane == lane) {
        Some(c) if key(&new).partial_cmp(&key(c)) == Some(std::cmp::Ordering::Less) => *c = new,
        Some(_) => {}
        None => out.push(new),
    }
}

/// Distance from `p` to segment `a→b`, m.
fn segment_distance(a: Point, b: Point, p: Point) -> f64 {
    let d = b - a;
    let t = ((p - a).dot(&d) / d.norm_squared()).clamp(0.0, 1.0);
    (p - (a + d * t)).norm()
}
