//! The brake check: before the bridge tells the vehicle to slow down or stop, it asks whether braking would
//! leave the vehicle in another road user's path.
//!
//! Braking is the right answer to most alarms, but not to all: a car that has begun to turn across oncoming
//! traffic, or to cross a priority road, and is told to stop there stops *in* the other's path, and a car
//! with a close follower stops in front of it. Then the vehicle is better off going on and clearing the
//! conflict area. So, over the next [`super::EnforceConfig::brake_check_s`] seconds, two futures are rolled
//! out from the frame and compared:
//! - **braking**: the vehicle brakes at [`super::EnforceConfig::decel_mps2`] until it stands (and then
//!   stays);
//! - **keeping on**: it keeps its own acceleration (a braking vehicle keeps braking; an accelerating one
//!   accelerates up to the larger of its speed and the speed limit). While an intervention of ours is braking
//!   the vehicle, its own acceleration is that of the last frame before: a car held in a conflict area by our
//!   stop would, left alone, go on as it meant to.
//!
//! In both the vehicle keeps its path's curvature (`κ = yaw rate / speed`, the yaw rate from the heading of
//! the previous frame: a car that brakes keeps its steering), so a turn in progress stays a turn; every other
//! road user keeps its velocity (as in the closest-approach signals). Each future is sampled every [`STEP_S`]
//! (at a closing speed of 20 m/s the footprints move 1 m between samples, less than a car's width) and its
//! *clearance* is the smallest footprint gap to any road user ([`laws::geometry::gap_m`]). Braking is the
//! worse choice when its clearance falls below [`CLEAR_M`] and keeping on keeps at least [`MARGIN_M`] more,
//! or when braking touches a road user and keeping on does not (by however little: a contact against a near
//! miss): then the bridge sends an `alert` instead of `slow_down`/`stop` (the vehicle's own controller stays
//! in charge), with both clearances in the explanation. It brakes again only once braking keeps [`CLEAR_M`]
//! or keeping on comes closer than braking (a hysteresis: the futures are rolled out afresh every frame, and
//! a verdict near the line must not flip the command back and forth; a vehicle that has gone on into a
//! conflict area is not stopped there). Where both futures come equally close before any hold-off (both
//! touch, say), braking is kept: it meets the other at a lower speed. Clearances are exact only below
//! [`EXACT_BELOW_M`], which no verdict looks beyond: a road user too far away to come that close to either
//! future is passed over before sampling, and a sample whose bounding circles are that far apart (or
//! farther than the best sample so far) is not measured.

use laws::geometry::{ego_rect, finite_or_zero, gap_m, wrap_rad, EgoFrame, Rect};
use laws::Frame;

#[cfg(test)]
mod tests;

/// A future whose clearance falls below this comes too close to a road user, m.
pub const CLEAR_M: f64 = 0.5;
/// Keeping on must keep this much more clearance than braking to be chosen over it, m.
pub const MARGIN_M: f64 = 0.1;
/// Clearances below this are exact (at the samples); above it a future may report a larger one, or none.
/// No verdict reads them: one at least [`CLEAR_M`] + [`MARGIN_M`] never changes a verdict, m.
pub const EXACT_BELOW_M: f64 = 1.0;
/// Sampling step of the rolled-out futures, s.
pub const STEP_S: f64 = 0.05;
/// Largest path curvature taken from the yaw rate, 1/m (a 4 m turning radius, tighter than a car's).
pub const MAX_CURVATURE: f64 = 0.25;
/// Longest horizon rolled out, s (bounds the work per frame: at most 1,024 road users × 2 × 201 samples).
pub const MAX_HORIZON_S: f64 = 10.0;
/// Below this speed the yaw rate says little about the path's curvature, which is then taken as 0, m/s.
const MIN_SPEED_FOR_CURVATURE_MPS: f64 = 1.0;
/// Frames further apart than this give no yaw rate, s.
const MAX_YAW_GAP_S: f64 = 0.5;

/// How close one future comes to the road users.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlook {
    /// The smallest footprint gap to a road user at the samples within the horizon, m: exact below
    /// [`EXACT_BELOW_M`]; at or above it, a gap at least that large or +inf.
    pub clearance_m: f64,
    /// When that gap is reached, s from the frame (`None` with an infinite clearance).
    pub at_s: Option<f64>,
    /// The road user it is to.
    pub obstacle_id: Option<i32>,
}

