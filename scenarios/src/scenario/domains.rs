//! The domain of every numeric field of a scenario file, in one table.
//!
//! Each field is finite (the TOML reader refuses `nan` and `inf` in a range, this module everywhere else),
//! of the right sign and below a generous physical bound: speeds at most 200 km/h, accelerations and
//! decelerations 0.1 to 15 m/s², lengths at most 10 km, times of day at most a day, light phases 0.1 s to an
//! hour. The bounds are wide enough for any scenario a road could carry and narrow enough that no run can
//! grow memory or arithmetic without bound (a billion pedestrians, a speed of 10^308 km/h). Counts are
//! bounded so that a frame's road users stay far below the log reader's limit and vehicle ids (from 1) stay
//! below the pedestrians' (from 100): at most [`MAX_VEHICLE_GROUPS`] groups of at most 12 vehicles, and at
//! most 50 pedestrians.
//!
//! Checks that relate two fields (a range's order, the start on the approach, the frame count) are made by
//! the caller, [`super::Scenario`]'s validation, after these.

use super::{RoadSpec, Scenario, ScenarioError, Span};
use crate::log::{MAX_FRAME_PERIOD_S, MIN_FRAME_PERIOD_S};

/// Most `[[vehicles]]` groups a file may declare: 8 × 12 vehicles keep every vehicle id below 100, where
/// pedestrian ids start.
pub const MAX_VEHICLE_GROUPS: usize = 8;

/// Fastest speed a scenario may give anyone, km/h.
const MAX_KPH: f64 = 200.0;
/// Longest length, m.
const MAX_M: f64 = 10_000.0;
/// Latest time or longest duration of an event, s (a day).
const MAX_TIME_S: f64 = 86_400.0;
/// Accelerations and decelerations, m/s²: a car's brakes give about 10.
const MIN_ACCEL: f64 = 0.1;
const MAX_ACCEL: f64 = 15.0;

/// An interval of allowed values, with its unit for the message.
#[derive(Clone, Copy)]
struct Domain {
    lo: f64,
    /// The lower bound itself is excluded (a positive value).
    lo_open: bool,
    hi: f64,
    unit: &'static str,
}

/// `lo..=hi`.
const fn within(lo: f64, hi: f64, unit: &'static str) -> Domain {
    Domain {
        lo,
        lo_open: false,
        hi,
        unit,
    }
}

/// `(0, hi]`: positive (and finite, for `hi` infinite: a bound checked elsewhere).
const fn positive(hi: f64, unit: &'static str) -> Domain {
    Domain {
        lo: 0.0,
        lo_open: true,
        hi,
        unit,
    }
}

const SPEED: Domain = within(0.0, MAX_KPH, "km/h");
const MOVING: Domain = positive(MAX_KPH, "km/h");
const ACCEL: Domain = within(MIN_ACCEL, MAX_ACCEL, "m/s²");
const LENGTH: Domain = within(0.0, MAX_M, "m");
const TIME: Domain = within(0.0, MAX_TIME_S, "s");
const PROBABILITY: Domain = within(0.0, 1.0, "");

impl Domain {
    fn holds(&self, v: f64) -> bool {
        v.is_finite() && (v > self.lo || (!self.lo_open && v == self.lo)) && v <= self.hi
    }

    fn check(&self, field: &str, lo: f64, hi: f64) -> Result<(), ScenarioError> {
        if self.holds(lo) && self.holds(hi) {
            return Ok(());
        }
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let problem = if self.hi == f64::INFINITY {
            "must be a positive number".to_owned()
        } else if self.lo_open {
            format!("must be a positive number up to {}{unit}", self.hi)
        } else {
            format!("must be within {}..={}{unit}", self.lo, self.hi)
        };
        Err(ScenarioError::Invalid {
            field: field.to_owned(),
            problem,
        })
    }

    fn number(&self, field: &str, v: f64) -> Result<(), ScenarioError> {
        self.check(field, v, v)
    }

    fn span(&self, field: &str, s: Span) -> Result<(), ScenarioError> {
        self.check(field, s.lo(), s.hi())
    }
}

