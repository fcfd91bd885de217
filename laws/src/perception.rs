//! How a model reads the road users of logs whose perception is not a simulator's ground truth.
//!
//! Two corrections, both applied to every frame before its signals, in learning and at run time alike
//! ([`RoadUserCorrection`], applied by a [`Corrector`]):
//! - **Smoothing.** A perception stack whose age varies from frame to frame — a latency that varies, or
//!   messages held and published at another rate than the frames — shows each road user where it was a
//!   different time ago in each frame: along its path it stands still for a frame (the same report again)
//!   and then jumps several periods ahead. Every distance signal inherits that jitter. The smoother
//!   replaces each road user's position by the mean, over its reports in the last `smoothing_s` seconds
//!   (this frame's included), of each report moved ahead at its own speed and heading to this frame's
//!   time: a road user reported at constant velocity stays where it is, and the report's age is averaged
//!   over the window ([`TrackSmoother`]). Noisy positions are averaged alike. A perception whose
//!   velocities are noisy (each report's own estimate, not a difference of positions) also has each road
//!   user's velocity replaced by the mean of the same reports' velocities
//!   ([`RoadUserCorrection::smooth_velocities`]); where velocities are exact that mean only lags a road
//!   user that brakes or turns, so it is applied only when asked for or read as needed.
//! - **Latency**: every road user moved ahead along its heading at its speed by a fixed lag
//!   ([`Frame::advance_road_users`]), read off the collisions by [`crate::geometry::latency`]; after the
//!   smoothing, whose mean age it then makes up.
//!
//! [`TrackSteps`] is what says whether a set of logs needs the smoothing: the share of a road user's steps
//! from one frame to the next that disagree with its reported speed by more than half. On simulated logs
//! (ground truth), with a constant latency, lost frames or noise of 0.05 m that share is 0–0.1 %; with
//! position noise of 0.2 m it is about 4 %; with a latency that varies by more than a period it is 50–75 %
//! (`docs/MEASUREMENTS.md`, session 38). [`VelocityFlips`] says whether the velocities need it too: the
//! share of a road user's consecutive pairs of steps whose velocity changes imply accelerations above
//! 2 m/s² in opposite directions, which no vehicle drives frame after frame. On the simulated logs,
//! timely or reported at varying ages, that share is 0–0.01 %; with velocity noise of 0.3 m/s and
//! 0.03 rad it is 65 % (session 39).

use std::collections::VecDeque;

use crate::frame::{Frame, Obstacle};
use crate::geometry::latency::{contact_profile, ContactProfile};

/// The smoothing window `learn` uses when the logs' road users read as jumping ([`TrackSteps::jumpy`]), s:
/// at 10 Hz, a road user's last eight reports. On the priority-road and residential runs with road users
/// 0.3 ± 0.2 s late, windows of five, eight and twelve frames took the models' median lead at ≤ 40 % false
/// alarms from 1.82 s to 2.03, 2.09 and 2.08 s, and from 2.22 s to 2.41 s at eight frames on the
/// residential runs (`docs/MEASUREMENTS.md`, session 38).
pub const SMOOTHING_S: f64 = 0.7;
/// The longest smoothing window a model may carry, s: constant velocity over more than that misplaces a
/// road user that brakes or turns.
pub const MAX_SMOOTHING_S: f64 = 2.0;
/// The most past frames the smoother reads (a window at a high frame rate is cut to them), so that its
/// memory and time per frame are bounded whatever the frame times.
pub const MAX_SMOOTHED_FRAMES: usize = 64;
/// Frame times within this of a window's edge count as inside it, s (float sums of a period are not exact).
const TIME_TOLERANCE_S: f64 = 1e-6;

/// How a model reads every frame's road users: smoothed over their recent reports, then moved ahead by a
/// latency. The default reads them as logged.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RoadUserCorrection {
    /// The smoothing window, s (0: none; see [`TrackSmoother`]).
    pub smoothing_s: f64,
    /// How late the logs report road users, s (0: as logged; see [`Frame::advance_road_users`]).
    pub latency_s: f64,
    /// Whether the smoothing also replaces each road user's velocity by the mean of its reports' (only
    /// with a smoothing window).
    pub smooth_velocities: bool,
}

