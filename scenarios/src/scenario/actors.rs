//! The road-user tables of a scenario file: `[ego]` (driver parameter ranges), `[[vehicles]]` and
//! `[pedestrians]`.

use serde::Deserialize;

use super::Span;

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
    /// What a lapse does: `freeze` (the default: the pedal stays where it was and no decision is taken) or
    /// `inattentive` (the driver keeps following the road and the car ahead but does not attend to lights,
    /// signs, give-way rules, jams or crosswalks).
    pub lapse_effect: LapseEffect,
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
    /// Deceleration with which a driver who notices a jammed junction ahead brakes to a stop (or harder
    /// when the entry is closer), m/s².
    pub jam_stop_decel_mps2: Span,
    /// Probability of not yielding to pedestrians who are not yet in the ego lane.
    pub ped_ignore_prob: Span,
    /// Comfortable lateral acceleration in turns, m/s².
    pub lateral_accel_mps2: Span,
    /// Speed to which the driver slows on the approach to a give-way junction to look for a gap, km/h.
    pub give_way_approach_kph: Span,
    /// Standard deviation of the driver's pedal noise (a slowly varying error on the applied
    /// acceleration, applied while moving), m/s²; 0 for none.
    pub pedal_noise_mps2: Span,
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
            lapse_effect: LapseEffect::Freeze,
            yellow_stop_decel_mps2: Span::range(2.5, 4.0),
            critical_gap_s: Span::range(4.5, 6.5),
            speed_judgement_error: Span::range(-0.1, 0.1),
            rolling_stop_prob: Span::fixed(0.0),
            jam_ignore_prob: Span::fixed(0.0),
            jam_stop_decel_mps2: Span::range(2.5, 4.5),
            ped_ignore_prob: Span::fixed(0.0),
            lateral_accel_mps2: Span::range(1.8, 2.6),
            give_way_approach_kph: Span::fixed(20.0),
            pedal_noise_mps2: Span::fixed(0.0),
        }
    }
}

/// What an attention lapse does to the ego driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LapseEffect {
    /// The pedal stays where it was and no decision is taken.
    #[default]
    Freeze,
    /// Car following and speed keeping go on, the junction's control (light, sign, give-way rule, jam,
    /// crosswalk) is not attended to.
    Inattentive,
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
    /// Cross traffic on the other road (northbound from the ego's right, or southbound from its left with
    /// `side = "left"`), stopping at its own stop line when the junction has a stop sign or a light.
    Cross,
    /// A cross-traffic stream whose exit is blocked: the first vehicle stops `gap_m` past the junction box
    /// for `hold_s` and the followers queue back into the box, jamming it until the head drives on.
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
    /// Jam: how far past the junction box the head's front stops, m. Oncoming/cross: unused.
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
    /// Lead: how long the braked speed is held, s. Jam: how long the head stays blocked, s. Cross: wait at
    /// the stop sign, s.
    #[serde(default = "default_hold")]
    pub hold_s: Span,
    /// Cross: which side of the ego the stream comes from.
    #[serde(default)]
    pub side: CrossSide,
    /// Cross and jam: how long the driver takes to react to the ego entering their lane ahead, s (0: at
    /// once).
    #[serde(default = "zero")]
    pub reaction_s: Span,
}

/// The side a cross-traffic stream comes from, seen from the ego.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrossSide {
    /// From the right: northbound, the far lane for the ego.
    #[default]
    Right,
    /// From the left: southbound, the near lane for the ego.
    Left,
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