impl Outlook {
    const CLEAR: Outlook = Outlook {
        clearance_m: f64::INFINITY,
        at_s: None,
        obstacle_id: None,
    };

    /// Whether this future comes within [`CLEAR_M`] of a road user.
    pub fn too_close(&self) -> bool {
        self.clearance_m < CLEAR_M
    }
}

/// The two futures of one frame, from [`check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrakeCheck {
    /// Braking to a stop.
    pub braking: Outlook,
    /// Keeping the current acceleration.
    pub keeping_on: Outlook,
}

impl BrakeCheck {
    /// Whether to hold off braking (see the module docs), given whether the episode holds off already:
    /// a vehicle that brakes holds off when braking comes too close to a road user and keeping on keeps at
    /// least [`MARGIN_M`] more clearance, or any clearance where braking touches; one that keeps on brakes
    /// again only when braking no longer comes too close or keeping on comes closer than braking. The two
    /// conditions differ so that a verdict near the line does not flip from frame to frame: a vehicle
    /// that has gone on into a conflict area is not stopped there because both futures touch.
    pub fn hold_off(&self, holding_off: bool) -> bool {
        let (brake, keep) = (self.braking.clearance_m, self.keeping_on.clearance_m);
        if holding_off {
            self.braking.too_close() && keep >= brake
        } else {
            self.braking.too_close() && keep > brake && (brake == 0.0 || keep >= brake + MARGIN_M)
        }
    }

    /// The check in words, for an intervention's explanation.
    pub fn describe(&self) -> String {
        let side = |o: &Outlook| match (o.at_s, o.obstacle_id) {
            (Some(t), Some(id)) if o.clearance_m < EXACT_BELOW_M => {
                format!("{:.1} m from road user {id} in {t:.1} s", o.clearance_m)
            }
            _ => format!("at least {EXACT_BELOW_M} m from every road user"),
        };
        format!(
            "braking would come {}, keeping on {}",
            side(&self.braking),
            side(&self.keeping_on)
        )
    }
}

/// The heading of the previous frame, for the yaw rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviousPose {
    /// Frame time, s.
    pub t: f64,
    /// Heading, rad.
    pub heading: f64,
}

/// Path curvature from the yaw rate between `prev` and `frame` (0 without a usable previous frame or
/// below walking pace), 1/m, within ±[`MAX_CURVATURE`].
pub fn curvature(frame: &Frame, prev: Option<PreviousPose>) -> f64 {
    let Some(prev) = prev else { return 0.0 };
    let dt = frame.t - prev.t;
    let v = frame.speed_mps;
    // Written so that a NaN time or speed also gives 0.
    let usable = dt > 0.0 && dt <= MAX_YAW_GAP_S && v >= MIN_SPEED_FOR_CURVATURE_MPS;
    if !usable {
        return 0.0;
    }
    finite_or_zero(wrap_rad(frame.heading - prev.heading) / dt / v)
        .clamp(-MAX_CURVATURE, MAX_CURVATURE)
}

/// One future's speed profile: from `v0` at constant `accel` until the speed reaches 0 (then standing) or
/// `v_max` (then cruising).
#[derive(Debug, Clone, Copy)]
struct Profile {
    v0: f64,
    accel: f64,
    v_max: f64,
}

impl Profile {
    /// Distance travelled after `t` s, m.
    fn distance(&self, t: f64) -> f64 {
        let Profile { v0, accel, v_max } = *self;
        if accel < 0.0 {
            let t_stop = v0 / -accel;
            let t = t.min(t_stop);
            v0 * t + 0.5 * accel * t * t
        } else if accel > 0.0 && v0 < v_max {
            let t_cap = (v_max - v0) / accel;
            if t <= t_cap {
                v0 * t + 0.5 * accel * t * t
            } else {
                v0 * t_cap + 0.5 * accel * t_cap * t_cap + v_max * (t - t_cap)
            }
        } else {
            v0 * t
        }
    }
}

/// The ego footprint after travelling `s` m along a path of curvature `k` from the ego frame's origin.
fn ego_at(s: f64, k: f64) -> Rect {
    let theta = k * s;
    let (x, y) = if theta.abs() < 1e-6 {
        (s, 0.5 * k * s * s)
    } else {
        (theta.sin() / k, (1.0 - theta.cos()) / k)
    };
    let (sin, cos) = theta.sin_cos();
    let base = ego_rect();
    Rect {
        cx: x + base.cx * cos,
        cy: y + base.cx * sin,
        cos,
        sin,
        ..base
    }
}