impl RoadUserCorrection {
    /// Road users as logged.
    pub const NONE: RoadUserCorrection = RoadUserCorrection {
        smoothing_s: 0.0,
        latency_s: 0.0,
        smooth_velocities: false,
    };

    /// Whether frames are read as logged.
    pub fn is_none(&self) -> bool {
        self.smoothing_s == 0.0 && self.latency_s == 0.0
    }

    /// Why this cannot be a model's correction (a smoothing window outside 0 … [`MAX_SMOOTHING_S`], a
    /// latency outside 0 … [`crate::geometry::latency::MAX_LAG_S`], either not a number, or velocities
    /// smoothed without a window); `None` when it can.
    pub fn out_of_range(&self) -> Option<String> {
        let max_lag = crate::geometry::latency::MAX_LAG_S;
        if !(0.0..=max_lag).contains(&self.latency_s) {
            return Some(format!(
                "perception latency {} s is not between 0 and {max_lag} s",
                self.latency_s
            ));
        }
        if !(0.0..=MAX_SMOOTHING_S).contains(&self.smoothing_s) {
            return Some(format!(
                "road-user smoothing window {} s is not between 0 and {MAX_SMOOTHING_S} s",
                self.smoothing_s
            ));
        }
        if self.smooth_velocities && self.smoothing_s == 0.0 {
            return Some("road-user velocities smoothed without a smoothing window".to_string());
        }
        None
    }
}

/// One road user's report, as the smoother keeps it: its track id, position and velocity, and its index
/// in its frame.
#[derive(Debug, Clone, Copy)]
struct Report {
    id: i32,
    index: usize,
    x: f64,
    y: f64,
    vx: f64,
    vy: f64,
}

impl Report {
    /// The report of `o`, road user `index` of its frame; `None` when its position, speed or heading is
    /// not finite (such a road user is neither smoothed nor kept).
    fn of(index: usize, o: &Obstacle) -> Option<Report> {
        let [vx, vy] = velocity(o);
        let r = Report {
            id: o.id,
            index,
            x: o.x,
            y: o.y,
            vx,
            vy,
        };
        [r.x, r.y, r.vx, r.vy]
            .iter()
            .all(|v| v.is_finite())
            .then_some(r)
    }
}

/// The velocity of `o`, m/s (east, north), from its speed and heading.
fn velocity(o: &Obstacle) -> [f64; 2] {
    let (sin, cos) = o.heading.sin_cos();
    [o.speed_mps * cos, o.speed_mps * sin]
}

/// A past frame's reports, sorted by id.
#[derive(Debug, Clone, Default)]
struct PastFrame {
    t: f64,
    reports: Vec<Report>,
}

/// Smooths each road user's position (and, when asked, its velocity) over its reports in the last
/// `window_s` seconds of a run (see the module docs). One per run: [`TrackSmoother::reset`] between
/// runs, and a frame whose time is not after the one before starts afresh. Buffers are reused, so it
/// does not allocate once it has seen a run's largest frame; it reads at most [`MAX_SMOOTHED_FRAMES`]
/// past frames.
#[derive(Debug, Clone, Default)]
pub struct TrackSmoother {
    window_s: f64,
    velocities: bool,
    past: VecDeque<PastFrame>,
    spare: Vec<Vec<Report>>,
    last_t: Option<f64>,
}

impl TrackSmoother {
    /// A smoother of positions over `window_s` seconds (0 or less, or not finite: none, frames left as
    /// they are).
    pub fn new(window_s: f64) -> TrackSmoother {
        TrackSmoother {
            window_s,
            ..TrackSmoother::default()
        }
    }

    /// The same smoother that also smooths velocities when `velocities`.
    pub fn with_velocities(self, velocities: bool) -> TrackSmoother {
        TrackSmoother { velocities, ..self }
    }

    /// Forgets the run.
    pub fn reset(&mut self) {
        while self.retire_oldest() {}
        self.last_t = None;
    }

    /// Drops the oldest past frame, its buffer kept for reuse; false when there is none.
    fn retire_oldest(&mut self) -> bool {
        let Some(mut f) = self.past.pop_front() else {
            return false;
        };
        f.reports.clear();
        self.spare.push(f.reports);
        true
    }

