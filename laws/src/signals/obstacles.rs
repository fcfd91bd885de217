//! Obstacle-derived signals (`NPCAhead`, `NearestNPC`, `NPCOpposite`, the priority flags) and the geometry
//! behind them.
//!
//! Footprints and the ego frame (`lon` forward, `lat` to the left) are those of [`crate::geometry`].
//!
//! - **Ahead in lane** (`NPCAhead`): a vehicle or bicycle whose centre is in front of the ego's front
//!   bumper and within a lateral corridor `|lat| <= 1.75 m + its half width`. The value is the
//!   bumper-to-bumper gap (≥ 0) up to 200 m (LawBreaker's wedge length); +inf beyond or when none.
//! - **Forward wedge**: from the middle of the front bumper, opening 45° to each side (LawBreaker's "head
//!   wedge"): a point is inside when `lon' >= 0` and `|lat| <= half ego width + lon'`, `lon'` measured from
//!   the front bumper. An obstacle counts when its centre is inside.
//! - `NearestNPC`: the smallest footprint-to-footprint gap to any vehicle or bicycle.
//! - `NPCOpposite`: vehicles in the wedge within 30 m whose heading differs from the ego's by 3π/4..5π/4.
//! - `PriorityNPCAhead`: a vehicle flagged `priority` in the wedge within 30 m, or (as in LawBreaker) the
//!   vehicle ahead within 3 m.
//! - `PriorityPedsAhead`: a pedestrian flagged `priority` in the wedge within 10 m, or any pedestrian in the
//!   wedge within 3 m (LawBreaker's "going straight" rule).

use crate::frame::{obstacle_type, Frame, Obstacle};
use crate::geometry::{ego_rect, gap_m, wrap_rad, Mover, Rect, EGO_FRONT_M, EGO_WIDTH_M};

const LANE_HALF_WIDTH_M: f64 = 1.75;
const AHEAD_RANGE_M: f64 = 200.0;
const OPPOSITE_RANGE_M: f64 = 30.0;
const PRIORITY_NPC_RANGE_M: f64 = 30.0;
const PRIORITY_PED_RANGE_M: f64 = 10.0;
const CLOSE_RANGE_M: f64 = 3.0;

/// The obstacle-derived signals of one frame (distances +inf and speeds 0 when there is no such NPC).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObstacleSignals {
    /// Gap to the vehicle ahead in the ego corridor, m.
    pub npc_ahead_m: f64,
    /// Its speed, m/s.
    pub npc_ahead_speed_mps: f64,
    /// Closing speed on it (ego speed minus its speed along the ego heading), m/s.
    pub npc_ahead_closing_mps: f64,
    /// Gap / closing speed, s; +inf when not closing.
    pub npc_ahead_ttc_s: f64,
    /// Gap to the nearest vehicle, m.
    pub nearest_npc_m: f64,
    /// Its speed, m/s.
    pub nearest_npc_speed_mps: f64,
    /// Gap to the nearest oncoming vehicle in the wedge, m.
    pub npc_opposite_m: f64,
    /// Its speed, m/s.
    pub npc_opposite_speed_mps: f64,
    /// A vehicle with right of way is ahead.
    pub priority_npc_ahead: bool,
    /// A pedestrian with right of way is ahead.
    pub priority_peds_ahead: bool,
}

fn in_wedge(lon_m: f64, lat_m: f64) -> bool {
    let from_front = lon_m - EGO_FRONT_M;
    from_front >= 0.0 && lat_m.abs() <= EGO_WIDTH_M / 2.0 + from_front
}

/// Which groups of obstacle signals a caller reads; the others are left at their "no such NPC" values and
/// their geometry is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObstacleNeeds {
    /// `NPCAhead` and its speed, closing speed and time to collision.
    pub ahead: bool,
    /// `NearestNPC` and its speed.
    pub nearest: bool,
    /// `NPCOpposite` and its speed.
    pub opposite: bool,
    /// `PriorityNPCAhead` (also reads the vehicle ahead: within 3 m counts).
    pub priority_npc: bool,
    /// `PriorityPedsAhead`.
    pub priority_peds: bool,
}

impl ObstacleNeeds {
    /// Every obstacle signal.
    pub const ALL: ObstacleNeeds = ObstacleNeeds {
        ahead: true,
        nearest: true,
        opposite: true,
        priority_npc: true,
        priority_peds: true,
    };

    /// True when no obstacle signal is needed (the obstacle loop is skipped).
    pub fn is_none(&self) -> bool {
        !(self.ahead || self.nearest || self.opposite || self.priority_npc || self.priority_peds)
    }
}

