//! The first contact of two footprints when the ego keeps its current acceleration.
//!
//! A constant-velocity time to collision ([`super::cpa`]) cannot see a car pulling out of a give-way line
//! into a gap: standing or crawling, it is "never" going to arrive. Keeping the current *acceleration*
//! instead (the modified time to collision of the traffic-safety literature, Ozbay et al., 2008) sees it as
//! soon as the car starts to move, and sees a car that has begun to brake as stopping short.
//!
//! The ego `a` moves along the frame's x axis (its heading) from speed `v` at constant acceleration `α`,
//! `s(t) = v t + α t² / 2`; a braking ego stops at `t = v / −α` and stays there (it never reverses). The
//! road user `b` keeps its velocity `w`; headings are frozen. With `M = b ⊖ a` (their Minkowski difference)
//! the footprints touch at `t` exactly when the point `P(t) = (s(t) − w_x t, −w_y t)` lies in `M`, i.e.
//! when `nᵢ·(P(t) − mᵢ) ≤ 0` for each edge `i` of `M` (outward normal `nᵢ`, vertex `mᵢ`). On each piece of
//! the motion (accelerating or braking, then standing) every such function is a polynomial of degree ≤ 2
//! in `t`, so their roots cut the piece into stretches on which none changes sign: the first contact is the
//! first root (or the piece's start) at which, or just after which, all of them are ≤ 0. Exact up to the
//! rounding of the roots; O(1) per road user.

use super::cpa::{cross, minkowski_difference, to_segment, V2};
use super::footprint::Rect;

/// A condition `c2 t² + c1 t + c0 ≤ 0` on a stretch of time, scaled so that its value is a distance in m.
#[derive(Debug, Clone, Copy)]
struct Quadratic {
    c2: f64,
    c1: f64,
    c0: f64,
}

impl Quadratic {
    fn at(&self, t: f64) -> f64 {
        (self.c2 * t + self.c1) * t + self.c0
    }

    /// Its real roots (at most two; the rest of the array is unused).
    fn roots(&self) -> ([f64; 2], usize) {
        let Quadratic { c2, c1, c0 } = *self;
        // A leading coefficient this small moves the value by well under a micrometre over the horizon.
        if c2.abs() < 1e-12 {
            return if c1 != 0.0 {
                ([-c0 / c1, 0.0], 1)
            } else {
                ([0.0; 2], 0)
            };
        }
        let disc = c1 * c1 - 4.0 * c2 * c0;
        if disc < 0.0 {
            return ([0.0; 2], 0);
        }
        // The numerically stable pair (no cancellation between c1 and the square root).
        let q = -0.5 * (c1 + c1.signum() * disc.sqrt());
        if q == 0.0 {
            ([0.0; 2], 1)
        } else {
            ([q / c2, c0 / q], 2)
        }
    }
}

/// One stretch of the ego's motion: from `from` to `to` s, at `s0 + v t + alpha t² / 2` m along its
/// heading (with `t` counted from 0, not from `from`: a standing piece has `v = alpha = 0`).
struct Piece {
    from: f64,
    to: f64,
    v: f64,
    alpha: f64,
    s0: f64,
}

/// The first time in `[lo, hi]` at which every condition holds.
fn first_inside(conditions: &[Quadratic; 8], lo: f64, hi: f64) -> Option<f64> {
    // The piece's ends and every root inside it: at most 2 + 8 × 2.
    let mut cuts = [0.0f64; 18];
    cuts[0] = lo;
    cuts[1] = hi;
    let mut n = 2;
    for c in conditions {
        let (roots, k) = c.roots();
        for &r in &roots[..k] {
            if r > lo && r < hi {
                cuts[n] = r;
                n += 1;
            }
        }
    }
    let cuts = &mut cuts[..n];
    cuts.sort_by(f64::total_cmp);
    let inside = |t: f64| conditions.iter().all(|c| c.at(t) <= TOUCH_TOL_M);
    // Between two consecutive cuts no condition changes sign, so the middle stands for the whole open
    // stretch, and contact there means contact from its start on (the conditions are continuous).
    for pair in cuts.windows(2) {
        let (t0, t1) = (pair[0], pair[1]);
        if inside(t0) || (t1 > t0 && inside(0.5 * (t0 + t1))) {
            return Some(t0);
        }
    }
    inside(hi).then_some(hi)
}

/// How far outside the polygon still counts as touching, m: rounding in the roots and edge normals.
const TOUCH_TOL_M: f64 = 1e-9;

/// The motion [`Accelerating::first_contact`] assumes: the ego moving along the frame's x axis (its
/// heading) at constant acceleration until braking brings it to rest, where it stays; the road user at a
/// constant velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accelerating {
    /// The ego's speed, m/s (a negative one counts as 0: the ego never reverses).
    pub speed_mps: f64,
    /// The ego's acceleration along its heading, m/s².
    pub accel_mps2: f64,
    /// The road user's velocity in the same frame (not relative to the ego), m/s.
    pub other_mps: (f64, f64),
    /// How far ahead to look, s.
    pub horizon_s: f64,
}

