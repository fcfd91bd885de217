//! How late a log's road users are reported, read off its collisions.
//!
//! A log's `collision` flag is what the source saw happen: the ego touches another road user. When the
//! road users in the same frames come from a perception stack with latency, each stands where it was some
//! time earlier, behind itself along its path, and at the first collision frame the ego's footprint does
//! not yet touch any of them. Moving every road user ahead along its heading at its speed by the right lag
//! brings the contact back. So, over a set of runs, the lag at which the most first collision frames show
//! a contact is an estimate of the latency; on timely logs that is no lag at all.
//!
//! A contact is a footprint gap of at most [`CONTACT_TOLERANCE_M`], not an overlap: noisy positions, a
//! collision test with a small margin and an ego a little larger than ours all leave a logged collision
//! a few centimetres apart, and with several such differences together an exact test found too few
//! contacts at any lag to read a latency that was there (`docs/MEASUREMENTS.md`, session 37). The price
//! is a reading a few hundredths of a second early (the tolerance over the closing speed).
//!
//! Why it matters: every obstacle signal (closest approach, time to collision, the priority conflict)
//! then describes the road users as they were, and a model learned on them warns later (`avguard
//! perturb --perception-delay`; `docs/MEASUREMENTS.md`, session 36).
//!
//! [`contact_profile`] reads one run's first collision frame; [`estimate`] combines the runs.

use super::footprint::{ego_rect, gap_m};
use super::EgoFrame;
use crate::frame::Frame;

/// Lags tried per second: 0, 0.01, …, [`MAX_LAG_S`].
const LAGS_PER_S: f64 = 100.0;
/// How many lags are tried (0 included): one bit each in a [`ContactProfile`].
pub const N_LAGS: usize = 101;
/// The largest lag tried, s: a perception stack later than a second is not one a monitor can use.
pub const MAX_LAG_S: f64 = (N_LAGS - 1) as f64 / LAGS_PER_S;
/// The fewest collision runs an estimate is made from.
pub const MIN_RUNS: usize = 10;
/// The largest footprint gap that counts as a contact, m (see the module docs). On the sets of session 37
/// it read every late set as late (road users 0.1–0.5 s late, alone, with collision margins up to 0.3 m,
/// or with noise, misses, lost frames and a noisy ego together) and every timely one as timely (margins
/// up to 0.5 m, noisy or not); an exact test (0) missed four of those late sets.
pub const CONTACT_TOLERANCE_M: f64 = 0.25;

/// At which of the lags [`lag_s`]`(k)` (bit k) the ego's footprint touches some road user moved ahead by
/// that lag, at one frame.
pub type ContactProfile = u128;

/// The lag of bit `k`, s: `k / 100`, the double nearest the decimal, so that a lag printed with two
/// decimals and given back (`learn --perception-latency 0.57`) is the same number (`57 · 0.01` is not).
pub fn lag_s(k: usize) -> f64 {
    k as f64 / LAGS_PER_S
}

/// The contact profile of one frame (see the module docs): bit k is set when the ego's footprint comes
/// within [`CONTACT_TOLERANCE_M`] of a road user's moved `lag_s(k)` ahead along its heading at its speed
/// (or overlaps it). Road users with a speed or position that is not finite are passed over.
pub fn contact_profile(frame: &Frame) -> ContactProfile {
    let ego = EgoFrame::of(frame);
    let me = ego_rect();
    let mut profile: ContactProfile = 0;
    for o in &frame.obstacles {
        let m = ego.mover(o);
        if ![m.rect.cx, m.rect.cy, m.v_lon_mps, m.v_lat_mps]
            .iter()
            .all(|v| v.is_finite())
        {
            continue;
        }
        for k in 0..N_LAGS {
            let mut r = m.rect;
            r.cx += lag_s(k) * m.v_lon_mps;
            r.cy += lag_s(k) * m.v_lat_mps;
            if gap_m(&me, &r) <= CONTACT_TOLERANCE_M {
                profile |= 1 << k;
            }
        }
    }
    profile
}

