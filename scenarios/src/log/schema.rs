//! The column tables of the log format: one entry per dataset with its element type, the value rule it
//! must satisfy, and how it maps to [`Frame`] / [`Obstacle`] fields. Writer and reader both walk these
//! tables, so the two cannot drift apart.

use laws::{Frame, Obstacle};

/// What values a column may hold (checked on write and on read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Any finite number.
    Finite,
    /// Finite and ≥ 0.
    NonNegative,
    /// ≥ 0, `inf` allowed (distances, limits), never NaN.
    Distance,
    /// 0 or 1.
    Flag,
    /// Any integer value.
    Any,
}

/// A frame column: name, rule, getter and setter per element type.
pub(crate) enum Col<T> {
    /// f64 column.
    F64(&'static str, Rule, fn(&T) -> f64, fn(&mut T, f64)),
    /// f32 column.
    F32(&'static str, Rule, fn(&T) -> f32, fn(&mut T, f32)),
    /// i32 column.
    I32(&'static str, Rule, fn(&T) -> i32, fn(&mut T, i32)),
    /// u8 column.
    U8(&'static str, Rule, fn(&T) -> u8, fn(&mut T, u8)),
}

impl<T> Col<T> {
    pub fn name(&self) -> &'static str {
        match self {
            Col::F64(n, ..) | Col::F32(n, ..) | Col::I32(n, ..) | Col::U8(n, ..) => n,
        }
    }
    pub fn rule(&self) -> Rule {
        match self {
            Col::F64(_, r, ..) | Col::F32(_, r, ..) | Col::I32(_, r, ..) | Col::U8(_, r, ..) => *r,
        }
    }
}

/// Checks one value against a rule; `None` when it is fine.
pub(crate) fn check(rule: Rule, v: f64) -> Option<&'static str> {
    match rule {
        Rule::Finite if !v.is_finite() => Some("value is not finite"),
        Rule::NonNegative if !v.is_finite() => Some("value is not finite"),
        Rule::NonNegative if v < 0.0 => Some("value is negative"),
        Rule::Distance if v.is_nan() => Some("value is NaN"),
        Rule::Distance if v < 0.0 => Some("value is negative"),
        Rule::Flag if v != 0.0 && v != 1.0 => Some("flag is neither 0 nor 1"),
        _ => None,
    }
}

fn flag(b: bool) -> u8 {
    u8::from(b)
}

/// `/frames` datasets other than `t` (which is checked for monotonicity on its own).
pub(crate) const FRAME_COLUMNS: &[Col<Frame>] = &[
    Col::F64("t", Rule::Finite, |f| f.t, |f, v| f.t = v),
    Col::F64("x", Rule::Finite, |f| f.x, |f, v| f.x = v),
    Col::F64("y", Rule::Finite, |f| f.y, |f, v| f.y = v),
    Col::F64("z", Rule::Finite, |f| f.z, |f, v| f.z = v),
    Col::F64("heading", Rule::Finite, |f| f.heading, |f, v| f.heading = v),
    Col::F64("speed", Rule::NonNegative, |f| f.speed_mps, |f, v| f.speed_mps = v),
    Col::F64("accel", Rule::Finite, |f| f.accel_mps2, |f, v| f.accel_mps2 = v),
    Col::I32("gear", Rule::Any, |f| f.gear, |f, v| f.gear = v),
    Col::F32("throttle", Rule::Finite, |f| f.throttle_pct, |f, v| f.throttle_pct = v),
    Col::F32("brake", Rule::Finite, |f| f.brake_pct, |f, v| f.brake_pct = v),
    Col::F32("steering", Rule::Finite, |f| f.steering_pct, |f, v| f.steering_pct = v),
    Col::I32("turn_signal", Rule::Any, |f| f.turn_signal, |f, v| f.turn_signal = v),
    Col::I32("light_color", Rule::Any, |f| f.light_color, |f, v| f.light_color = v),
    Col::U8("light_blink", Rule::Flag, |f| flag(f.light_blink), |f, v| f.light_blink = v == 1),
    Col::F64("stopline_dist", Rule::Distance, |f| f.stopline_dist_m, |f, v| f.stopline_dist_m = v),
    Col::F64("junction_dist", Rule::Distance, |f| f.junction_dist_m, |f, v| f.junction_dist_m = v),
    Col::F64("crosswalk_dist", Rule::Distance, |f| f.crosswalk_dist_m, |f, v| f.crosswalk_dist_m = v),
    Col::F64("stopsign_dist", Rule::Distance, |f| f.stopsign_dist_m, |f, v| f.stopsign_dist_m = v),
    Col::F64("speed_limit", Rule::Distance, |f| f.speed_limit_mps, |f, v| f.speed_limit_mps = v),
    Col::I32("lane_number", Rule::Any, |f| f.lane_number, |f, v| f.lane_number = v),
    Col::I32("planned_turn", Rule::Any, |f| f.planned_turn, |f, v| f.planned_turn = v),
    Col::U8("signal_ahead", Rule::Flag, |f| flag(f.signal_ahead), |f, v| f.signal_ahead = v == 1),
    Col::U8("traffic_jam", Rule::Flag, |f| flag(f.traffic_jam), |f, v| f.traffic_jam = v == 1),
    Col::U8("horn", Rule::Flag, |f| flag(f.horn), |f, v| f.horn = v == 1),
    Col::U8("high_beam", Rule::Flag, |f| flag(f.high_beam), |f, v| f.high_beam = v == 1),
    Col::U8("low_beam", Rule::Flag, |f| flag(f.low_beam), |f, v| f.low_beam = v == 1),
    Col::U8("hazard", Rule::Flag, |f| flag(f.hazard), |f, v| f.hazard = v == 1),
    Col::U8("collision", Rule::Flag, |f| flag(f.collision), |f, v| f.collision = v == 1),
    Col::U8("destination", Rule::Flag, |f| flag(f.destination), |f, v| f.destination = v == 1),
];

/// `/obstacles` datasets other than `offset`.
pub(crate) const OBSTACLE_COLUMNS: &[Col<Obstacle>] = &[
    Col::I32("id", Rule::Any, |o| o.id, |o, v| o.id = v),
    Col::I32("type", Rule::Any, |o| o.kind, |o, v| o.kind = v),
    Col::F64("x", Rule::Finite, |o| o.x, |o, v| o.x = v),
    Col::F64("y", Rule::Finite, |o| o.y, |o, v| o.y = v),
    Col::F64("heading", Rule::Finite, |o| o.heading, |o, v| o.heading = v),
    Col::F64("speed", Rule::NonNegative, |o| o.speed_mps, |o, v| o.speed_mps = v),
    Col::F64("length", Rule::NonNegative, |o| o.length, |o, v| o.length = v),
    Col::F64("width", Rule::NonNegative, |o| o.width, |o, v| o.width = v),
    Col::U8("priority", Rule::Flag, |o| flag(o.priority), |o, v| o.priority = v == 1),
];

/// An obstacle with every field zero, filled column by column when reading.
pub(crate) const BLANK_OBSTACLE: Obstacle = Obstacle {
    id: 0,
    kind: 0,
    x: 0.0,
    y: 0.0,
    heading: 0.0,
    speed_mps: 0.0,
    length: 0.0,
    width: 0.0,
    priority: false,
};

/// Checks every column value of one frame (and its obstacles) as the reader would, plus time order.
pub(crate) fn check_frame(frame: &Frame, prev_t: Option<f64>) -> Result<(), String> {
    for col in FRAME_COLUMNS {
        if let Some(problem) = check(col.rule(), value(col, frame)) {
            return Err(format!("`/frames/{}`: {problem}", col.name()));
        }
    }
    if let Some(prev) = prev_t {
        if frame.t <= prev {
            return Err("`/frames/t` is not strictly increasing".to_owned());
        }
    }
    for obstacle in &frame.obstacles {
        for col in OBSTACLE_COLUMNS {
            if let Some(problem) = check(col.rule(), value(col, obstacle)) {
                return Err(format!("`/obstacles/{}`: {problem}", col.name()));
            }
        }
    }
    Ok(())
}

/// A column's value for one row, as f64 (for rule checks).
pub(crate) fn value<T>(col: &Col<T>, row: &T) -> f64 {
    match col {
        Col::F64(_, _, get, _) => get(row),
        Col::F32(_, _, get, _) => f64::from(get(row)),
        Col::I32(_, _, get, _) => f64::from(get(row)),
        Col::U8(_, _, get, _) => f64::from(get(row)),
    }
}