/// Checks every numeric field of `s` against its domain; the error names the first field out of it.
pub(super) fn check(s: &Scenario) -> Result<(), ScenarioError> {
    // `[scenario]`: the frame period is one a log may declare; the duration is bounded by the caller's
    // check of the run's frame count.
    within(MIN_FRAME_PERIOD_S, MAX_FRAME_PERIOD_S, "s")
        .number("scenario.frame_period_s", s.header.frame_period_s)?;
    positive(f64::INFINITY, "s").number("scenario.duration_s", s.header.duration_s)?;
    road(&s.road)?;
    let l = &s.light;
    let phase = within(0.1, 3600.0, "s");
    phase.number("light.green_s", l.green_s)?;
    phase.number("light.yellow_s", l.yellow_s)?;
    phase.number("light.red_s", l.red_s)?;
    TIME.span("light.cycle_offset_s", l.cycle_offset_s)?;

    let e = &s.ego;
    for (name, domain, span) in [
        ("ego.start_s_m", LENGTH, e.start_s_m),
        ("ego.start_speed_kph", SPEED, e.start_speed_kph),
        (
            "ego.desired_speed_factor",
            positive(3.0, "× the limit"),
            e.desired_speed_factor,
        ),
        ("ego.ignore_limit_prob", PROBABILITY, e.ignore_limit_prob),
        ("ego.time_headway_s", positive(10.0, "s"), e.time_headway_s),
        ("ego.min_gap_m", within(0.0, 50.0, "m"), e.min_gap_m),
        ("ego.max_accel_mps2", ACCEL, e.max_accel_mps2),
        ("ego.comfort_decel_mps2", ACCEL, e.comfort_decel_mps2),
        ("ego.reaction_s", within(0.0, 3.0, "s"), e.reaction_s),
        (
            "ego.lapses_per_min",
            within(0.0, 60.0, "per minute"),
            e.lapses_per_min,
        ),
        ("ego.lapse_s", within(0.0, 60.0, "s"), e.lapse_s),
        (
            "ego.yellow_stop_decel_mps2",
            ACCEL,
            e.yellow_stop_decel_mps2,
        ),
        (
            "ego.critical_gap_s",
            within(0.0, 60.0, "s"),
            e.critical_gap_s,
        ),
        (
            "ego.speed_judgement_error",
            within(-1.0, 1.0, ""),
            e.speed_judgement_error,
        ),
        ("ego.rolling_stop_prob", PROBABILITY, e.rolling_stop_prob),
        ("ego.jam_ignore_prob", PROBABILITY, e.jam_ignore_prob),
        ("ego.jam_stop_decel_mps2", ACCEL, e.jam_stop_decel_mps2),
        ("ego.ped_ignore_prob", PROBABILITY, e.ped_ignore_prob),
        ("ego.lateral_accel_mps2", ACCEL, e.lateral_accel_mps2),
        ("ego.give_way_approach_kph", MOVING, e.give_way_approach_kph),
        (
            "ego.pedal_noise_mps2",
            within(0.0, 2.0, "m/s²"),
            e.pedal_noise_mps2,
        ),
    ] {
        domain.span(name, span)?;
    }

    if s.vehicles.len() > MAX_VEHICLE_GROUPS {
        return Err(ScenarioError::Invalid {
            field: "vehicles".to_owned(),
            problem: format!(
                "{} groups are more than the limit of {MAX_VEHICLE_GROUPS}",
                s.vehicles.len()
            ),
        });
    }
    for v in &s.vehicles {
        let mut spans = vec![
            ("vehicles.count", within(0.0, 12.0, ""), v.count),
            ("vehicles.speed_kph", MOVING, v.speed_kph),
            ("vehicles.gap_m", within(0.0, 1000.0, "m"), v.gap_m),
            ("vehicles.first_arrival_s", TIME, v.first_arrival_s),
            ("vehicles.headway_s", TIME, v.headway_s),
            ("vehicles.brake_decel_mps2", ACCEL, v.brake_decel_mps2),
            ("vehicles.brake_to_kph", SPEED, v.brake_to_kph),
            ("vehicles.hold_s", TIME, v.hold_s),
            ("vehicles.reaction_s", within(0.0, 3.0, "s"), v.reaction_s),
        ];
        if let Some(at) = v.brake_at_s {
            spans.push(("vehicles.brake_at_s", TIME, at));
        }
        for (name, domain, span) in spans {
            domain.span(name, span)?;
        }
    }

    if let Some(p) = &s.pedestrians {
        within(0.0, 50.0, "").span("pedestrians.count", p.count)?;
        TIME.span("pedestrians.start_t_s", p.start_t_s)?;
        positive(10.0, "m/s").span("pedestrians.speed_mps", p.speed_mps)?;
    }
    Ok(())
}

fn road(r: &RoadSpec) -> Result<(), ScenarioError> {
    positive(MAX_M, "m").number("road.approach_m", r.approach_m)?;
    positive(MAX_M, "m").number("road.exit_m", r.exit_m)?;
    MOVING.number("road.speed_limit_kph", r.speed_limit_kph)?;
    for [s, kph] in &r.limit_changes {
        positive(MAX_M, "m").number("road.limit_changes", *s)?;
        MOVING.number("road.limit_changes", *kph)?;
    }
    if let Some(j) = &r.junction {
        within(8.0, 60.0, "m").number("road.junction.size_m", j.size_m)?;
        LENGTH.number("road.junction.stop_line_gap_m", j.stop_line_gap_m)?;
    }
    Ok(())
}
