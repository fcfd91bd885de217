//! The scenario-file model: TOML in, validated [`Scenario`] out.
//!
//! A scenario file describes a *distribution* of runs: every numeric driver or traffic parameter is either
//! a number or a `[min, max]` range that each run samples uniformly. The file must carry a top-level
//! `[scenario]` table (so that a stray TOML file such as the crate's own `Cargo.toml` is rejected with a
//! clear error instead of being half-parsed).
//!
//! Validation happens once, here; the simulator relies on it (positive lengths, ordered ranges, a junction
//! when a light or stop sign is declared, and so on).

use serde::Deserialize;

/// A scenario file that could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The text is not TOML, or its tables do not match the scenario model.
    #[error("not a valid scenario file: {0}")]
    Toml(#[from] toml::de::Error),
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

/// A number or a `[min, max]` range sampled uniformly per run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "SpanRepr")]
pub struct Span {
    lo: f64,
    hi: f64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SpanRepr {
    One(f64),
    Two([f64; 2]),
}

impl TryFrom<SpanRepr> for Span {
    type Error = String;
    fn try_from(repr: SpanRepr) -> Result<Self, String> {
        let (lo, hi) = match repr {
            SpanRepr::One(v) => (v, v),
            SpanRepr::Two([lo, hi]) => (lo, hi),
        };
        if !(lo.is_finite() && hi.is_finite()) || lo > hi {
            return Err(format!("range [{lo}, {hi}] must be finite with min <= max"));
        }
        Ok(Span { lo, hi })
    }
}

impl Span {
    /// A fixed value.
    pub const fn fixed(v: f64) -> Span {
        Span { lo: v, hi: v }
    }
    /// A range; `lo <= hi` and both finite (checked by the deserializer; this constructor is for defaults).
    const fn range(lo: f64, hi: f64) -> Span {
        Span { lo, hi }
    }
    /// Lower bound.
    pub fn lo(&self) -> f64 {
        self.lo
    }
    /// Upper bound.
    pub fn hi(&self) -> f64 {
        self.hi
    }
    /// One uniform draw.
    pub(crate) fn sample(&self, rng: &mut impl rand::Rng) -> f64 {
        if self.hi > self.lo {
            rng.random_range(self.lo..=self.hi)
        } else {
            self.lo
        }
    }
}

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
    /// A 4 m wide crosswalk just before the junction entry.
    #[serde(default)]
    pub crosswalk: bool,
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

/// The `[ego]` table: the driver's parameter ranges (one draw per run).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EgoSpec {
    /// Route position of the rear axle at t = 0, m.
    pub start_s_m: Span,
    /// Initial speed, km/h.
    pub start_speed_kph: Span,
    /// Desired speed as a multiple of the speed limit.
    pub desired_speed_factor: Span,
    /// Probability of not noticing a speed-limit drop (keeps the old limit).
    pub ignore_limit_prob: Span,
    /// Desired time headway, s (IDM T).
    pub time_headway_s: Span,
    /// Standstill gap, m (IDM s0).
    pub min_gap_m: Span,
    /// Maximum acceleration, m/s² (IDM a).
    pub max_accel_mps2: Span,
    /// Comfortable deceleration, m/s² (IDM b).
    pub comfort_decel_mps2: Span,
    /// Reaction delay between perception and pedal, s.
    pub reaction_s: Span,
    /// Attention lapses per minute (Poisson rate).
    pub lapses_per_min: Span,
    /// Duration of one lapse, s.
    pub lapse_s: Span,
    /// At yellow: the largest deceleration the driver accepts to stop; above it they go.
    pub yellow_stop_decel_mps2: Span,
    /// Critical gap for unprotected left turns and stop-sign crossings, s (time to arrival of the conflicting
    /// vehicle).
    pub critical_gap_s: Span,
    /// Relative error of judged oncoming speeds (negative = underestimate).
    pub speed_judgement_error: Span,
    /// Probability of rolling through a stop sign instead of stopping fully.
    pub rolling_stop_prob: Span,
    /// Probability of entering a jammed junction instead of waiting before it.
    pub jam_ignore_prob: Span,
    /// Probability of not yielding to pedestrians who are not yet in the ego lane.
    pub ped_ignore_prob: Span,
    /// Comfortable lateral acceleration in turns, m/s².
    pub lateral_accel_mps2: Span,
}

impl Default for EgoSpec {
    fn default() -> Self {
        EgoSpec {
            start_s_m: Span::fixed(0.0),
            start_speed_kph: Span::range(30.0, 45.0),
            desired_speed_factor: Span::range(0.9, 1.05),
            ignore_limit_prob: Span::fixed(0.0),
            time_headway_s: Span::range(1.0, 1.8),
            min_gap_m: Span::range(1.5, 2.5),
            max_accel_mps2: Span::range(1.2, 2.0),
            comfort_decel_mps2: Span::range(2.0, 3.0),
            reaction_s: Span::range(0.6, 1.2),
            lapses_per_min: Span::range(0.0, 1.0),
            lapse_s: Span::range(0.5, 1.5),
            yellow_stop_decel_mps2: Span::range(2.5, 4.0),
            critical_gap_s: Span::range(4.5, 6.5),
            speed_judgement_error: Span::range(-0.1, 0.1),
            rolling_stop_prob: Span::fixed(0.0),
            jam_ignore_prob: Span::fixed(0.0),
            ped_ignore_prob: Span::fixed(0.0),
            lateral_accel_mps2: Span::range(1.8, 2.6),
        }
    }
}

/// Role of a group of NPC vehicles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VehicleRole {
    /// Drives ahead of the ego on its route (lawful IDM driver), optionally with a scripted braking event.
    Lead,
    /// Stands queued at the ego's stop line at t = 0 and departs on green.
    Queue,
    /// Oncoming traffic crossing the junction in the opposite lane; has priority over a left-turning ego.
    Oncoming,
    /// Cross traffic on the other road, northbound, stopping at its own stop line when the junction has a
    /// stop sign.
    Cross,
    /// Stationary cross traffic jammed inside the junction, released after a hold time.
    Jam,
}

