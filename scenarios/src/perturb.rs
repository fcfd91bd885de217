//! Recorded runs made harder to read, the ways another source's logs may differ from the generator's:
//! road users seen late, only within a perception range or now and then missed, no right-of-way marks, no
//! map, noisy poses of the road users and of the ego, and frames lost.
//!
//! A model meant for another simulator's logs should not rest on what only this generator writes. Scoring
//! a model on perturbed copies of held-out runs (or learning and scoring on perturbed copies) shows how
//! much of its prediction survives each difference (`avguard perturb`; `docs/MEASUREMENTS.md`, sessions
//! 31–32).
//!
//! What each perturbation does, in this order:
//! 1. **Perception delay**: every frame's road users become those of the latest original frame at least
//!    `perception_delay_s` earlier (by the original, true frame times, within [`TIME_TOLERANCE_S`]);
//!    frames earlier than the first frame's time plus the delay have none. This is a perception stack
//!    with latency: the ego's own fields are not delayed. It runs first so that it reads the road users
//!    as they were, before any later step drops or moves them. With `perception_jitter_s` = J, the
//!    latency varies: each original frame's road users arrive after their own delay, drawn uniformly
//!    from [S − J, S + J], and a frame shows those of the latest original frame (by time) that has
//!    arrived by its time — as a stack that keeps the newest message it has, so what a frame shows is
//!    never older than what the frame before it showed, and is from S − J old to S + J old plus
//!    the time to the next frame (once some frame is S + J old).
//! 2. **Ego noise**: independent Gaussian noise on `x` and `y` (each with σ `position_m`), `heading`
//!    (wrapped to (−π, π]), `speed` (its absolute value kept, so it stays ≥ 0) and the longitudinal
//!    acceleration.
//! 3. **Perception range**: road users (delayed ones at their delayed positions) whose reference point is
//!    farther than the range from the ego's (true, unperturbed) reference point at the frame are dropped.
//! 4. **Misses**: each remaining road user is dropped with probability `miss_rate`, independently in
//!    every frame.
//! 5. **Right of way**: every road user's `priority` is cleared.
//! 6. **Road-user noise**: as the ego's, on each remaining road user's `x`, `y`, `heading` and `speed`.
//! 7. **No map**: the road fields become those of a source without a map ([`Frame::clear_road_fields`]).
//! 8. **Frame drops**: each frame is removed with probability `drop_rate`, independently, except the
//!    first and the last frame and every frame with `collision` or `destination` set, which are always
//!    kept. This is a source that loses messages: the kept frames keep their recorded times, so they have
//!    gaps of 2, 3, … frame periods (the log's `frame_period_s` stays what it was). It runs last, with
//!    its draws after all the others, so that the frames it keeps are perturbed exactly as they would be
//!    without it.
//!
//! Steps 2–7 work frame by frame; 1 and 8 on the run. The labels stay: `collision`, `destination` and the
//! frame times are what happened, and the frames that carry a label (and the run's first and last, its
//! time span) are never dropped, so a perturbed run violates what the original did. Noise is white
//! (drawn afresh every frame), the harder case for signals that difference a pose.
//!
//! Invariant: the perturbed run is a pure function of the run, the perturbation and the seed; every
//! random draw comes from one ChaCha8 stream per run: the delays' (with jitter), one per frame in frame
//! order, then steps 2–7's in frame order, then the drops' in frame order. A setting at 0 (or off) draws nothing, so the others' draws are as they would be without
//! it.

use laws::geometry::wrap_rad;
use laws::{Frame, Obstacle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// Noise on a pose: standard deviations, each ≥ 0 (0: none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoseNoise {
    /// On `x` and on `y`, m.
    pub position_m: f64,
    /// On the speed, m/s.
    pub speed_mps: f64,
    /// On the heading, rad.
    pub heading_rad: f64,
    /// On the longitudinal acceleration, m/s² (the ego's only: a road user has none in a log).
    pub accel_mps2: f64,
}

impl PoseNoise {
    /// True when every standard deviation is 0: no noise at all.
    pub fn is_none(&self) -> bool {
        self.position_m == 0.0
            && self.speed_mps == 0.0
            && self.heading_rad == 0.0
            && self.accel_mps2 == 0.0
    }