    /// Replaces each road user's position in `frame` by the mean of its reports in the window moved
    /// ahead to the frame's time (its own report included; reports matched by track id, the first of an id
    /// in each past frame). Headings and speeds are kept, unless the smoother smooths velocities: then
    /// each road user's velocity is the mean of the same reports' (below [`STILL_MPS`] its heading is
    /// kept). A road user whose position, speed or heading is not finite is left as it is; a frame whose
    /// time is not finite is left as it is and starts afresh.
    pub fn smooth(&mut self, frame: &mut Frame) {
        if !(self.window_s > 0.0 && self.window_s.is_finite()) {
            return;
        }
        let t = frame.t;
        if !t.is_finite() || self.last_t.is_some_and(|last| t <= last) {
            self.reset();
            if !t.is_finite() {
                return;
            }
        }
        while let Some(front) = self.past.front() {
            let too_old = t - front.t > self.window_s + TIME_TOLERANCE_S;
            if !(too_old || self.past.len() > MAX_SMOOTHED_FRAMES) {
                break;
            }
            self.retire_oldest();
        }
        // This frame's reports in frame order, each with its road user's index (one heading's sine and
        // cosine per road user); sorted by id after the smoothing, for the frames after.
        let mut reports = self.spare.pop().unwrap_or_default();
        reports.extend(
            frame
                .obstacles
                .iter()
                .enumerate()
                .filter_map(|(i, o)| Report::of(i, o)),
        );
        for own in &reports {
            let (mut sx, mut sy, mut n) = (own.x, own.y, 1.0);
            let (mut svx, mut svy) = (own.vx, own.vy);
            for past in &self.past {
                let i = past.reports.partition_point(|r| r.id < own.id);
                if let Some(r) = past.reports.get(i).filter(|r| r.id == own.id) {
                    let age = t - past.t;
                    sx += r.x + r.vx * age;
                    sy += r.y + r.vy * age;
                    svx += r.vx;
                    svy += r.vy;
                    n += 1.0;
                }
            }
            if let Some(o) = frame.obstacles.get_mut(own.index) {
                o.x = sx / n;
                o.y = sy / n;
                if self.velocities {
                    (o.speed_mps, o.heading) = mean_velocity(svx / n, svy / n, o.heading);
                }
            }
        }
        reports.sort_by_key(|r| r.id);
        self.past.push_back(PastFrame { t, reports });
        self.last_t = Some(t);
    }
}

/// Below this mean speed a road user whose velocity is smoothed keeps its own heading, m/s: velocities
/// that cancel leave a direction that means nothing.
pub const STILL_MPS: f64 = 1e-6;

/// The speed and heading of the velocity (`vx`, `vy`); below [`STILL_MPS`] the heading is `heading`.
fn mean_velocity(vx: f64, vy: f64, heading: f64) -> (f64, f64) {
    let speed = vx.hypot(vy);
    if speed >= STILL_MPS {
        (speed, vy.atan2(vx))
    } else {
        (speed, heading)
    }
}

/// Applies a [`RoadUserCorrection`] to a run's frames, one after another: smoothing, then the latency.
/// One per run ([`Corrector::reset`] between runs); buffers are reused.
#[derive(Debug, Clone, Default)]
pub struct Corrector {
    correction: RoadUserCorrection,
    smoother: TrackSmoother,
    out: Frame,
}

impl Corrector {
    /// A corrector for `correction`.
    pub fn new(correction: RoadUserCorrection) -> Corrector {
        Corrector {
            correction,
            smoother: TrackSmoother::new(correction.smoothing_s)
                .with_velocities(correction.smooth_velocities),
            out: Frame::default(),
        }
    }

    /// The correction applied.
    pub fn correction(&self) -> RoadUserCorrection {
        self.correction
    }

    /// The next frame of the run as the model reads it: `frame` itself when the correction is none, else
    /// a corrected copy held here (until the next call).
    pub fn view<'a>(&'a mut self, frame: &'a Frame) -> &'a Frame {
        if self.correction.is_none() {
            return frame;
        }
        self.out.clone_from(frame);
        self.smoother.smooth(&mut self.out);
        self.out.advance_road_users(self.correction.latency_s);
        &self.out
    }

