//! Plane geometry in the ego frame, shared by the obstacle signals, the motion predictions and RSS.
//!
//! Everything here works in the **ego frame**: origin at the ego reference point (rear-axle centre), `lon`
//! (x) along the ego heading, `lat` (y) to its left; [`EgoFrame`] maps map-frame poses into it.
//! - [`footprint`]: the ego footprint (LawBreaker's Lincoln MKZ) and oriented rectangles with their
//!   footprint gap ([`Rect`], [`gap_m`]).
//! - [`cpa`]: the closest point of approach of two footprints moving at constant velocity within a horizon
//!   (exact for translating rectangles: a segment against their Minkowski difference).
//! - [`contact`]: the first contact of two footprints when the ego keeps its acceleration (and stops for
//!   good when braking brings it to rest) and the other keeps its velocity; exact, from the same Minkowski
//!   difference.
//! - [`crossing`]: where a road user's straight path crosses the ego's (the conflict area) and how far each
//!   has to travel to enter and to leave it.
//! - [`latency`]: how late a log's road users are reported, read off the footprints at its collisions.

pub mod contact;
pub mod cpa;
pub mod crossing;
pub mod footprint;
pub mod latency;

pub use footprint::{ego_rect, gap_m, Rect, EGO_FRONT_M, EGO_LENGTH_M, EGO_REAR_M, EGO_WIDTH_M};

use crate::frame::{Frame, Obstacle};

/// `x`, or 0 where it is NaN or infinite (a frame value no computation should carry on with).
pub fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Wraps an angle to (−π, π].
pub fn wrap_rad(a: f64) -> f64 {
    let w = a.rem_euclid(std::f64::consts::TAU);
    if w > std::f64::consts::PI {
        w - std::f64::consts::TAU
    } else {
        w
    }
}

/// The ego frame of one [`Frame`]: `ego_from_map` as the ego pose and the cosine and sine of its heading
/// (taken once per frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EgoFrame {
    x: f64,
    y: f64,
    heading: f64,
    cos: f64,
    sin: f64,
}

/// A road user in the ego frame: its footprint and its velocity.
#[derive(Debug, Clone, Copy)]
pub struct Mover {
    /// The footprint.
    pub rect: Rect,
    /// Heading relative to the ego, rad, wrapped to (−π, π].
    pub rel_heading_rad: f64,
    /// Velocity along the ego heading, m/s.
    pub v_lon_mps: f64,
    /// Velocity to the ego's left, m/s.
    pub v_lat_mps: f64,
}

impl EgoFrame {
    /// The ego frame of `f`.
    pub fn of(f: &Frame) -> EgoFrame {
        let (sin, cos) = f.heading.sin_cos();
        EgoFrame {
            x: f.x,
            y: f.y,
            heading: f.heading,
            cos,
            sin,
        }
    }

    /// A map-frame point in the ego frame: `(lon, lat)`.
    #[inline]
    pub fn point(&self, x: f64, y: f64) -> (f64, f64) {
        let (dx, dy) = (x - self.x, y - self.y);
        (
            dx * self.cos + dy * self.sin,
            -dx * self.sin + dy * self.cos,
        )
    }

    /// An obstacle in the ego frame (one `sin_cos` for its relative heading).
    pub fn mover(&self, o: &Obstacle) -> Mover {
        let (lon, lat) = self.point(o.x, o.y);
        let rel = wrap_rad(o.heading - self.heading);
        let (sin, cos) = rel.sin_cos();
        Mover {
            rect: Rect {
                cx: lon,
                cy: lat,
                cos,
                sin,
                half_len: o.length / 2.0,
                half_wid: o.width / 2.0,
            },
            rel_heading_rad: rel,
            v_lon_mps: o.speed_mps * cos,
            v_lat_mps: o.speed_mps * sin,
        }
    }
}

#[cfg(test)]
mod tests;
