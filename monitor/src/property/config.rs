//! The options of the offline pipeline, shared by all properties of a model.

use laws::perception::RoadUserCorrection;
use serde::{Deserialize, Serialize};

use crate::av::{AvConfig, SmoothingScope};
use crate::error::ModelError;
use crate::estimate::LaplaceConfig;
use crate::pac::PacConfig;
use crate::table::MAX_HORIZON_STEPS;

/// Options of the offline pipeline, shared by all properties of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildConfig {
    /// Laplace smoothing.
    pub laplace: LaplaceConfig,
    /// PAC parameters.
    pub pac: PacConfig,
    /// Time between frames, s (converts horizons in seconds to steps).
    pub frame_period_s: f64,
    /// Largest plausible acceleration magnitude, m/s² (speed validity rule).
    pub max_accel_mps2: f64,
    /// Horizons of the bounded tables, in steps, strictly increasing.
    pub horizons_steps: Vec<u32>,
    /// Length of the laws' "violated within the window" predicates (`L.w`), frames.
    pub window_frames: usize,
    /// Which valid transitions receive the Laplace α.
    pub smoothing: SmoothingScope,
    /// How a row's smoothing mass is split between its outcomes (models learned before the choice
    /// existed are flat).
    #[serde(default)]
    pub prior: SmoothingPrior,
    /// How every frame's road users are read before any signal is computed, in learning and at run time
    /// alike: smoothed over their recent reports, then moved ahead by the logs' perception latency
    /// ([`laws::perception`]; the default: as logged). One value for the whole model, stored once in the
    /// model file (the latency from format 14, the smoothing from 15), not with each property.
    #[serde(skip)]
    pub road_users: RoadUserCorrection,
}

/// How smoothing splits a row's mass between the unsafe outcome and the safe finish (see
/// [`crate::estimate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SmoothingPrior {
    /// Evenly: Laplace smoothing as the paper writes it.
    #[default]
    Flat,
    /// By the risk of the state's parent: the state of the abstraction without the last predicate,
    /// itself learned hierarchically (the first predicate's parent is the unsafe predicate alone, learned
    /// flat). The predicates' order matters: learned abstractions list them in the order chosen, each
    /// refining the ones before.
    Hierarchical,
}

impl SmoothingPrior {
    /// The prior's name as `avguard info` prints it (`flat`, `hierarchical`).
    pub fn as_str(self) -> &'static str {
        match self {
            SmoothingPrior::Flat => "flat",
            SmoothingPrior::Hierarchical => "hierarchical",
        }
    }
}

impl Default for BuildConfig {
    /// α = 1, ε = δ = 0.05, 10 Hz, horizons 1, 2, 3 and 5 s, a 10 s violation window.
    fn default() -> Self {
        BuildConfig {
            laplace: LaplaceConfig::default(),
            pac: PacConfig::default(),
            frame_period_s: 0.1,
            max_accel_mps2: 10.0,
            horizons_steps: vec![10, 20, 30, 50],
            window_frames: 100,
            smoothing: SmoothingScope::Local,
            prior: SmoothingPrior::Flat,
            road_users: RoadUserCorrection::NONE,
        }
    }
}

/// The bounded tables' horizons of [`BuildConfig::default`] and [`BuildConfig::at_frame_period`], s.
pub const DEFAULT_HORIZONS_S: [f64; 4] = [1.0, 2.0, 3.0, 5.0];

/// The longest frame period a model may step at, s.
pub const MAX_FRAME_PERIOD_S: f64 = 10.0;

impl BuildConfig {
    /// The defaults for frames every `frame_period_s` seconds: the horizons [`DEFAULT_HORIZONS_S`] become
    /// steps at that rate.
    ///
    /// # Errors
    /// A period that is not a positive number of seconds up to [`MAX_FRAME_PERIOD_S`].
    pub fn at_frame_period(frame_period_s: f64) -> Result<BuildConfig, ModelError> {
        if !(frame_period_s > 0.0 && frame_period_s <= MAX_FRAME_PERIOD_S) {
            return Err(ModelError::Config(format!(
                "frame period {frame_period_s:?} s is not a positive number of seconds (at most \
                 {MAX_FRAME_PERIOD_S})"
            )));
        }
        Ok(BuildConfig {
            frame_period_s,
            horizons_steps: Self::steps_from_seconds(&DEFAULT_HORIZONS_S, frame_period_s)?,
            ..BuildConfig::default()
        })
    }

    /// Horizons in seconds → steps at the frame rate (rounded, deduplicated, sorted).
    ///
    /// # Errors
    /// A horizon that is not a positive finite number, or longer than [`MAX_HORIZON_STEPS`] steps.
    pub fn steps_from_seconds(
        horizons_s: &[f64],
        frame_period_s: f64,
    ) -> Result<Vec<u32>, ModelError> {
        let mut v = Vec::with_capacity(horizons_s.len());
        for &h in horizons_s {
            if !(h.is_finite() && h > 0.0) {
                return Err(ModelError::Config(format!("horizon {h} s is not positive")));
            }
            let steps = (h / frame_period_s).round();
            if steps.is_nan() || steps > f64::from(MAX_HORIZON_STEPS) {
                return Err(ModelError::Config(format!(
                    "horizon {h:?} s is {steps:?} steps of {frame_period_s:?} s; at most {MAX_HORIZON_STEPS} \
                     steps are solved"
                )));
            }
            v.push((steps as u32).max(1));
        }
        v.sort_unstable();
        v.dedup();
        Ok(v)
    }

    pub(super) fn av(&self) -> AvConfig {
        AvConfig {
            frame_period_s: self.frame_period_s,
            max_accel_mps2: self.max_accel_mps2,
            smoothing: self.smoothing,
        }
    }
}