impl Accelerating {
    /// When the footprints `a` (the ego) and `b` first touch within the horizon, s from now; `None` when
    /// they do not. With `accel_mps2 = 0` this is [`super::cpa::closest_approach`]'s first contact for the
    /// relative velocity `other − (speed, 0)`.
    pub fn first_contact(&self, a: &Rect, b: &Rect) -> Option<f64> {
        let Accelerating {
            speed_mps,
            accel_mps2,
            other_mps: w_mps,
            horizon_s,
        } = *self;
        let horizon = horizon_s.max(0.0);
        if !(speed_mps.is_finite() && accel_mps2.is_finite() && horizon.is_finite()) {
            return None;
        }
        let (v, alpha, t_stop) = self.ego_motion();
        let poly = minkowski_difference(a, b);
        let w = V2::new(w_mps.0, w_mps.1);
        // Moving: P(t) = ((v − w_x) t + α t²/2, −w_y t) until the ego stops (or the horizon); then standing
        // at s_stop: P(t) = (s_stop − w_x t, −w_y t).
        let moving_end = t_stop.min(horizon);
        let moving = Piece {
            from: 0.0,
            to: moving_end,
            v,
            alpha,
            s0: 0.0,
        };
        let standing = (t_stop < horizon).then_some(Piece {
            from: t_stop,
            to: horizon,
            v: 0.0,
            alpha: 0.0,
            s0: self.travelled_m(t_stop),
        });
        let mut conditions = [Quadratic {
            c2: 0.0,
            c1: 0.0,
            c0: 0.0,
        }; 8];
        for piece in std::iter::once(&moving).chain(standing.as_ref()) {
            for (i, m) in poly.iter().enumerate() {
                let e = poly[(i + 1) % poly.len()] - m;
                let len = e.norm();
                // Unit outward normal of a counter-clockwise edge; inside is n·(P(t) − m) ≤ 0. A degenerate
                // edge (a footprint of zero size) bounds nothing.
                conditions[i] = if len == 0.0 {
                    Quadratic {
                        c2: 0.0,
                        c1: 0.0,
                        c0: -1.0,
                    }
                } else {
                    let n = V2::new(e.y, -e.x) / len;
                    Quadratic {
                        c2: n.x * 0.5 * piece.alpha,
                        c1: n.x * (piece.v - w.x) - n.y * w.y,
                        c0: n.x * piece.s0 - n.dot(m),
                    }
                };
            }
            if let Some(t) = first_inside(&conditions, piece.from, piece.to) {
                return Some(t);
            }
        }
        None
    }

    /// The ego's speed, acceleration and stopping time as the motion uses them: a standing ego that is
    /// braking stays where it is; a moving one that is braking stops at `v / −α`.
    fn ego_motion(&self) -> (f64, f64, f64) {
        let v = self.speed_mps.max(0.0);
        let alpha = if v == 0.0 {
            self.accel_mps2.max(0.0)
        } else {
            self.accel_mps2
        };
        let t_stop = if alpha < 0.0 {
            v / -alpha
        } else {
            f64::INFINITY
        };
        (v, alpha, t_stop)
    }

    /// How far the ego has travelled along its heading after `t` s, m (standing still once it has stopped).
    fn travelled_m(&self, t: f64) -> f64 {
        let (v, alpha, t_stop) = self.ego_motion();
        let t = t.min(t_stop);
        v * t + 0.5 * alpha * t * t
    }

    /// A lower bound of the footprint gap of [`Accelerating::first_contact`]'s two footprints over the
    /// horizon (cheap: circles around them, `a`'s centre anywhere on the stretch it can cover), used to
    /// skip road users that cannot touch the ego: positive means no contact. Far apart, it is the weaker
    /// bound of the circles around the two stretches.
    pub fn gap_lower_bound(&self, a: &Rect, b: &Rect) -> f64 {
        let horizon = self.horizon_s.max(0.0);
        // The farthest a can travel forward within the horizon.
        let reach = self.travelled_m(horizon);
        if !reach.is_finite() {
            return f64::NEG_INFINITY;
        }
        let a0 = V2::new(a.cx, a.cy);
        let a1 = a0 + V2::new(reach.max(0.0), 0.0);
        let b0 = V2::new(b.cx, b.cy);
        let b1 = b0 + V2::new(self.other_mps.0, self.other_mps.1) * horizon;
        let radii = a.radius_m() + b.radius_m();
        // First the circles around the two stretches (no division): when they are apart, so are the
        // stretches, by at least as much.
        let stretches_apart =
            ((a0 + a1) - (b0 + b1)).norm() / 2.0 - (a1 - a0).norm() / 2.0 - (b1 - b0).norm() / 2.0;
        if stretches_apart - radii > 0.0 {
            return stretches_apart - radii;
        }
        segment_distance(&a0, &a1, &b0, &b1) - radii
    }
}

/// The distance between the segments `p0p1` and `q0q1`: 0 when they cross, else the nearest of an end of
/// one to the other.
fn segment_distance(p0: &V2, p1: &V2, q0: &V2, q1: &V2) -> f64 {
    let (d, e) = (p1 - p0, q1 - q0);
    let denom = cross(&d, &e);
    if denom != 0.0 {
        let s = cross(&(q0 - p0), &e) / denom;
        let u = cross(&(q0 - p0), &d) / denom;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&u) {
            return 0.0;
        }
    }
    let d2 = to_segment(p0, q0, q1)
        .0
        .min(to_segment(p1, q0, q1).0)
        .min(to_segment(q0, p0, p1).0)
        .min(to_segment(q1, p0, p1).0);
    d2.sqrt()
}