/// What the two futures assume besides the frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Futures {
    /// Path curvature ([`curvature`]), 1/m.
    pub curvature: f64,
    /// The vehicle's own acceleration, kept by "keeping on", m/s²: the frame's, unless an intervention of
    /// ours is braking the vehicle, then that of the last frame before it.
    pub own_accel_mps2: f64,
    /// Braking deceleration, m/s².
    pub decel_mps2: f64,
    /// How far ahead to roll out, s (at most [`MAX_HORIZON_S`]).
    pub horizon_s: f64,
}

/// Rolls out braking and keeping on from `frame` (see the module docs).
pub fn check(frame: &Frame, futures: &Futures) -> BrakeCheck {
    let Futures {
        curvature,
        own_accel_mps2,
        decel_mps2,
        horizon_s,
    } = *futures;
    let v0 = finite_or_zero(frame.speed_mps).max(0.0);
    let accel = finite_or_zero(own_accel_mps2);
    let limit = if frame.speed_limit_mps.is_finite() && frame.speed_limit_mps > 0.0 {
        frame.speed_limit_mps
    } else {
        0.0
    };
    let braking = Profile {
        v0,
        accel: -decel_mps2.max(0.1),
        v_max: v0,
    };
    let keeping_on = Profile {
        v0,
        accel,
        v_max: v0.max(limit),
    };
    let horizon_s = finite_or_zero(horizon_s).clamp(0.0, MAX_HORIZON_S);
    let n_steps = (horizon_s / STEP_S).ceil() as usize;
    let k = finite_or_zero(curvature);
    // Both futures' footprints at every sample, shared by every road user and laid out only once one is
    // near enough to need them.
    let path = |p: &Profile| -> Vec<(f64, Rect)> {
        (0..=n_steps)
            .map(|i| {
                let t = (i as f64 * STEP_S).min(horizon_s);
                (t, ego_at(p.distance(t), k))
            })
            .collect()
    };
    let mut futures: Option<[Vec<(f64, Rect)>; 2]> = None;
    // How far the ego can get from where it is.
    let reach = braking
        .distance(horizon_s)
        .max(keeping_on.distance(horizon_s));
    let base = ego_rect();
    let ego_radius = base.radius_m() + base.cx.abs();
    let ego_frame = EgoFrame::of(frame);
    let mut out = [Outlook::CLEAR; 2];
    for o in &frame.obstacles {
        let m = ego_frame.mover(o);
        let speed = m.v_lon_mps.hypot(m.v_lat_mps);
        if !m.rect.cx.is_finite() || !m.rect.cy.is_finite() || !speed.is_finite() {
            continue;
        }
        // Nearer than this at some time only if the centres start close enough.
        let radii = base.radius_m() + m.rect.radius_m();
        let slack = ego_radius + m.rect.radius_m() + reach + speed * horizon_s + EXACT_BELOW_M;
        if m.rect.cx.hypot(m.rect.cy) > slack {
            continue;
        }
        let futures = futures.get_or_insert_with(|| [path(&braking), path(&keeping_on)]);
        for (future, best) in futures.iter().zip(out.iter_mut()) {
            for &(t, ego) in future {
                let other = Rect {
                    cx: m.rect.cx + m.v_lon_mps * t,
                    cy: m.rect.cy + m.v_lat_mps * t,
                    ..m.rect
                };
                // The circles around the footprints bound the gap from below: a sample that cannot beat
                // the best so far, or come within the exact range, costs no footprint gap.
                let bound = (other.cx - ego.cx).hypot(other.cy - ego.cy) - radii;
                if bound >= best.clearance_m.min(EXACT_BELOW_M) {
                    continue;
                }
                let gap = gap_m(&ego, &other);
                if gap < best.clearance_m {
                    *best = Outlook {
                        clearance_m: gap,
                        at_s: Some(t),
                        obstacle_id: Some(o.id),
                    };
                }
            }
        }
    }
    let [braking, keeping_on] = out;
    BrakeCheck {
        braking,
        keeping_on,
    }
}