    /// The frame [`Corrector::view`] gave last, given the frame it was given (returned as it is when the
    /// correction is none).
    pub fn last_view<'a>(&'a self, frame: &'a Frame) -> &'a Frame {
        if self.correction.is_none() {
            frame
        } else {
            &self.out
        }
    }

    /// Forgets the run.
    pub fn reset(&mut self) {
        self.smoother.reset();
    }
}

/// The slowest speed at which a road user's step is compared with its speed, m/s (at walking pace a
/// step of a tenth of a second is centimetres, below any position noise).
pub const STEP_MIN_SPEED_MPS: f64 = 2.0;
/// The fewest compared steps for [`TrackSteps::jumpy`] (or pairs of steps for [`VelocityFlips::noisy`])
/// to say yes.
pub const MIN_STEPS: u64 = 200;

/// How a set of runs' road users move from frame to frame against their reported speeds (see the module
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrackSteps {
    /// Steps compared: a road user in two consecutive frames (matched by id), moving at least
    /// [`STEP_MIN_SPEED_MPS`] in both.
    pub steps: u64,
    /// Of them, those whose step along the first frame's heading differs from the mean speed × the time
    /// between the frames by more than half of that.
    pub jumps: u64,
}

impl TrackSteps {
    /// The steps of one run's frames.
    pub fn of_run(frames: &[Frame]) -> TrackSteps {
        let mut out = TrackSteps::default();
        for_each_frame_matched(frames, |dt, pairs| {
            for (p, o) in pairs {
                if let Some(jump) = step_jumps(p, o, dt) {
                    out.steps += 1;
                    out.jumps += u64::from(jump);
                }
            }
        });
        out
    }

    /// The share of the steps that jump (0 with none).
    pub fn share(&self) -> f64 {
        share_of(self.jumps, self.steps)
    }

    /// Whether the road users jump against their speeds: at least [`MIN_STEPS`] steps, of which at least
    /// one in ten jump — a perception whose age varies (50–75 % on the sets of session 38), not ground
    /// truth (0 %). Noisy positions jump more the shorter the steps: 0.2 m of noise is 4 % of the steps
    /// at 10 Hz but 27 % at 20 Hz (session 40), where they are smoothed too. The steps alone do not tell
    /// the two apart, so `learn` names both.
    pub fn jumpy(&self) -> bool {
        one_in_ten(self.jumps, self.steps)
    }
}

impl std::ops::AddAssign for TrackSteps {
    fn add_assign(&mut self, other: TrackSteps) {
        self.steps += other.steps;
        self.jumps += other.jumps;
    }
}

/// Whether a road user's step from `a` to `b`, `dt` apart, jumps against its speed; `None` when it is not
/// compared (slower than [`STEP_MIN_SPEED_MPS`] in either frame, or not finite).
fn step_jumps(a: &Obstacle, b: &Obstacle, dt: f64) -> Option<bool> {
    let compared = |o: &Obstacle| o.speed_mps.is_finite() && o.speed_mps >= STEP_MIN_SPEED_MPS;
    if !(compared(a) && compared(b)) {
        return None;
    }
    let (sin, cos) = a.heading.sin_cos();
    let along = (b.x - a.x) * cos + (b.y - a.y) * sin;
    let expected = 0.5 * (a.speed_mps + b.speed_mps) * dt;
    along
        .is_finite()
        .then(|| (along - expected).abs() > 0.5 * expected)
}