/// An obstacle's heading relative to the ego, wrapped, with its cosine and sine (computed only for the
/// obstacles some needed signal could use: the trigonometry is the expensive part of an obstacle).
#[derive(Debug, Clone, Copy)]
struct RelHeading {
    rad: f64,
    cos: f64,
    sin: f64,
}

impl RelHeading {
    fn new(o: &Obstacle, ego_heading: f64) -> RelHeading {
        let rad = wrap_rad(o.heading - ego_heading);
        let (sin, cos) = rad.sin_cos();
        RelHeading { rad, cos, sin }
    }
}

impl ObstacleSignals {
    /// No obstacle: distances +inf, speeds +inf, no priority.
    pub const NONE: ObstacleSignals = ObstacleSignals {
        npc_ahead_m: f64::INFINITY,
        // No vehicle: +inf, so that "the vehicle ahead is slow" is false (see `Signal::NpcAheadSpeed`).
        npc_ahead_speed_mps: f64::INFINITY,
        npc_ahead_closing_mps: 0.0,
        npc_ahead_ttc_s: f64::INFINITY,
        nearest_npc_m: f64::INFINITY,
        nearest_npc_speed_mps: f64::INFINITY,
        npc_opposite_m: f64::INFINITY,
        npc_opposite_speed_mps: f64::INFINITY,
        priority_npc_ahead: false,
        priority_peds_ahead: false,
    };

    /// Computes the obstacle signals of a frame.
    pub fn from_frame(f: &Frame) -> ObstacleSignals {
        Self::from_frame_needed(f, ObstacleNeeds::ALL)
    }

    /// Computes the obstacle signals of a frame that `needs` asks for; the others keep their
    /// [`ObstacleSignals::NONE`] values. The needed ones are exactly those of [`ObstacleSignals::from_frame`].
    ///
    /// Per obstacle, positions are rotated into the ego frame with the ego heading's cosine and sine taken
    /// once per frame; an obstacle that a cheap bound (centre distance minus circumradii, no trigonometry)
    /// shows cannot change any needed signal is rejected before its relative heading is computed.
    pub fn from_frame_needed(f: &Frame, needs: ObstacleNeeds) -> ObstacleSignals {
        Self::from_frame_with(f, None, needs)
    }

    /// The same, taking each road user's footprint and relative heading from `movers` (`movers[i]` is
    /// `EgoFrame::of(f).mover(&f.obstacles[i])`, the same numbers this computes) instead of computing them.
    pub(crate) fn from_movers(
        f: &Frame,
        movers: &[Mover],
        needs: ObstacleNeeds,
    ) -> ObstacleSignals {
        Self::from_frame_with(f, Some(movers), needs)
    }