/// One `[[vehicles]]` group.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VehicleSpec {
    /// Role.
    pub role: VehicleRole,
    /// How many (rounded draw).
    #[serde(default = "one")]
    pub count: Span,
    /// Desired speed, km/h.
    #[serde(default = "default_npc_speed")]
    pub speed_kph: Span,
    /// Lead: gap from the ego front bumper to the first vehicle's rear, m. Queue: gap between queued cars.
    /// Oncoming/cross: unused.
    #[serde(default = "default_gap")]
    pub gap_m: Span,
    /// Oncoming/cross: time the first vehicle needs to reach the junction centre, s.
    #[serde(default = "default_first")]
    pub first_arrival_s: Span,
    /// Oncoming/cross: time between successive vehicles, s.
    #[serde(default = "default_headway")]
    pub headway_s: Span,
    /// Lead: time of a braking event, s (none when absent).
    pub brake_at_s: Option<Span>,
    /// Lead: deceleration of the braking event, m/s².
    #[serde(default = "default_brake_decel")]
    pub brake_decel_mps2: Span,
    /// Lead: speed the braking event ends at, km/h.
    #[serde(default = "zero")]
    pub brake_to_kph: Span,
    /// Lead: how long the braked speed is held, s. Jam: hold time before the jam releases, s. Cross: wait at
    /// the stop sign, s.
    #[serde(default = "default_hold")]
    pub hold_s: Span,
}

fn one() -> Span {
    Span::fixed(1.0)
}
fn zero() -> Span {
    Span::fixed(0.0)
}
fn default_npc_speed() -> Span {
    Span::range(35.0, 45.0)
}
fn default_gap() -> Span {
    Span::range(20.0, 30.0)
}
fn default_first() -> Span {
    Span::range(5.0, 10.0)
}
fn default_headway() -> Span {
    Span::range(4.0, 8.0)
}
fn default_brake_decel() -> Span {
    Span::range(3.0, 6.0)
}
fn default_hold() -> Span {
    Span::range(2.0, 4.0)
}

/// The `[pedestrians]` table: people crossing the crosswalk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PedestrianSpec {
    /// How many (rounded draw).
    #[serde(default = "one")]
    pub count: Span,
    /// Time each one steps off the kerb, s.
    pub start_t_s: Span,
    /// Walking speed, m/s.
    #[serde(default = "default_walk")]
    pub speed_mps: Span,
}