/// Hands `on_frame`, for every frame of a run, the time since the frame before and each of its road users
/// matched by id with its report in the frame before, as (before, now) pairs sorted by id (the first
/// report of an id in each frame is its road user); the pairs are empty when the frame's time is not after
/// the one before (or either is not finite).
fn for_each_frame_matched<'a>(
    frames: &'a [Frame],
    mut on_frame: impl FnMut(f64, &[(&'a Obstacle, &'a Obstacle)]),
) {
    let mut prev: Vec<&Obstacle> = Vec::new();
    let mut cur: Vec<&Obstacle> = Vec::new();
    let mut pairs: Vec<(&Obstacle, &Obstacle)> = Vec::new();
    let mut prev_t = f64::NAN;
    for f in frames {
        cur.clear();
        cur.extend(f.obstacles.iter());
        // Stable: the first report of an id stays first, and is the one kept.
        cur.sort_by_key(|o| o.id);
        cur.dedup_by_key(|o| o.id);
        pairs.clear();
        let dt = f.t - prev_t;
        if dt > 0.0 && dt.is_finite() {
            pairs.extend(cur.iter().filter_map(|&o| {
                let i = prev.partition_point(|p| p.id < o.id);
                prev.get(i).filter(|p| p.id == o.id).map(|&p| (p, o))
            }));
        }
        on_frame(dt, &pairs);
        std::mem::swap(&mut prev, &mut cur);
        prev_t = f.t;
    }
}

/// The least acceleration, m/s², that a road user's velocity change from one frame to the next must
/// imply for [`VelocityFlips`] to count a turn of it (a vehicle brakes at up to about 8 m/s², but does not
/// turn its acceleration around from one tenth of a second to the next).
pub const FLIP_MIN_ACCEL_MPS2: f64 = 2.0;

/// How a set of runs' road users' reported velocities change from frame to frame (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VelocityFlips {
    /// Pairs compared: a road user in three consecutive frames (matched by id, frame times increasing),
    /// its velocity finite in all three.
    pub pairs: u64,
    /// Of them, those whose two velocity changes each imply an acceleration of at least
    /// [`FLIP_MIN_ACCEL_MPS2`], in opposite directions (a negative dot product).
    pub flips: u64,
}

impl VelocityFlips {
    /// The flips of one run's frames.
    pub fn of_run(frames: &[Frame]) -> VelocityFlips {
        let velocity = |o: &Obstacle| Some(velocity(o)).filter(|v| v.iter().all(|c| c.is_finite()));
        let mut out = VelocityFlips::default();
        // Each road user's acceleration from the frame before into the last frame, sorted by id.
        let mut before: Vec<(i32, [f64; 2])> = Vec::new();
        let mut now: Vec<(i32, [f64; 2])> = Vec::new();
        for_each_frame_matched(frames, |dt, pairs| {
            now.clear();
            for (p, o) in pairs {
                let (Some(a), Some(b)) = (velocity(p), velocity(o)) else {
                    continue;
                };
                let accel = [(b[0] - a[0]) / dt, (b[1] - a[1]) / dt];
                let i = before.partition_point(|r| r.0 < o.id);
                if let Some(&(_, earlier)) = before.get(i).filter(|r| r.0 == o.id) {
                    out.pairs += 1;
                    out.flips += u64::from(turns_around(earlier, accel));
                }
                now.push((o.id, accel));
            }
            std::mem::swap(&mut before, &mut now);
        });
        out
    }

    /// The share of the pairs that flip (0 with none).
    pub fn share(&self) -> f64 {
        share_of(self.flips, self.pairs)
    }

    /// Whether the road users' velocities are noisy: at least [`MIN_STEPS`] pairs, of which at least one
    /// in ten flip (65 % at 0.3 m/s and 0.03 rad of noise, at most 0.01 % on the simulated logs, timely or
    /// reported at varying ages; session 39).
    pub fn noisy(&self) -> bool {
        one_in_ten(self.flips, self.pairs)
    }
}

/// `hits` of `compared` as a share (0 with none compared).
fn share_of(hits: u64, compared: u64) -> f64 {
    if compared == 0 {
        0.0
    } else {
        hits as f64 / compared as f64
    }
}

/// Whether at least [`MIN_STEPS`] were compared and at least one in ten of them hit.
fn one_in_ten(hits: u64, compared: u64) -> bool {
    compared >= MIN_STEPS && hits.saturating_mul(10) >= compared
}

impl std::ops::AddAssign for VelocityFlips {
    fn add_assign(&mut self, other: VelocityFlips) {
        self.pairs += other.pairs;
        self.flips += other.flips;
    }
}

