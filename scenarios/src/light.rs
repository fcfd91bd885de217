//! Traffic-light phase timing: a fixed green → yellow → red cycle.
//!
//! LawBreaker's runs give every controllable signal 15 s green, 5 s yellow and 15 s red, looping; those are
//! the defaults of a scenario's `[light]` table. A run samples where in the cycle the light starts, which is
//! the main source of diversity in the light scenarios (when the yellow comes relative to the ego's arrival).

use laws::frame::light_color;

/// A looping light cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Light {
    green_s: f64,
    yellow_s: f64,
    red_s: f64,
    offset_s: f64,
}

impl Light {
    /// A cycle with the given phase lengths (each > 0) whose clock reads `offset_s` at t = 0 (0 = start of
    /// green). Returns `None` when a phase length is not a positive finite number.
    pub fn try_new(green_s: f64, yellow_s: f64, red_s: f64, offset_s: f64) -> Option<Light> {
        let ok = |v: f64| v > 0.0 && v.is_finite();
        (ok(green_s) && ok(yellow_s) && ok(red_s) && offset_s.is_finite())
            .then_some(Light { green_s, yellow_s, red_s, offset_s })
    }

    fn cycle_s(&self) -> f64 {
        self.green_s + self.yellow_s + self.red_s
    }

    /// Position in the cycle at time `t_s`, in `[0, cycle)`.
    fn clock(&self, t_s: f64) -> f64 {
        (t_s + self.offset_s).rem_euclid(self.cycle_s())
    }

    /// Apollo colour at time `t_s` (GREEN, YELLOW or RED).
    pub fn color_at(&self, t_s: f64) -> i32 {
        let c = self.clock(t_s);
        if c < self.green_s {
            light_color::GREEN
        } else if c < self.green_s + self.yellow_s {
            light_color::YELLOW
        } else {
            light_color::RED
        }
    }

    /// Time left in the current phase at `t_s`, s.
    pub fn remaining_s(&self, t_s: f64) -> f64 {
        let c = self.clock(t_s);
        if c < self.green_s {
            self.green_s - c
        } else if c < self.green_s + self.yellow_s {
            self.green_s + self.yellow_s - c
        } else {
            self.cycle_s() - c
        }
    }
}

#[cfg(test)]
mod tests;