fn default_walk() -> Span {
    Span::range(1.1, 1.6)
}

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
        let h = &self.header;
        positive("scenario.duration_s", h.duration_s)?;
        positive("scenario.frame_period_s", h.frame_period_s)?;
        if h.name.trim().is_empty() {
            return invalid("scenario.name", "must not be empty");
        }
        let r = &self.road;
        positive("road.approach_m", r.approach_m)?;
        positive("road.exit_m", r.exit_m)?;
        positive("road.speed_limit_kph", r.speed_limit_kph)?;
        if !(1..=4).contains(&r.lanes) {
            return invalid("road.lanes", "must be 1..=4");
        }
        let mut last_s = 0.0;
        for [s, kph] in &r.limit_changes {
            if !(*s > last_s && s.is_finite()) {
                return invalid("road.limit_changes", "route positions must be positive and increasing");
            }
            positive("road.limit_changes", *kph)?;
            last_s = *s;
        }
        if let Some(j) = &r.junction {
            if !(j.size_m >= 8.0 && j.size_m <= 60.0) {
                return invalid("road.junction.size_m", "must be within 8..=60 m");
            }
            if !(j.stop_line_gap_m >= 0.0 && j.stop_line_gap_m < r.approach_m / 2.0) {
                return invalid("road.junction.stop_line_gap_m", "must be >= 0 and well inside the approach");
            }
        }
        let l = &self.light;
        positive("light.green_s", l.green_s)?;
        positive("light.yellow_s", l.yellow_s)?;
        positive("light.red_s", l.red_s)?;
        let control = r.junction.as_ref().map(|j| j.control);
        for v in &self.vehicles {
            let needs_junction = matches!(
                v.role,
                VehicleRole::Oncoming | VehicleRole::Cross | VehicleRole::Jam | VehicleRole::Queue
            );
            if needs_junction && control.is_none() {
                return invalid("vehicles.role", "oncoming, cross, jam and queue vehicles need a junction");
            }
            if v.count.lo() < 0.0 || v.count.hi() > 12.0 {
                return invalid("vehicles.count", "must be within 0..=12");
            }
            if v.speed_kph.lo() <= 0.0 {
                return invalid("vehicles.speed_kph", "must be positive");
            }
        }
        if let Some(p) = &self.pedestrians {
            let has_crosswalk = r.junction.as_ref().is_some_and(|j| j.crosswalk);
            if !has_crosswalk {
                return invalid("pedestrians", "pedestrians need `road.junction.crosswalk = true`");
            }
            if p.speed_mps.lo() <= 0.0 {
                return invalid("pedestrians.speed_mps", "must be positive");
            }
        }
        let e = &self.ego;
        if e.start_s_m.hi() >= r.approach_m {
            return invalid("ego.start_s_m", "must lie on the approach");
        }
        for (name, span) in [
            ("ego.time_headway_s", e.time_headway_s),
            ("ego.max_accel_mps2", e.max_accel_mps2),
            ("ego.comfort_decel_mps2", e.comfort_decel_mps2),
            ("ego.yellow_stop_decel_mps2", e.yellow_stop_decel_mps2),
            ("ego.lateral_accel_mps2", e.lateral_accel_mps2),
            ("ego.desired_speed_factor", e.desired_speed_factor),
        ] {
            if span.lo() <= 0.0 {
                return invalid(name, "must be positive");
            }
        }
        for (name, span) in [
            ("ego.ignore_limit_prob", e.ignore_limit_prob),
            ("ego.rolling_stop_prob", e.rolling_stop_prob),
            ("ego.jam_ignore_prob", e.jam_ignore_prob),
            ("ego.ped_ignore_prob", e.ped_ignore_prob),
        ] {
            if span.lo() < 0.0 || span.hi() > 1.0 {
                return invalid(name, "a probability must be within 0..=1");
            }
        }
        if e.reaction_s.lo() < 0.0 || e.reaction_s.hi() > 3.0 {
            return invalid("ego.reaction_s", "must be within 0..=3 s");
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

fn positive(field: &str, v: f64) -> Result<(), ScenarioError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        invalid(field, "must be a positive number")
    }
}

fn invalid(field: &str, problem: &str) -> Result<(), ScenarioError> {
    Err(ScenarioError::Invalid { field: field.to_owned(), problem: problem.to_owned() })
}

#[cfg(test)]
mod tests;