/// Whether the accelerations `a` then `b` are both at least [`FLIP_MIN_ACCEL_MPS2`] and opposed.
fn turns_around(a: [f64; 2], b: [f64; 2]) -> bool {
    let strong = |v: [f64; 2]| v[0].hypot(v[1]) >= FLIP_MIN_ACCEL_MPS2;
    strong(a) && strong(b) && a[0] * b[0] + a[1] * b[1] < 0.0
}

/// What one run says about how to read its road users: its [`TrackSteps`] and [`VelocityFlips`], and the
/// contact profile of its first collision frame ([`crate::geometry::latency`]) as logged and as smoothed
/// over a window, positions alone and with velocities.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunReading {
    /// The run's steps.
    pub steps: TrackSteps,
    /// The run's velocity flips.
    pub flips: VelocityFlips,
    /// The first collision frame's contact profile as logged; `None` without a collision.
    pub contact: Option<ContactProfile>,
    /// The same with the run's road users' positions smoothed over `smoothing_s` ([`RunReading::of`]).
    pub contact_smoothed: Option<ContactProfile>,
    /// The same with their velocities smoothed too.
    pub contact_smoothed_velocities: Option<ContactProfile>,
}

impl RunReading {
    /// Reads `frames`, smoothing over `smoothing_s` for [`RunReading::contact_smoothed`] and
    /// [`RunReading::contact_smoothed_velocities`] (the frames up to the first collision; the same as
    /// `contact` when `smoothing_s` is 0).
    pub fn of(frames: &[Frame], smoothing_s: f64) -> RunReading {
        let first = frames.iter().position(|f| f.collision);
        let contact = first.map(|i| contact_profile(&frames[i]));
        // Without a window the smoothed frames are the logged ones.
        let (contact_smoothed, contact_smoothed_velocities) = match first {
            Some(i) if smoothing_s > 0.0 => {
                // One pass smooths velocities too; the smoothed positions do not depend on it (each
                // report moves ahead at its own velocity), so the logged speeds and headings put back
                // give the positions-only frame.
                let mut smoother = TrackSmoother::new(smoothing_s).with_velocities(true);
                let mut both = Frame::default();
                for f in &frames[..=i] {
                    both.clone_from(f);
                    smoother.smooth(&mut both);
                }
                let with_velocities = contact_profile(&both);
                for (o, logged) in both.obstacles.iter_mut().zip(&frames[i].obstacles) {
                    (o.speed_mps, o.heading) = (logged.speed_mps, logged.heading);
                }
                (Some(contact_profile(&both)), Some(with_velocities))
            }
            _ => (contact, contact),
        };
        RunReading {
            steps: TrackSteps::of_run(frames),
            flips: VelocityFlips::of_run(frames),
            contact,
            contact_smoothed,
            contact_smoothed_velocities,
        }
    }
}

/// What a set of runs says about how to read their road users: their steps and velocity flips, and the
/// contact profiles of their first collision frames as logged and smoothed ([`RunReading`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoadUserReading {
    /// The runs' steps together.
    pub steps: TrackSteps,
    /// The runs' velocity flips together.
    pub flips: VelocityFlips,
    /// The first collision frames' contact profiles as logged, one per run with a collision.
    pub contacts: Vec<ContactProfile>,
    /// The same with positions smoothed, one per run with a collision.
    pub contacts_smoothed: Vec<ContactProfile>,
    /// The same with velocities smoothed too, one per run with a collision.
    pub contacts_smoothed_velocities: Vec<ContactProfile>,
}

impl RoadUserReading {
    /// Adds one run's reading.
    pub fn add(&mut self, run: &RunReading) {
        self.steps += run.steps;
        self.flips += run.flips;
        self.contacts.extend(run.contact);
        self.contacts_smoothed.extend(run.contact_smoothed);
        self.contacts_smoothed_velocities
            .extend(run.contact_smoothed_velocities);
    }

    /// The contact profiles as `correction` reads them (its smoothing; the latency is not applied).
    pub fn contacts_as(&self, correction: &RoadUserCorrection) -> &[ContactProfile] {
        if correction.smoothing_s == 0.0 {
            &self.contacts
        } else if correction.smooth_velocities {
            &self.contacts_smoothed_velocities
        } else {
            &self.contacts_smoothed
        }
    }
}

#[cfg(test)]
mod tests;