/// Whether a frame's contact profile shows the ego touching a road user as logged (at lag 0).
pub fn touches_as_logged(profile: ContactProfile) -> bool {
    profile & 1 == 1
}

/// What the collisions of a set of runs say about the road users' latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyEstimate {
    /// The smallest lag at which the most first collision frames show a contact, s.
    pub lag_s: f64,
    /// Runs with a collision read.
    pub runs: usize,
    /// Of them, those whose first collision frame shows a contact as logged (no lag).
    pub contact_as_logged: usize,
    /// Of them, those whose first collision frame shows a contact at `lag_s`.
    pub contact_at_lag: usize,
}

impl LatencyEstimate {
    /// Whether the collisions clearly say the road users are late: a lag above 0 at which at least a fifth
    /// of the runs (and at least 3) more show a contact than as logged, and at which at least four in five
    /// of all the runs do — the lag explains the collisions, as no lag does on timely logs. A source whose
    /// collision test has a margin (a collision flagged within some distance, not at contact) also shows
    /// fewer contacts as logged, and moving road users ahead brings some of them back, but no one lag
    /// brings most: on the priority-road runs with a margin of 0.3, 0.5 and 1 m the best lags touched in
    /// 71, 64 and 56 % of them, against 90–100 % with road users 0.2 s late, noisy or missed or not
    /// (`docs/MEASUREMENTS.md`, session 36).
    pub fn road_users_late(&self) -> bool {
        self.lag_s > 0.0
            && self.contact_at_lag >= self.contact_as_logged + (self.runs.div_ceil(5)).max(3)
            && self.contact_at_lag * 5 >= self.runs * 4
    }

    /// Whether the collisions disagree with the logged positions in a way no latency explains: fewer than
    /// four in five first collision frames show a contact as logged, and the road users do not read as
    /// late. The source's collision test may then have a margin, its positions be noisy or its road users
    /// missed (several of these together, with or without a latency, also land here), or its footprints or
    /// reference points differ from this tool's ([`crate::frame::EGO_LENGTH_M`] and the rest; road users'
    /// positions their centres) — worth a word to whoever learns from such logs, since every distance
    /// signal assumes them.
    pub fn contacts_disagree(&self) -> bool {
        self.contact_as_logged * 5 < self.runs * 4 && !self.road_users_late()
    }
}