    fn values(&self) -> [(&'static str, f64); 4] {
        [
            ("position", self.position_m),
            ("speed", self.speed_mps),
            ("heading", self.heading_rad),
            ("acceleration", self.accel_mps2),
        ]
    }
}

/// How to perturb a run (see the module docs). `Default` changes nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Perturbation {
    /// Road users farther than this from the ego are dropped, m (`None`: all are seen).
    pub perception_range_m: Option<f64>,
    /// Probability that a road user is missed in a frame, 0–1.
    pub miss_rate: f64,
    /// Clear every road user's right-of-way mark.
    pub clear_priority: bool,
    /// Give every frame the road fields of a source without a map.
    pub no_map: bool,
    /// Noise on each road user's pose (`accel_mps2` must be 0).
    pub obstacle_noise: PoseNoise,
    /// Noise on the ego's pose and acceleration.
    pub ego_noise: PoseNoise,
    /// Probability that a frame is dropped, in [0, 1) (the first, the last and labelled frames never are).
    pub drop_rate: f64,
    /// How late road users are seen, s, 0–10 (0: as they are).
    pub perception_delay_s: f64,
    /// How much each frame's delay varies about `perception_delay_s`, s: uniform within ± this, at most
    /// the delay (0: every frame's road users exactly that late).
    pub perception_jitter_s: f64,
}

/// Slack in comparing frame times for the perception delay, s: times written as multiples of a period
/// such as 0.1 s are not exact in binary, and a delay of one period must reach exactly one frame back.
/// A microsecond covers Unix times too (f64's spacing near 1.7e9 s is about 2.4e-7 s, as in an Apollo
/// record's) and is far below any frame period.
pub const TIME_TOLERANCE_S: f64 = 1e-6;

/// The largest perception delay accepted, s: far beyond any perception stack's latency, so a larger value
/// is a slip (milliseconds for seconds), not an experiment.
pub const MAX_PERCEPTION_DELAY_S: f64 = 10.0;

/// A perturbation that cannot be applied, naming the setting and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PerturbError {
    /// A setting outside its range.
    #[error("{setting} must be {range}, not {value}")]
    OutOfRange {
        /// The setting, as the command line names it.
        setting: String,
        /// What it may be.
        range: &'static str,
        /// What it was.
        value: f64,
    },
}

impl Perturbation {
    /// Checks every setting: a range positive and finite, a miss rate in [0, 1], each standard deviation
    /// finite and ≥ 0, no acceleration noise for road users, a drop rate in [0, 1) (at 1 only the
    /// protected frames would be left, no experiment anyone means), a delay in [0, 10] s and a jitter
    /// between 0 and the delay (so no road user is seen before it was there).
    pub fn validate(&self) -> Result<(), PerturbError> {
        let out = |setting: &str, range, value| {
            Err(PerturbError::OutOfRange {
                setting: setting.to_owned(),
                range,
                value,
            })
        };
        if let Some(r) = self.perception_range_m {
            if !(r > 0.0 && r.is_finite()) {
                return out("the perception range", "positive and finite (m)", r);
            }
        }
        if !(0.0..=1.0).contains(&self.miss_rate) {
            return out("the miss rate", "between 0 and 1", self.miss_rate);
        }
        for (who, noise) in [
            ("road users'", &self.obstacle_noise),
            ("the ego's", &self.ego_noise),
        ] {
            for (what, sigma) in noise.values() {
                if !(sigma >= 0.0 && sigma.is_finite()) {
                    return out(
                        &format!("{who} {what} noise"),
                        "finite and at least 0",
                        sigma,
                    );
                }
            }
        }
        if self.obstacle_noise.accel_mps2 != 0.0 {
            return out(
                "road users' acceleration noise",
                "0 (a log holds no road-user acceleration)",
                self.obstacle_noise.accel_mps2,
            );
        }
        if !(0.0..1.0).contains(&self.drop_rate) {
            return out(
                "the frame drop rate",
                "at least 0 and below 1",
                self.drop_rate,
            );
        }
        if !(0.0..=MAX_PERCEPTION_DELAY_S).contains(&self.perception_delay_s) {
            return out(
                "the perception delay",
                "finite and between 0 and 10 (s)",
                self.perception_delay_s,
            );
        }
        if !(0.0..=self.perception_delay_s).contains(&self.perception_jitter_s) {
            return out(
                &format!(
                    "the perception delay's jitter (the delay is {} s)",
                    self.perception_delay_s
                ),
                "finite and between 0 and the delay (s)",
                self.perception_jitter_s,
            );
        }
        Ok(())
    }

    /// True when applying it changes nothing.
    pub fn is_identity(&self) -> bool {
        self.perception_range_m.is_none()
            && self.miss_rate == 0.0
            && !self.clear_priority
            && !self.no_map
            && self.obstacle_noise.is_none()
            && self.ego_noise.is_none()
            && self.drop_rate == 0.0
            && self.perception_delay_s == 0.0
    }

