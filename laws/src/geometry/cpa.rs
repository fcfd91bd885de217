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

use super::footprint::{disjoint_gap2, Rect};

/// The closest approach within the horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Approach {
    /// The smallest footprint gap over `[0, horizon]`, m (0 when they touch).
    pub dist_m: f64,
    /// When it is first attained, s from now (the first contact when `dist_m` is 0).
    pub time_s: f64,
}

pub(super) type V2 = Vector2<f64>;

fn v2((x, y): (f64, f64)) -> V2 {
    V2::new(x, y)
}

/// The 2-D cross product `a × b`.
pub(super) fn cross(a: &V2, b: &V2) -> f64 {
    a.x * b.y - a.y * b.x
}

/// The Minkowski difference `b ⊖ a` of two rectangles, counter-clockwise. Both are centrally symmetric,
/// so the difference is too: an octagon (collinear edges when the rectangles are aligned) centred at
/// `b.centre − a.centre` whose edges are the four side vectors of both rectangles, each once forwards and
/// once backwards. Sorting the four forward sides by angle in `[0, π)` gives the first half of the
/// boundary from the vertex `centre − Σ sides / 2`; the second half repeats them negated.
pub(super) fn minkowski_difference(a: &Rect, b: &Rect) -> [V2; 8] {
    let side = |r: &Rect, along: bool| {
        if along {
            V2::new(r.cos, r.sin) * (2.0 * r.half_len)
        } else {
            V2::new(-r.sin, r.cos) * (2.0 * r.half_wid)
        }
    };
    let mut sides = [side(a, true), side(a, false), side(b, true), side(b, false)];
    // Fold each side into the upper half plane (angle in [0, π)).
    for s in &mut sides {
        if s.y < 0.0 || (s.y == 0.0 && s.x < 0.0) {
            *s = -*s;
        }
    }
    // Insertion sort by angle: in the upper half plane, `u` comes before `v` when `u × v > 0`.
    for i in 1..sides.len() {
        let mut j = i;
        while j > 0 && cross(&sides[j], &sides[j - 1]) > 0.0 {
            sides.swap(j, j - 1);
            j -= 1;
        }
    }
    let centre = V2::new(b.cx - a.cx, b.cy - a.cy);
    let mut vertex = centre - (sides[0] + sides[1] + sides[2] + sides[3]) / 2.0;
    let mut out = [V2::zeros(); 8];
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = vertex;
        let s = sides[k % 4];
        vertex += if k < 4 { s } else { -s };
    }
    out
}

/// Squared distance from `p` to the segment `a + s (b − a)`, `s ∈ [0, 1]`, and that `s`.
pub(super) fn to_segment(p: &V2, a: &V2, b: &V2) -> (f64, f64) {
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
    let poly = minkowski_difference(a, b);
    let n = poly.len();
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
    if s_lo <= s_hi {
        return Approach {
            dist_m: 0.0,
            time_s: s_lo * horizon_s.max(0.0),
        };
    }

    // Disjoint: the nearest pair is an end of the segment against `M`, or a vertex of `M` against the
    // segment. An end's distance to `M` is the footprint gap at that time (`dist(−w t, b ⊖ a)` is the gap
    // between `a` and `b + w t`), and the footprints are apart at both ends here.
    let origin = V2::zeros();
    let mut candidates = [(f64::INFINITY, 0.0); 10];
    candidates[0] = (disjoint_gap2(a, b), 0.0);
    let moved = Rect {
        cx: b.cx - end.x,
        cy: b.cy - end.y,
        ..*b
    };
    candidates[1] = (disjoint_gap2(a, &moved), 1.0);
    for (slot, v) in candidates[2..].iter_mut().zip(&poly) {
        *slot = to_segment(v, &origin, &end);
    }
    let d2 = candidates.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
    // Along a stretch of constant distance (an edge of M parallel to the motion) several candidates tie up
    // to rounding: the earliest within a relative 1e-9 of the minimum counts as first attained.
    let tol = 1e-9 * (1.0 + d2);
    let s = candidates
        .iter()
        .filter(|c| c.0 <= d2 + tol)
        .map(|c| c.1)
        .fold(f64::INFINITY, f64::min);
    Approach {
        dist_m: d2.sqrt(),
        time_s: s * horizon_s.max(0.0),
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
