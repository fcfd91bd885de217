//! Planar geometry in the map frame (x east, y north, metres): polylines with arc length, projection,
//! crossings with other polylines and polygons, point-in-polygon. Heights are ignored: road features are
//! matched in the ground plane, as Apollo does.

use nalgebra::Vector2;

/// A point in the map frame, m.
pub type Point = Vector2<f64>;

/// A polyline with the arc length `s` of each vertex; consecutive duplicate points are dropped on
/// construction, so every segment has a positive length.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    points: Vec<Point>,
    /// `s[i]`: arc length from the first point to point `i`, m.
    s: Vec<f64>,
}

/// Where a point projects onto a polyline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// Arc length of the foot point, m; below 0 or above the length when the point lies beyond an end
    /// (the end segments are extended).
    pub s: f64,
    /// Signed lateral offset, m: positive to the left of the direction of travel.
    pub lateral: f64,
    /// Direction of the segment the foot point is on, rad (ENU, 0 = east).
    pub heading: f64,
}

impl Polyline {
    /// Builds a polyline; `None` when fewer than two distinct points remain or a coordinate is not finite.
    pub fn new(points: impl IntoIterator<Item = Point>) -> Option<Polyline> {
        let mut kept: Vec<Point> = Vec::new();
        for p in points {
            if !(p.x.is_finite() && p.y.is_finite()) {
                return None;
            }
            if kept.last().is_none_or(|last| (p - last).norm() > 1e-9) {
                kept.push(p);
            }
        }
        if kept.len() < 2 {
            return None;
        }
        let mut s = Vec::with_capacity(kept.len());
        let mut total = 0.0;
        s.push(0.0);
        for w in kept.windows(2) {
            total += (w[1] - w[0]).norm();
            s.push(total);
        }
        Some(Polyline { points: kept, s })
    }

    /// The vertices.
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// Total length, m.
    pub fn length(&self) -> f64 {
        self.s.last().copied().unwrap_or(0.0)
    }

    /// Number of segments.
    pub fn n_segments(&self) -> usize {
        self.points.len() - 1
    }

    /// Segment `i` as (start, end, arc length at start); `None` out of range.
    pub fn segment(&self, i: usize) -> Option<(Point, Point, f64)> {
        Some((
            *self.points.get(i)?,
            *self.points.get(i + 1)?,
            *self.s.get(i)?,
        ))
    }

    /// Projects `p` onto segment `i` (clamped to the segment unless it is an end segment and `extend`).
    pub fn project_on_segment(&self, i: usize, p: Point) -> Option<Projection> {
        let (a, b, s0) = self.segment(i)?;
        let d = b - a;
        let len = d.norm();
        let mut t = (p - a).dot(&d) / (len * len);
        let first = i == 0;
        let last = i + 1 == self.n_segments();
        let extended = (first && t < 0.0) || (last && t > 1.0);
        if !extended {
            t = t.clamp(0.0, 1.0);
        }
        let foot = a + d * t;
        let off = p - foot;
        let lateral_sign = if d.perp(&off) >= 0.0 { 1.0 } else { -1.0 };
        Some(Projection {
            s: s0 + t * len,
            lateral: lateral_sign * off.norm(),
            heading: d.y.atan2(d.x),
        })
    }

    /// The projection of `p` with the smallest lateral distance over all segments (linear in the number of
    /// segments; the map index narrows the segments first).
    pub fn project(&self, p: Point) -> Option<Projection> {
        (0..self.n_segments())
            .filter_map(|i| self.project_on_segment(i, p))
            .min_by(|a, b| a.lateral.abs().total_cmp(&b.lateral.abs()))
    }

    /// Direction of travel at arc length `s`, rad (the end segments' directions beyond the ends).
    pub fn heading_at(&self, s: f64) -> f64 {
        let i = self.segment_at(s);
        self.segment(i)
            .map_or(0.0, |(a, b, _)| (b.y - a.y).atan2(b.x - a.x))
    }

