//! The conflict area of two crossing paths.
//!
//! The ego's path is the straight strip ahead of it (its width, along its heading); a road user's path is
//! the straight strip of its own width along its heading. When the headings differ by more than
//! [`MIN_CROSSING_RAD`] (and by less than π minus it), the strips cross in a parallelogram, the **conflict
//! area**. With the road user's centre at `(cx, cy)` in the ego frame, relative heading `r` and width `w`,
//! along the ego axis the area spans `x_c ± δ`, where `x_c = cx − cy·cos r / sin r` is where the road user's
//! centre line meets the ego axis and `δ = (|cos r|·w_ego/2 + w/2) / |sin r|`;
//! along the road user's axis it spans `s_c ± δ'` with `s_c = −cy / sin r` and
//! `δ' = (|cos r|·w/2 + w_ego/2) / |sin r|`. Each party enters when its front reaches the near edge and
//! leaves when its rear passes the far edge.
//!
//! Paths are straight: a road user turning now is predicted along its current heading (so is the ego, whose
//! route the frame does not carry).

use super::footprint::{Rect, EGO_FRONT_M, EGO_REAR_M, EGO_WIDTH_M};

/// Paths closer than this to parallel do not cross (following and oncoming traffic are longitudinal
/// conflicts, not crossings), rad (20°).
pub const MIN_CROSSING_RAD: f64 = 20.0 * std::f64::consts::PI / 180.0;

/// How far each party travels to enter and to leave the conflict area, m along its own heading (negative
/// once passed: an enter distance ≤ 0 means its front is in the area, a leave distance ≤ 0 that its rear
/// has left it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossing {
    /// The ego's front to the area.
    pub ego_enter_m: f64,
    /// Until the ego's rear has left the area.
    pub ego_leave_m: f64,
    /// The road user's front to the area.
    pub other_enter_m: f64,
    /// Until the road user's rear has left the area.
    pub other_leave_m: f64,
}

impl Crossing {
    /// True when neither party has left the area yet (the conflict is still ahead of or around both).
    pub fn open(&self) -> bool {
        self.ego_leave_m > 0.0 && self.other_leave_m > 0.0
    }
}

/// The conflict area of the ego's path and the path of `other` (a footprint in the ego frame, moving along
/// its own heading); `None` when the paths are within [`MIN_CROSSING_RAD`] of parallel.
pub fn crossing(other: &Rect) -> Option<Crossing> {
    let (c, s) = (other.cos, other.sin);
    if s.abs() < MIN_CROSSING_RAD.sin() {
        return None;
    }
    let half_ego = EGO_WIDTH_M / 2.0;
    // Where the road user's centre line meets the ego axis, in ego and in its own coordinates.
    let x_c = other.cx - other.cy * c / s;
    let s_c = -other.cy / s;
    let delta_ego = (c.abs() * half_ego + other.half_wid) / s.abs();
    let delta_other = (c.abs() * other.half_wid + half_ego) / s.abs();
    Some(Crossing {
        ego_enter_m: x_c - delta_ego - EGO_FRONT_M,
        ego_leave_m: x_c + delta_ego - EGO_REAR_M,
        other_enter_m: s_c - delta_other - other.half_len,
        other_leave_m: s_c + delta_other + other.half_len,
    })
}