    fn from_frame_with(
        f: &Frame,
        movers: Option<&[Mover]>,
        needs: ObstacleNeeds,
    ) -> ObstacleSignals {
        let mut out = ObstacleSignals::NONE;
        if needs.is_none() {
            return out;
        }
        let need_ahead = needs.ahead || needs.priority_npc;
        let ego = ego_rect();
        let ego_radius_m = ego.radius_m();
        let (sin_h, cos_h) = f.heading.sin_cos();
        for (i, o) in f.obstacles.iter().enumerate() {
            // ego_from_map: translate to the reference point, rotate by −heading.
            let (dx, dy) = (o.x - f.x, o.y - f.y);
            let lon_m = dx * cos_h + dy * sin_h;
            let lat_m = -dx * sin_h + dy * cos_h;
            let (half_len, half_wid) = (o.length / 2.0, o.width / 2.0);
            let radius_m = (half_len * half_len + half_wid * half_wid).sqrt();
            let wedge = in_wedge(lon_m, lat_m);
            // A lower bound of the exact footprint gap (see `gap_lower_bound_m`).
            let (dlon, dlat) = (lon_m - ego.cx, lat_m - ego.cy);
            let lower_m = (dlon * dlon + dlat * dlat).sqrt() - ego_radius_m - radius_m - 1e-6;
            let mut rel: Option<RelHeading> = None;
            let shared = movers.and_then(|m| m.get(i));
            let rect_of = |rel: &mut Option<RelHeading>| {
                let r = *rel.get_or_insert_with(|| match shared {
                    Some(m) => RelHeading {
                        rad: m.rel_heading_rad,
                        cos: m.rect.cos,
                        sin: m.rect.sin,
                    },
                    None => RelHeading::new(o, f.heading),
                });
                (
                    Rect {
                        cx: lon_m,
                        cy: lat_m,
                        cos: r.cos,
                        sin: r.sin,
                        half_len,
                        half_wid,
                    },
                    r,
                )
            };
            if is_vehicle(o) {
                // The exact gap is needed only where some signal could use it: for the nearest vehicle, for
                // vehicles in the wedge within the opposite/priority ranges. Elsewhere the lower bound proves
                // it would change nothing.
                // In the wedge the gap matters for `NPCOpposite` and, for a priority vehicle, for
                // `PriorityNPCAhead` until that is already known to be true.
                let wedge_use =
                    needs.opposite || (needs.priority_npc && o.priority && !out.priority_npc_ahead);
                let gap_needed = (needs.nearest && lower_m < out.nearest_npc_m)
                    || (wedge_use
                        && wedge
                        && lower_m <= OPPOSITE_RANGE_M.max(PRIORITY_NPC_RANGE_M));
                // Ahead in lane: the bumper gap is at least the centre's distance minus the circumradius.
                let ahead_candidate = need_ahead
                    && lon_m > EGO_FRONT_M
                    && lat_m.abs() <= LANE_HALF_WIDTH_M + o.width / 2.0
                    && {
                        let ahead_lower_m = lon_m - radius_m - EGO_FRONT_M - 1e-6;
                        ahead_lower_m <= AHEAD_RANGE_M && ahead_lower_m < out.npc_ahead_m
                    };
                if !(gap_needed || ahead_candidate) {
                    continue;
                }
                let (rect, r) = rect_of(&mut rel);
                let gap = if gap_needed {
                    gap_m(&ego, &rect)
                } else {
                    f64::INFINITY
                };
                out.consider_vehicle(f, o, &rect, gap, wedge, r.rad, r.cos, needs);
            } else if needs.priority_peds
                && o.kind == obstacle_type::PEDESTRIAN
                && wedge
                && lower_m <= PRIORITY_PED_RANGE_M.max(CLOSE_RANGE_M)
            {
                let (rect, _) = rect_of(&mut rel);
                let gap = gap_m(&ego, &rect);
                if (o.priority && gap <= PRIORITY_PED_RANGE_M) || gap <= CLOSE_RANGE_M {
                    out.priority_peds_ahead = true;
                }
            }
        }
        if needs.priority_npc && out.npc_ahead_m <= CLOSE_RANGE_M {
            out.priority_npc_ahead = true;
        }
        if !needs.ahead {
            out.npc_ahead_m = f64::INFINITY;
            out.npc_ahead_speed_mps = f64::INFINITY;
            out.npc_ahead_closing_mps = 0.0;
            out.npc_ahead_ttc_s = f64::INFINITY;
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn consider_vehicle(
        &mut self,
        f: &Frame,
        o: &Obstacle,
        rect: &Rect,
        gap: f64,
        wedge: bool,
        rel_rad: f64,
        rel_cos: f64,
        needs: ObstacleNeeds,
    ) {
        if needs.nearest && gap < self.nearest_npc_m {
            self.nearest_npc_m = gap;
            self.nearest_npc_speed_mps = o.speed_mps;
        }
        let in_corridor = rect.cy.abs() <= LANE_HALF_WIDTH_M + o.width / 2.0;
        if (needs.ahead || needs.priority_npc) && rect.cx > EGO_FRONT_M && in_corridor {
            // Bumper-to-bumper gap along the ego axis.
            let ahead_gap = (rect.cx - rect.half_extent_on(1.0, 0.0) - EGO_FRONT_M).max(0.0);
            if ahead_gap <= AHEAD_RANGE_M && ahead_gap < self.npc_ahead_m {
                self.npc_ahead_m = ahead_gap;
                self.npc_ahead_speed_mps = o.speed_mps;
                self.npc_ahead_closing_mps = f.speed_mps - o.speed_mps * rel_cos;
                self.npc_ahead_ttc_s = if self.npc_ahead_closing_mps > 0.0 {
                    ahead_gap / self.npc_ahead_closing_mps
                } else {
                    f64::INFINITY
                };
            }
        }
        if wedge {
            let oncoming = rel_rad.abs() >= 0.75 * std::f64::consts::PI;
            if needs.opposite && oncoming && gap <= OPPOSITE_RANGE_M && gap < self.npc_opposite_m {
                self.npc_opposite_m = gap;
                self.npc_opposite_speed_mps = o.speed_mps;
            }
            if needs.priority_npc && o.priority && gap <= PRIORITY_NPC_RANGE_M {
                self.priority_npc_ahead = true;
            }
        }
    }
}

fn is_vehicle(o: &Obstacle) -> bool {
    o.kind == obstacle_type::VEHICLE || o.kind == obstacle_type::BICYCLE
}

#[cfg(test)]
mod tests;
