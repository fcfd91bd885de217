//! The scenario-file model: TOML in, validated [`Scenario`] out.
//!
//! A scenario file describes a *distribution* of runs: every numeric driver or traffic parameter is either
//! a number or a `[min, max]` range that each run samples uniformly. The file must carry a top-level
//! `[scenario]` table (so that a stray TOML file such as the crate's own `Cargo.toml` is rejected with a
//! clear error instead of being half-parsed).
//!
//! Validation happens once, here; the simulator relies on it (positive lengths, ordered ranges, a junction
//! when a light or stop sign is declared, and so on). The domain of every numeric field (finite, its sign,
//! a generous physical bound) is one table, in `domains`.

use serde::Deserialize;

/// A scenario file that could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The text is not TOML, or its tables do not match the scenario model.
    #[error("not a valid scenario file: {0}")]
    Toml(#[from] toml::de::Error),
    /// The text is longer than [`MAX_SCENARIO_BYTES`].
    #[error("a scenario file of more than {MAX_SCENARIO_BYTES} bytes is refused")]
    TooLarge,
    /// The file has no top-level `[scenario]` table.
    #[error("not a scenario file: it has no top-level [scenario] table")]
    NotAScenario,
    /// A value is out of its allowed range.
    #[error("invalid value for `{field}`: {problem}")]
    Invalid {
        /// Dotted path of the offending field.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
}

mod actors;
mod domains;
mod road_spec;
mod span;

pub use actors::{CrossSide, EgoSpec, LapseEffect, PedestrianSpec, VehicleRole, VehicleSpec};
pub use domains::MAX_VEHICLE_GROUPS;
pub use road_spec::{
    ControlSpec, CrosswalkSide, Header, JunctionSpec, LightSpec, RoadSpec, TurnSpec,
};
pub use span::Span;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileModel {
    scenario: Header,
    road: RoadSpec,
    #[serde(default)]
    light: Option<LightSpec>,
    #[serde(default)]
    ego: EgoSpec,
    #[serde(default)]
    vehicles: Vec<VehicleSpec>,
    #[serde(default)]
    pedestrians: Option<PedestrianSpec>,
}

/// A validated scenario file.
#[derive(Debug, Clone)]
pub struct Scenario {
    header: Header,
    road: RoadSpec,
    light: LightSpec,
    ego: EgoSpec,
    vehicles: Vec<VehicleSpec>,
    pedestrians: Option<PedestrianSpec>,
}

impl Scenario {
    /// Parses and validates a scenario file's text.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        if text.len() > MAX_SCENARIO_BYTES {
            return Err(ScenarioError::TooLarge);
        }
        let table: toml::Table = toml::from_str(text)?;
        if !table.contains_key("scenario") {
            return Err(ScenarioError::NotAScenario);
        }
        let model: FileModel = toml::from_str(text)?;
        let scenario = Scenario {
            header: model.scenario,
            road: model.road,
            light: model.light.unwrap_or_default(),
            ego: model.ego,
            vehicles: model.vehicles,
            pedestrians: model.pedestrians,
        };
        scenario.validate()?;
        Ok(scenario)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        // Every numeric field in its own domain first (finite, sign, a physical bound), then the checks
        // that relate fields to each other.
        domains::check(self)?;
        let h = &self.header;
        if h.duration_s / h.frame_period_s > MAX_FRAMES as f64 {
            return Err(ScenarioError::Invalid {
                field: "scenario.duration_s".to_owned(),
                problem: format!(
                    "{} s at {} s per frame is more than the limit of {MAX_FRAMES} frames per run",
                    h.duration_s, h.frame_period_s
                ),
            });
        }
        if h.name.trim().is_empty() {
            return invalid("scenario.name", "must not be empty");
        }
        // The name begins every log's file name (`NAME_0000.h5`): a plain file-name stem, so that no
        // name writes outside `--out` (`../x`, `/tmp/x`).
        if h.name.len() > 100
            || h.name.starts_with('.')
            || !h
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            return invalid(
                "scenario.name",
                "must be at most 100 ASCII letters, digits, '_', '-' or '.', not starting with '.' \
                 (it names the log files)",
            );
        }
        let r = &self.road;
        if !(1..=4).contains(&r.lanes) {
            return invalid("road.lanes", "must be 1..=4");
        }
        let mut last_s = 0.0;
        for [s, _] in &r.limit_changes {
            if *s <= last_s {
                return invalid(
                    "road.limit_changes",
                    "route positions must be positive and increasing",
                );
            }
            last_s = *s;
        }
        if let Some(j) = &r.junction {
            if j.crosswalk_side == CrosswalkSide::Exit && j.turn != TurnSpec::Straight {
                return invalid(
                    "road.junction.crosswalk_side",
                    "an exit crosswalk needs a straight route (turn = \"straight\")",
                );
            }
            if j.stop_line_gap_m >= r.approach_m / 2.0 {
                return invalid(
                    "road.junction.stop_line_gap_m",
                    "must be >= 0 and well inside the approach",
                );
            }
        }
        let control = r.junction.as_ref().map(|j| j.control);
        for v in &self.vehicles {
            let needs_junction = matches!(
                v.role,
                VehicleRole::Oncoming | VehicleRole::Cross | VehicleRole::Jam | VehicleRole::Queue
            );
            if needs_junction && control.is_none() {
                return invalid(
                    "vehicles.role",
                    "oncoming, cross, jam and queue vehicles need a junction",
                );
            }
            if v.side == CrossSide::Left && v.role != VehicleRole::Cross {
                return invalid("vehicles.side", "only cross traffic comes from a side");
            }
        }
        if self.pedestrians.is_some() {
            let has_crosswalk = r.junction.as_ref().is_some_and(|j| j.crosswalk);
            if !has_crosswalk {
                return invalid(
                    "pedestrians",
                    "pedestrians need `road.junction.crosswalk = true`",
                );
            }
        }
        if self.ego.start_s_m.hi() >= r.approach_m {
            return invalid("ego.start_s_m", "must lie on the approach");
        }
        Ok(())
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.header.name
    }
    /// What the file says it exercises.
    pub fn description(&self) -> &str {
        &self.header.description
    }
    /// Frame period, s.
    pub fn frame_period_s(&self) -> f64 {
        self.header.frame_period_s
    }
    /// Run length, s.
    pub fn duration_s(&self) -> f64 {
        self.header.duration_s
    }
    /// Law names this scenario is meant to stress.
    pub fn stresses(&self) -> &[String] {
        &self.header.stresses
    }
    /// Road geometry.
    pub fn road(&self) -> &RoadSpec {
        &self.road
    }
    /// Light timing (defaults when the file has no `[light]`).
    pub fn light(&self) -> &LightSpec {
        &self.light
    }
    /// Ego driver parameter ranges.
    pub fn ego(&self) -> &EgoSpec {
        &self.ego
    }
    /// NPC vehicle groups.
    pub fn vehicles(&self) -> &[VehicleSpec] {
        &self.vehicles
    }
    /// Pedestrians, if any.
    pub fn pedestrians(&self) -> Option<&PedestrianSpec> {
        self.pedestrians.as_ref()
    }
}

/// Longest scenario file, bytes (1 MiB, as a law text): the shipped ones are about 1 KiB. Read files with a
/// cap of one byte more, so that a device such as `/dev/zero` stops there.
pub const MAX_SCENARIO_BYTES: usize = 1 << 20;

/// Most frames one run may have (a day at 10 Hz is 864 000): a run's frames are held in memory.
pub const MAX_FRAMES: usize = 1_000_000;

fn invalid(field: &str, problem: &str) -> Result<(), ScenarioError> {
    Err(ScenarioError::Invalid {
        field: field.to_owned(),
        problem: problem.to_owned(),
    })
}

#[cfg(test)]
mod tests;