/// The estimate from the first-collision profiles of a set of runs (see the module docs); `None` with
/// fewer than [`MIN_RUNS`] of them.
pub fn estimate(profiles: &[ContactProfile]) -> Option<LatencyEstimate> {
    if profiles.len() < MIN_RUNS {
        return None;
    }
    let count = |k: usize| profiles.iter().filter(|&&p| p >> k & 1 == 1).count();
    // The first (smallest) lag with the highest count: ties keep the smaller lag, and no lag wins them.
    let (best_k, best) = (0..N_LAGS)
        .map(|k| (k, count(k)))
        .fold((0, 0), |acc, (k, c)| if c > acc.1 { (k, c) } else { acc });
    Some(LatencyEstimate {
        lag_s: lag_s(best_k),
        runs: profiles.len(),
        contact_as_logged: count(0),
        contact_at_lag: best,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Obstacle;

    /// The ego at the origin heading east at 10 m/s; one car crossing northward at `speed` whose centre
    /// is `x_m` ahead of the ego's reference point and `y_m` to its left.
    fn crossing(x_m: f64, y_m: f64, speed: f64) -> Frame {
        Frame {
            speed_mps: 10.0,
            collision: true,
            obstacles: vec![Obstacle::car(x_m, y_m, std::f64::consts::FRAC_PI_2, speed)],
            ..Frame::default()
        }
    }

    #[test]
    fn the_profile_marks_the_lags_at_which_a_crossing_car_touches_the_ego() {
        // The ego's footprint spans lon −1.0014 … 3.6986 m and lat −1.03 … 1.03 m. The car, centred at lon
        // 3 m and heading north, spans lon 2 … 4 m and lat y − 2 … y + 2 m (its 4 m length across the
        // ego's path), so it comes within the 0.25 m tolerance of the ego for a centre y from −3.28 to
        // 3.28 m. From y = −4 m at 10 m/s that is from a lag of 0.072 s to one of 0.728 s: lags 0.08 …
        // 0.72 (at 0.07 s the gap is 0.27 m, at 0.08 s 0.17 m).
        let p = contact_profile(&crossing(3.0, -4.0, 10.0));
        let lags: Vec<usize> = (0..N_LAGS).filter(|&k| p >> k & 1 == 1).collect();
        assert_eq!(lags.first(), Some(&8), "{lags:?}");
        assert_eq!(lags.last(), Some(&72), "{lags:?}");
        assert_eq!(lags.len(), 65);
        // Touching as logged: lag 0 is set.
        assert_eq!(contact_profile(&crossing(3.0, -2.0, 10.0)) & 1, 1);
        // A car standing still never moves into contact; 0.2 m away (within the tolerance) it counts.
        assert_eq!(contact_profile(&crossing(3.0, -4.0, 0.0)), 0);
        assert_eq!(
            contact_profile(&crossing(3.0, -3.23, 0.0)),
            ContactProfile::MAX >> (128 - N_LAGS)
        );
        assert_eq!(contact_profile(&crossing(3.0, -3.33, 0.0)), 0, "0.3 m away");
        // A car whose speed is not finite is passed over.
        assert_eq!(contact_profile(&crossing(3.0, -2.0, f64::NAN)), 0);
    }

    #[test]
    fn the_estimate_is_the_smallest_lag_most_collisions_agree_on() {
        // 12 runs whose first collision frames show a contact from a lag of 0.2 s on (to 0.6 s), and 3
        // that touch as logged.
        let late: ContactProfile = (20..=60).fold(0, |p, k| p | 1 << k);
        let mut profiles = vec![late; 12];
        profiles.extend([1, 1, 1]);
        let e = estimate(&profiles).unwrap();
        assert_eq!(e.runs, 15);
        assert!((e.lag_s - 0.2).abs() < 1e-12, "{e:?}");
        assert_eq!((e.contact_as_logged, e.contact_at_lag), (3, 12));
        assert!(e.road_users_late());
        // Timely logs: every run touches as logged; no lag beats that, so the estimate is 0.
        let timely = estimate(&[(0..=30).fold(0, |p, k| p | 1 << k); 10]).unwrap();
        assert_eq!(timely.lag_s, 0.0);
        assert!(!timely.road_users_late());
        // A few runs more at a lag than as logged is not a clear lag (a footprint that differs a little).
        let mut few = vec![1 | 1 << 5; 17];
        few.extend([1 << 5; 3]);
        let e = estimate(&few).unwrap();
        assert!((e.lag_s - 0.05).abs() < 1e-12);
        assert_eq!((e.contact_as_logged, e.contact_at_lag), (17, 20));
        assert!(!e.road_users_late(), "3 of 20 more is below a fifth");
        // A lag that explains fewer than four in five collisions is not a latency, however many more it
        // explains than no lag (a collision test with a margin): 11 of 15 here.
        let mut margin = vec![late; 11];
        margin.extend([0, 0, 0, 0]);
        let e = estimate(&margin).unwrap();
        assert_eq!((e.contact_as_logged, e.contact_at_lag), (0, 11));
        assert!(!e.road_users_late(), "11 of 15 is below four in five");
        let mut most = vec![late; 12];
        most.extend([0, 0, 0]);
        assert!(
            estimate(&most).unwrap().road_users_late(),
            "12 of 15 is four in five"
        );
        // Every lag reads back from its two decimals.
        for k in 0..N_LAGS {
            assert_eq!(format!("{:.2}", lag_s(k)).parse::<f64>(), Ok(lag_s(k)));
        }
        // Too few runs: no estimate.
        assert_eq!(estimate(&[late; MIN_RUNS - 1]), None);
        // Contacts that disagree with the positions: the margin-like set (11 of 15 at a lag, none as
        // logged) does; late and timely sets do not; 12 of 15 touching as logged is four in five.
        assert!(estimate(&margin).unwrap().contacts_disagree());
        assert!(!estimate(&most).unwrap().contacts_disagree());
        assert!(!timely.contacts_disagree());
        let mut as_logged = vec![1 as ContactProfile; 12];
        as_logged.extend([0, 0, 0]);
        assert!(!estimate(&as_logged).unwrap().contacts_disagree());
        as_logged[0] = 0;
        assert!(
            estimate(&as_logged).unwrap().contacts_disagree(),
            "11 of 15"
        );
    }

    #[test]
    fn a_frame_delayed_by_a_known_lag_is_estimated_at_that_lag() {
        // Twelve runs whose car first touches the ego somewhere within one frame's travel (1 m at 10 m/s)
        // of the first contact at y = −3.03 m, each reported 0.25 s late (2.5 m back along its path): the
        // run touching at the very edge needs the whole 0.25 s to touch, but comes within the 0.25 m
        // tolerance 0.025 s sooner, at 0.23 s in whole hundredths (the reading's price), and every run
        // touches from there on.
        let mut profiles = Vec::new();
        for i in 0..12 {
            let y_touch = -3.02 + 0.9 * f64::from(i) / 11.0;
            profiles.push(contact_profile(&crossing(3.0, y_touch - 0.25 * 10.0, 10.0)));
        }
        let e = estimate(&profiles).unwrap();
        assert!((e.lag_s - 0.23).abs() < 1e-12, "{e:?}");
        assert_eq!((e.contact_as_logged, e.contact_at_lag), (0, 12));
        assert!(e.road_users_late());
    }

    #[test]
    fn advancing_road_users_moves_each_along_its_heading_by_speed_times_lag() {
        let mut f = crossing(3.0, -4.0, 10.0);
        let mut east = Obstacle::car(10.0, 1.0, 0.0, 5.0);
        east.id = 2;
        let mut still = Obstacle::car(-5.0, 2.0, 2.0, 0.0);
        still.id = 3;
        let mut bad = Obstacle::car(7.0, 7.0, 1.0, f64::INFINITY);
        bad.id = 4;
        f.obstacles.extend([east, still, bad]);
        let before = f.clone();
        f.advance_road_users(0.25);
        let at: Vec<(f64, f64)> = f.obstacles.iter().map(|o| (o.x, o.y)).collect();
        // North at 10 m/s: 2.5 m north; east at 5 m/s: 1.25 m east; standing and non-finite: unmoved.
        let want = [(3.0, -1.5), (11.25, 1.0), (-5.0, 2.0), (7.0, 7.0)];
        for ((x, y), (wx, wy)) in at.iter().zip(want) {
            assert!((x - wx).abs() < 1e-12 && (y - wy).abs() < 1e-12, "{at:?}");
        }
        // Everything else as it was; no lag or a lag that is not finite changes nothing.
        let mut g = f.clone();
        g.obstacles = before.obstacles.clone();
        assert_eq!(g, before);
        for lag in [0.0, f64::NAN, f64::INFINITY] {
            let mut h = before.clone();
            h.advance_road_users(lag);
            assert_eq!(h, before);
        }
        // Advancing by the lag undoes a delay of it: the estimate on advanced frames is no lag.
        let mut late = crossing(3.0, -3.02 - 2.5, 10.0);
        assert_eq!(contact_profile(&late) & 1, 0);
        late.advance_road_users(0.25);
        assert_eq!(contact_profile(&late) & 1, 1);
    }
}