    /// The delay of each of `n` original frames' road users, s: the delay itself, or with a jitter one
    /// uniform draw per frame from `rng`, in frame order (none without a jitter).
    fn delays(&self, n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
        let (delay, jitter) = (self.perception_delay_s, self.perception_jitter_s);
        if jitter == 0.0 {
            return vec![delay; n];
        }
        (0..n)
            .map(|_| delay + jitter * (2.0 * rng.random::<f64>() - 1.0))
            .collect()
    }

    /// Perturbs one run's frames in place, drawing from a stream seeded with `seed`; the frames are in time
    /// order, as in a log. Takes the `Vec` because dropping frames shortens it. Call
    /// [`Perturbation::validate`] first: an invalid setting gives unspecified (but memory-safe) frames.
    pub fn apply(&self, frames: &mut Vec<Frame>, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        if self.perception_delay_s > 0.0 {
            let delays = self.delays(frames.len(), &mut rng);
            delay_road_users(frames, &delays);
        }
        for f in frames.iter_mut() {
            let (true_x, true_y) = (f.x, f.y);
            let ego = &self.ego_noise;
            if !ego.is_none() {
                f.x += gauss(&mut rng, ego.position_m);
                f.y += gauss(&mut rng, ego.position_m);
                f.heading = wrap_rad(f.heading + gauss(&mut rng, ego.heading_rad));
                f.speed_mps = (f.speed_mps + gauss(&mut rng, ego.speed_mps)).abs();
                f.accel_mps2 += gauss(&mut rng, ego.accel_mps2);
            }
            if let Some(range) = self.perception_range_m {
                f.obstacles
                    .retain(|o| (o.x - true_x).hypot(o.y - true_y) <= range);
            }
            if self.miss_rate > 0.0 {
                let rate = self.miss_rate;
                f.obstacles.retain(|_| rng.random::<f64>() >= rate);
            }
            let noise = &self.obstacle_noise;
            for o in &mut f.obstacles {
                if self.clear_priority {
                    o.priority = false;
                }
                if !noise.is_none() {
                    o.x += gauss(&mut rng, noise.position_m);
                    o.y += gauss(&mut rng, noise.position_m);
                    o.heading = wrap_rad(o.heading + gauss(&mut rng, noise.heading_rad));
                    o.speed_mps = (o.speed_mps + gauss(&mut rng, noise.speed_mps)).abs();
                }
            }
            if self.no_map {
                f.clear_road_fields();
            }
        }
        if self.drop_rate > 0.0 {
            let (rate, last) = (self.drop_rate, frames.len().saturating_sub(1));
            let mut k = 0;
            // A protected frame is kept before its draw, so only droppable frames draw, one each.
            frames.retain(|f| {
                let at = k;
                k += 1;
                at == 0 || at == last || f.collision || f.destination || rng.random::<f64>() >= rate
            });
        }
    }
}

/// Gives every frame the road users of the latest earlier (or the same) frame whose road users have
/// arrived by its time, or none when none has: original frame j's arrive `delays[j]` after its own
/// (original) time. A frame never reads a later frame's road users, even when a delay is below
/// [`TIME_TOLERANCE_S`].
fn delay_road_users(frames: &mut [Frame], delays: &[f64]) {
    let seen: Vec<(f64, Vec<Obstacle>)> = frames
        .iter_mut()
        .map(|f| (f.t, std::mem::take(&mut f.obstacles)))
        .collect();
    // Frames whose road users have not arrived yet, the earliest arrival on top; what a frame shows is
    // the latest of the arrived ones, so it never goes back to older road users.
    let mut pending = std::collections::BinaryHeap::new();
    let mut shown: Option<usize> = None;
    for (i, f) in frames.iter_mut().enumerate() {
        pending.push(Arrival(seen[i].0 + delays[i], i));
        while let Some(&Arrival(_, j)) = pending.peek() {
            if seen[j].0 > f.t - delays[j] + TIME_TOLERANCE_S {
                break;
            }
            pending.pop();
            shown = shown.max(Some(j));
        }
        if let Some(k) = shown {
            f.obstacles.clone_from(&seen[k].1);
        }
    }
}

/// A frame's road users' arrival time and the frame, ordered so that a [`std::collections::BinaryHeap`]
/// has the earliest arrival (then the earliest frame) on top.
#[derive(Debug, PartialEq)]
struct Arrival(f64, usize);

impl Eq for Arrival {}

impl PartialOrd for Arrival {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Arrival {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// One draw of N(0, σ²); no draw for σ = 0, so that a zero setting leaves the stream (and the other
/// settings' draws) as they would be without it.
fn gauss(rng: &mut ChaCha8Rng, sigma: f64) -> f64 {
    if sigma == 0.0 {
        0.0
    } else {
        sigma * rng.sample::<f64, _>(StandardNormal)
    }
}

#[cfg(test)]
mod tests;
