//! Footprint overlap of oriented rectangles (separating-axis test).
//!
//! Two convex polygons are disjoint exactly when some edge normal of one of them separates their
//! projections; a rectangle has two distinct edge normals, so four axes decide. Touching edges count as an
//! overlap (like shapely's `distance == 0` used by LawBreaker's collision predicate).

/// An oriented rectangle in the map frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Centre x, m.
    pub centre_x: f64,
    /// Centre y, m.
    pub centre_y: f64,
    /// Heading of the length axis, rad.
    pub heading: f64,
    /// Half the length, m.
    pub half_length_m: f64,
    /// Half the width, m.
    pub half_width_m: f64,
}

impl Rect {
    /// The rectangle's corners, counter-clockwise.
    pub fn corners(&self) -> [(f64, f64); 4] {
        let (c, s) = (self.heading.cos(), self.heading.sin());
        let (l, w) = (self.half_length_m, self.half_width_m);
        [(l, w), (-l, w), (-l, -w), (l, -w)]
            .map(|(a, b)| (self.centre_x + a * c - b * s, self.centre_y + a * s + b * c))
    }

    /// Half-extent of the projection of this rectangle onto the unit axis `(ax, ay)`.
    fn radius_on(&self, ax: f64, ay: f64) -> f64 {
        let (c, s) = (self.heading.cos(), self.heading.sin());
        self.half_length_m * (c * ax + s * ay).abs() + self.half_width_m * (-s * ax + c * ay).abs()
    }

    /// True when the two rectangles overlap or touch.
    pub fn overlaps(&self, other: &Rect) -> bool {
        let (dx, dy) = (other.centre_x - self.centre_x, other.centre_y - self.centre_y);
        // Cheap reject on bounding circles first: most pairs are far apart.
        let reach = self.half_length_m.hypot(self.half_width_m) + other.half_length_m.hypot(other.half_width_m);
        if dx * dx + dy * dy > reach * reach {
            return false;
        }
        [self.heading, other.heading].iter().all(|h| {
            let (c, s) = (h.cos(), h.sin());
            [(c, s), (-s, c)].iter().all(|&(ax, ay)| {
                let dist = (dx * ax + dy * ay).abs();
                dist <= self.radius_on(ax, ay) + other.radius_on(ax, ay)
            })
        })
    }
}

#[cfg(test)]
mod tests;
