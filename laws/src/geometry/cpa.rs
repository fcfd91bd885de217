//! The closest point of approach (CPA) of two footprints moving at constant velocity.
//!
//! Two rectangles that translate without turning (`a` still, `b` moving at `w` relative to `a`) are
//! `gap(t) = dist(a, b + w t)` apart at time `t`. With `M = b ⊖ a = {p − q : p ∈ b, q ∈ a}` (their
//! Minkowski difference, a convex polygon of at most 8 vertices), `gap(t) = dist(−w t, M)`: the distance
//! from a point moving on the segment `S = {−w t : 0 ≤ t ≤ H}` to a fixed convex polygon. So, exactly:
//! - if `S` meets `M` (clipped against `M`'s edges, Cyrus–Beck), the footprints touch within the horizon:
//!   the CPA distance is 0 and its time is the first contact (a footprint-aware time to collision);
//! - otherwise the CPA is the distance between the segment and the polygon's boundary, attained at an end
//!   of `S` or at the projection of a vertex of `M` on `S`.
//!
//! Headings are frozen over the horizon (constant velocity, no yaw rate), as in every constant-velocity
//! TTC; a turning road user is predicted along its current heading.

use nalgebra::Vector2;

use super::footprint::Rect;

/// The closest approach within the horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Approach {
    /// The smallest footprint gap over `[0, horizon]`, m (0 when they touch).
    pub dist_m: f64,
    /// When it is first attained, s from now (the first contact when `dist_m` is 0).
    pub time_s: f64,
}

type V2 = Vector2<f64>;

fn v2((x, y): (f64, f64)) -> V2 {
    V2::new(x, y)
}

/// The 2-D cross product `a × b`.
fn cross(a: &V2, b: &V2) -> f64 {
    a.x * b.y - a.y * b.x
}

/// Room for a hull under construction: at most 16 points on the lower chain and 15 more on the upper.
const HULL_CAP: usize = 32;

/// The convex hull of `points` (counter-clockwise, no collinear vertices), Andrew's monotone chain, into
/// `hull`. Returns how many leading entries of `hull` are used.
fn convex_hull(points: &mut [V2; 16], hull: &mut [V2; HULL_CAP]) -> usize {
    points.sort_unstable_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    let turns_left = |hull: &[V2; HULL_CAP], n: usize, p: &V2| {
        cross(&(hull[n - 1] - hull[n - 2]), &(p - hull[n - 2])) > 0.0
    };
    let mut n = 0;
    for p in points.iter() {
        while n >= 2 && !turns_left(hull, n, p) {
            n -= 1;
        }
        hull[n] = *p;
        n += 1;
    }
    let lower = n + 1;
    for p in points.iter().rev().skip(1) {
        while n >= lower && !turns_left(hull, n, p) {
            n -= 1;
        }
        hull[n] = *p;
        n += 1;
    }
    // The upper chain ends at the first point of the lower one.
    n.saturating_sub(1)
}

/// Squared distance from `p` to the segment `a + s (b − a)`, `s ∈ [0, 1]`, and that `s`.
fn to_segment(p: &V2, a: &V2, b: &V2) -> (f64, f64) {
    let d = b - a;
    let len2 = d.norm_squared();
    let s = if len2 > 0.0 {
        ((p - a).dot(&d) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((a + d * s - p).norm_squared(), s)
}

/// The closest approach within `horizon_s` of `b` moving at `w_mps` (relative to `a`) to a still `a`.
pub fn closest_approach(a: &Rect, b: &Rect, w_mps: (f64, f64), horizon_s: f64) -> Approach {
    let (ca, cb) = (a.corners(), b.corners());
    let mut diff = [V2::zeros(); 16];
    for (i, p) in cb.iter().enumerate() {
        for (j, q) in ca.iter().enumerate() {
            diff[4 * i + j] = v2(*p) - v2(*q);
        }
    }
    let mut hull = [V2::zeros(); HULL_CAP];
    let n = convex_hull(&mut diff, &mut hull);
    let poly = &hull[..n];
    let end = -v2(w_mps) * horizon_s.max(0.0);

    // Cyrus–Beck: the part of the segment 0 → end inside every edge's half-plane.
    let (mut s_lo, mut s_hi) = (0.0f64, 1.0f64);
    for (i, v) in poly.iter().enumerate() {
        let next = poly[(i + 1) % n];
        let e = next - v;
        // Outward normal of a counter-clockwise edge; inside is normal·(p − v) ≤ 0.
        let normal = V2::new(e.y, -e.x);
        let along = normal.dot(&end);
        let limit = normal.dot(v);
        if along > 0.0 {
            s_hi = s_hi.min(limit / along);
        } else if along < 0.0 {
            s_lo = s_lo.max(limit / along);
        } else if limit < 0.0 {
            s_lo = f64::INFINITY;
        }
    }
    if n >= 3 && s_lo <= s_hi {
        return Approach {
            dist_m: 0.0,
            time_s: s_lo * horizon_s.max(0.0),
        };
    }

    // Disjoint: the nearest pair is an end of the segment against an edge, or a vertex against the segment.
    let origin = V2::zeros();
    // Along a stretch of constant distance (an edge of M parallel to the motion) several candidates tie up
    // to rounding: the earliest within a relative 1e-9 counts as first attained.
    let mut best = (f64::INFINITY, f64::INFINITY);
    let mut consider = |d2: f64, s: f64| {
        let tol = 1e-9 * (1.0 + best.0);
        if d2 < best.0 - tol {
            best = (d2, s);
        } else if d2 <= best.0 + tol && s < best.1 {
            best = (d2.min(best.0), s);
        }
    };
    for (i, v) in poly.iter().enumerate() {
        let next = poly[(i + 1) % n];
        consider(to_segment(&origin, v, &next).0, 0.0);
        consider(to_segment(&end, v, &next).0, 1.0);
        let (d2, s) = to_segment(v, &origin, &end);
        consider(d2, s);
    }
    Approach {
        dist_m: best.0.sqrt(),
        time_s: best.1 * horizon_s.max(0.0),
    }
}

/// A lower bound of [`closest_approach`]'s distance from the circles around the two rectangles (cheap: no
/// hull), used to skip road users that cannot be the most critical.
pub fn closest_approach_lower_bound(a: &Rect, b: &Rect, w_mps: (f64, f64), horizon_s: f64) -> f64 {
    let c = V2::new(b.cx - a.cx, b.cy - a.cy);
    let w = v2(w_mps);
    let w2 = w.norm_squared();
    let t = if w2 > 0.0 {
        (-c.dot(&w) / w2).clamp(0.0, horizon_s.max(0.0))
    } else {
        0.0
    };
    (c + w * t).norm() - a.radius_m() - b.radius_m()
}
