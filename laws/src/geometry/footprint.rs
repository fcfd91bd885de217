//! The ego footprint and oriented rectangles in the ego frame.
//!
//! The ego footprint's figures (LawBreaker's Lincoln MKZ, reference point at the rear-axle centre) are
//! defined in [`crate::frame`] and re-exported here. Road users are rectangles `length × width` centred on
//! their `x`, `y` and turned by their `heading`.

pub use crate::frame::{EGO_FRONT_M, EGO_LENGTH_M, EGO_REAR_M, EGO_WIDTH_M};

/// An oriented rectangle in the ego frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Centre, m along the ego heading.
    pub cx: f64,
    /// Centre, m to the ego's left.
    pub cy: f64,
    /// Cosine of the rectangle's heading relative to the ego.
    pub cos: f64,
    /// Sine of the rectangle's heading relative to the ego.
    pub sin: f64,
    /// Half the length (along its heading), m.
    pub half_len: f64,
    /// Half the width, m.
    pub half_wid: f64,
}

impl Rect {
    /// The four corners, counter-clockwise from front-left.
    pub fn corners(&self) -> [(f64, f64); 4] {
        let (ux, uy) = (self.cos * self.half_len, self.sin * self.half_len);
        let (vx, vy) = (-self.sin * self.half_wid, self.cos * self.half_wid);
        [
            (self.cx + ux + vx, self.cy + uy + vy),
            (self.cx - ux + vx, self.cy - uy + vy),
            (self.cx - ux - vx, self.cy - uy - vy),
            (self.cx + ux - vx, self.cy + uy - vy),
        ]
    }

    /// Half the extent of the rectangle projected on the unit axis `(ax, ay)`.
    pub fn half_extent_on(&self, ax: f64, ay: f64) -> f64 {
        (self.cos * ax + self.sin * ay).abs() * self.half_len
            + (-self.sin * ax + self.cos * ay).abs() * self.half_wid
    }

    /// The radius of the circle around the centre that holds the rectangle, m, rounded up (a few units
    /// in the last place) so that the lower bounds built on it stay bounds.
    pub fn radius_m(&self) -> f64 {
        // A square root of the sum of squares (hypot is several times slower); an overflow gives an
        // infinite radius, which only weakens a bound.
        (self.half_len * self.half_len + self.half_wid * self.half_wid).sqrt()
            * (1.0 + 4.0 * f64::EPSILON)
    }
}

/// True when the two rectangles overlap (touching counts).
pub fn overlaps(a: &Rect, b: &Rect) -> bool {
    // Separating-axis test over the four edge normals of two rectangles.
    let axes = [
        (a.cos, a.sin),
        (-a.sin, a.cos),
        (b.cos, b.sin),
        (-b.sin, b.cos),
    ];
    axes.iter().all(|&(ax, ay)| {
        let d = ((b.cx - a.cx) * ax + (b.cy - a.cy) * ay).abs();
        d <= a.half_extent_on(ax, ay) + b.half_extent_on(ax, ay)
    })
}

/// Squared distance from the point `(x, y)` to the solid rectangle `r` (0 inside it): in `r`'s own axes
/// the point is `(u, v)`, and its distance is how far `|u|` and `|v|` stick out of the half extents.
fn point_rect_dist2(x: f64, y: f64, r: &Rect) -> f64 {
    let (dx, dy) = (x - r.cx, y - r.cy);
    let u = dx * r.cos + dy * r.sin;
    let v = -dx * r.sin + dy * r.cos;
    let out_u = (u.abs() - r.half_len).max(0.0);
    let out_v = (v.abs() - r.half_wid).max(0.0);
    out_u * out_u + out_v * out_v
}

/// The smallest distance between two rectangles' footprints, m (0 when they overlap).
///
/// Two disjoint convex polygons are nearest at a vertex of one of them, so the gap is the smallest
/// distance from a corner of either rectangle to the other rectangle; each is one rotation into the
/// other's axes, with no division.
pub fn gap_m(a: &Rect, b: &Rect) -> f64 {
    if overlaps(a, b) {
        return 0.0;
    }
    // `sqrt` is monotone and correctly rounded, so this equals the minimum of the distances.
    disjoint_gap2(a, b).sqrt()
}

/// The squared footprint gap of two rectangles known not to overlap (for overlapping ones, a
/// meaningless non-negative number).
pub(crate) fn disjoint_gap2(a: &Rect, b: &Rect) -> f64 {
    let mut best = f64::INFINITY;
    for (x, y) in a.corners() {
        best = best.min(point_rect_dist2(x, y, b));
    }
    for (x, y) in b.corners() {
        best = best.min(point_rect_dist2(x, y, a));
    }
    best
}

/// The ego footprint in the ego frame.
pub fn ego_rect() -> Rect {
    Rect {
        cx: (EGO_FRONT_M + EGO_REAR_M) / 2.0,
        cy: 0.0,
        cos: 1.0,
        sin: 0.0,
        half_len: EGO_LENGTH_M / 2.0,
        half_wid: EGO_WIDTH_M / 2.0,
    }
}