    /// The point at arc length `s` (extrapolated along the end segments beyond the ends).
    pub fn point_at(&self, s: f64) -> Point {
        let i = self.segment_at(s);
        match self.segment(i) {
            Some((a, b, s0)) => {
                let d = b - a;
                a + d * ((s - s0) / d.norm())
            }
            None => self.points.first().copied().unwrap_or_else(Point::zeros),
        }
    }

    fn segment_at(&self, s: f64) -> usize {
        let n = self.n_segments();
        // `partition_point` gives the first vertex with arc length > s; the segment starts one before.
        let after = self.s.partition_point(|&v| v <= s);
        after.saturating_sub(1).min(n.saturating_sub(1))
    }

    /// Arc lengths at which this polyline, extended by `extend_m` beyond both ends, crosses `other`,
    /// ascending. Values below 0 or above the length lie on the extensions.
    pub fn crossings(&self, other: &[Point], extend_m: f64) -> Vec<f64> {
        let mut out = Vec::new();
        let n = self.n_segments();
        for i in 0..n {
            let Some((mut a, mut b, s0)) = self.segment(i) else {
                continue;
            };
            let dir = (b - a).normalize();
            let mut s_a = s0;
            if i == 0 {
                a -= dir * extend_m;
                s_a -= extend_m;
            }
            if i + 1 == n {
                b += dir * extend_m;
            }
            for w in other.windows(2) {
                if let Some(t) = segment_crossing(a, b, w[0], w[1]) {
                    out.push(s_a + t * (b - a).norm());
                }
            }
        }
        out.sort_by(f64::total_cmp);
        out.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
        out
    }

    /// The interval of arc length over which this polyline, extended by `extend_m` at both ends, lies
    /// inside `polygon`: (first entry, last exit). `None` when it never does.
    pub fn inside_interval(&self, polygon: &[Point], extend_m: f64) -> Option<(f64, f64)> {
        let mut closed: Vec<Point> = polygon.to_vec();
        if let (Some(first), Some(last)) = (polygon.first(), polygon.last()) {
            if (first - last).norm() > 1e-9 {
                closed.push(*first);
            }
        }
        let mut marks = self.crossings(&closed, extend_m);
        let start = -extend_m;
        let end = self.length() + extend_m;
        if point_in_polygon(self.point_at(start), polygon) {
            marks.insert(0, start);
        }
        if point_in_polygon(self.point_at(end), polygon) {
            marks.push(end);
        }
        match (marks.first(), marks.last()) {
            (Some(&a), Some(&b)) if b > a => Some((a, b)),
            _ => None,
        }
    }
}

/// Where segment `a→b` crosses segment `c→d`, as the fraction along `a→b`; `None` when they do not
/// cross or are parallel.
pub fn segment_crossing(a: Point, b: Point, c: Point, d: Point) -> Option<f64> {
    let r = b - a;
    let q = d - c;
    let denom = r.perp(&q);
    if denom.abs() < 1e-12 {
        return None;
    }
    let ac = c - a;
    let t = ac.perp(&q) / denom;
    let u = ac.perp(&r) / denom;
    ((0.0..=1.0).contains(&t) && (0.0..=1.0).contains(&u)).then_some(t)
}

/// Even-odd rule; the polygon may be given open or closed.
pub fn point_in_polygon(p: Point, polygon: &[Point]) -> bool {
    let n = polygon.len();
    if n < 3 {
        return false;
    }
    let mut inside = false;
    let mut j = n - 1;
    for i in 0..n {
        let (pi, pj) = (polygon[i], polygon[j]);
        if (pi.y > p.y) != (pj.y > p.y) {
            let x_cross = pj.x + (p.y - pj.y) / (pi.y - pj.y) * (pi.x - pj.x);
            if p.x < x_cross {
                inside = !inside;
            }
        }
        j = i;
    }
    inside
}

/// `a - b` wrapped into (-π, π].
pub fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    if d > std::f64::consts::PI {
        d - std::f64::consts::TAU
    } else {
        d
    }
}
