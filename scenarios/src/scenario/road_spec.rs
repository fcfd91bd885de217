//! The road-side tables of a scenario file: `[scenario]`, `[road]`, `[road.junction]` and `[light]`.

use serde::Deserialize;

use super::Span;

/// The `[scenario]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Short name, used as the `scenario` attribute of logs.
    pub name: String,
    /// What the scenario exercises.
    #[serde(default)]
    pub description: String,
    /// Law names (LawBreaker catalogue, plus "no_collision") this scenario is meant to stress.
    #[serde(default)]
    pub stresses: Vec<String>,
    /// Run length, s.
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// Frame period, s.
    #[serde(default = "default_period")]
    pub frame_period_s: f64,
}

fn default_duration() -> f64 {
    60.0
}
fn default_period() -> f64 {
    0.1
}

/// Manoeuvre of the ego route at the junction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnSpec {
    /// Straight across.
    Straight,
    /// Left turn (unprotected: oncoming traffic has priority).
    Left,
    /// Right turn.
    Right,
}

/// What controls the junction for the ego.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlSpec {
    /// A traffic light with a stop line.
    Light,
    /// A stop sign with a stop line (all-way stop).
    StopSign,
    /// Nothing (priority by the rules only).
    None,
    /// A give-way sign on the ego's (minor) road: cross traffic on the priority road, from both sides,
    /// has right of way (`priority = 1`) and does not stop; the ego slows to look, accepts a gap or stops
    /// at the junction entry.
    Yield,
}

/// The `[road]` table: a straight approach, an optional junction, a straight exit.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoadSpec {
    /// Length of the approach before the junction entry (or of the whole first straight), m.
    pub approach_m: f64,
    /// Length of the straight after the junction, m.
    #[serde(default = "default_exit")]
    pub exit_m: f64,
    /// Lanes per direction.
    #[serde(default = "default_lanes")]
    pub lanes: i32,
    /// Speed limit at the start of the route, km/h.
    pub speed_limit_kph: f64,
    /// Later limit changes as `[route_s_m, kph]` pairs, in increasing `route_s_m`.
    #[serde(default)]
    pub limit_changes: Vec<[f64; 2]>,
    /// The junction, if any.
    pub junction: Option<JunctionSpec>,
}

fn default_exit() -> f64 {
    60.0
}
fn default_lanes() -> i32 {
    1
}

/// The `[road.junction]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JunctionSpec {
    /// Side of the square junction box, m.
    #[serde(default = "default_junction_size")]
    pub size_m: f64,
    /// Ego manoeuvre.
    #[serde(default = "default_turn")]
    pub turn: TurnSpec,
    /// Control for the ego approach.
    #[serde(default = "default_control")]
    pub control: ControlSpec,
    /// Gap between the stop line and the junction entry (or the crosswalk, when there is one), m.
    #[serde(default = "default_stop_gap")]
    pub stop_line_gap_m: f64,
    /// A 4 m wide crosswalk on the ego route at the junction.
    #[serde(default)]
    pub crosswalk: bool,
    /// Which side of the junction the crosswalk is on (`entry`, the default, or `exit`; `exit` needs a
    /// straight route).
    #[serde(default)]
    pub crosswalk_side: CrosswalkSide,
}

/// Where the crosswalk lies on the ego route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrosswalkSide {
    /// Just before the junction entry (before the stop line's reference).
    #[default]
    Entry,
    /// Just after the junction exit: the ego meets it while still inside the junction.
    Exit,
}

fn default_junction_size() -> f64 {
    20.0
}
fn default_turn() -> TurnSpec {
    TurnSpec::Straight
}
fn default_control() -> ControlSpec {
    ControlSpec::None
}
fn default_stop_gap() -> f64 {
    1.0
}

/// The `[light]` table: phase durations (LawBreaker's 15/5/15 s by default) and where the cycle starts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LightSpec {
    /// Green phase, s.
    #[serde(default = "default_green")]
    pub green_s: f64,
    /// Yellow phase, s.
    #[serde(default = "default_yellow")]
    pub yellow_s: f64,
    /// Red phase, s.
    #[serde(default = "default_red")]
    pub red_s: f64,
    /// Cycle clock at t = 0 (0 = start of green), s; sampled per run.
    #[serde(default = "default_offset")]
    pub cycle_offset_s: Span,
}

impl Default for LightSpec {
    fn default() -> Self {
        LightSpec {
            green_s: default_green(),
            yellow_s: default_yellow(),
            red_s: default_red(),
            cycle_offset_s: default_offset(),
        }
    }
}

fn default_green() -> f64 {
    15.0
}
fn default_yellow() -> f64 {
    5.0
}
fn default_red() -> f64 {
    15.0
}
fn default_offset() -> Span {
    Span::fixed(0.0)
}
