//! Recorded runs made harder to read, the ways another source's logs may differ from the generator's:
//! road users seen only within a perception range or now and then missed, no right-of-way marks, no
//! map, and noisy poses of the road users and of the ego.
//!
//! A model meant for another simulator's logs should not rest on what only this generator writes. Scoring
//! a model on perturbed copies of held-out runs (or learning and scoring on perturbed copies) shows how
//! much of its prediction survives each difference (`avguard perturb`; `docs/MEASUREMENTS.md`, sessions
//! 31–32).
//!
//! What each perturbation does to a frame, in this order:
//! 1. **Ego noise**: independent Gaussian noise on `x` and `y` (each with σ `position_m`), `heading`
//!    (wrapped to (−π, π]), `speed` (its absolute value kept, so it stays ≥ 0) and the longitudinal
//!    acceleration.
//! 2. **Perception range**: road users whose reference point is farther than the range from the ego's
//!    (true, unperturbed) reference point are dropped.
//! 3. **Misses**: each remaining road user is dropped with probability `miss_rate`, independently in
//!    every frame.
//! 4. **Right of way**: every road user's `priority` is cleared.
//! 5. **Road-user noise**: as the ego's, on each remaining road user's `x`, `y`, `heading` and `speed`.
//! 6. **No map**: the road fields become those of a source without a map ([`Frame::clear_road_fields`]).
//!
//! The labels stay: `collision`, `destination` and the frame times are what happened, so a perturbed run
//! violates what the original did. Noise is white (drawn afresh every frame), the harder case for
//! signals that difference a pose.
//!
//! Invariant: the perturbed run is a pure function of the run, the perturbation and the seed; every
//! random draw comes from one ChaCha8 stream per run, in frame order.

use laws::geometry::wrap_rad;
use laws::Frame;
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
}

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
    /// finite and ≥ 0, and no acceleration noise for road users.
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
    }

    /// Perturbs one run's frames in place, drawing from a stream seeded with `seed`. Call
    /// [`Perturbation::validate`] first: an invalid setting gives unspecified (but memory-safe) frames.
    pub fn apply(&self, frames: &mut [Frame], seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for f in frames {
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
