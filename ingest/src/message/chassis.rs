//! `/apollo/canbus/chassis` (`Chassis`): gear, pedals, steering, speedometer, lights and horn.
//!
//! Every float here defaults to NaN in Apollo, so each is optional: an unreported value leaves the held
//! frame's value unchanged. Signals come from the `signal` block (Apollo ≥ 3.5); when it is absent the
//! deprecated booleans (`left_turn_signal`, `high_beam_signal`, ...) are read instead, as old publishers
//! still fill them. The time is the header's `timestamp_sec` (a chassis message without one is held without
//! moving the clock).

use laws::frame::turn_signal;
use laws::Frame;

use super::{finite, DecodeError};
use crate::wire::apollo::canbus::Chassis;

/// The fields of a `Chassis` that a frame uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ChassisMsg {
    /// Header time, s.
    pub time_s: Option<f64>,
    /// Speedometer, m/s (absolute value; Apollo's is signed in reverse).
    pub speed_mps: Option<f64>,
    /// Apollo `GearPosition`.
    pub gear: Option<i32>,
    /// Throttle, percent.
    pub throttle_pct: Option<f32>,
    /// Brake, percent.
    pub brake_pct: Option<f32>,
    /// Steering, percent, left positive.
    pub steering_pct: Option<f32>,
    /// Apollo `TurnSignal`.
    pub turn_signal: Option<i32>,
    /// High beam.
    pub high_beam: Option<bool>,
    /// Low beam.
    pub low_beam: Option<bool>,
    /// Horn.
    pub horn: Option<bool>,
    /// Hazard lights (`emergency_light`, or turn signal HAZARD_WARNING).
    pub hazard: Option<bool>,
}

impl ChassisMsg {
    /// Converts the wire message.
    #[allow(deprecated)]
    pub fn from_proto(msg: Chassis) -> Result<Self, DecodeError> {
        let time_s = msg
            .header
            .as_ref()
            .and_then(|h| h.timestamp_sec)
            .and_then(finite);
        let finite32 = |v: Option<f32>| v.filter(|x| x.is_finite());
        let (turn, high_beam, low_beam, horn, hazard) = match &msg.signal {
            Some(signal) => (
                signal.turn_signal,
                signal.high_beam,
                signal.low_beam,
                signal.horn,
                match (signal.emergency_light, signal.turn_signal) {
                    (Some(on), _) => Some(on),
                    (None, Some(t)) => Some(t == turn_signal::HAZARD),
                    (None, None) => None,
                },
            ),
            None => {
                let turn = match (msg.left_turn_signal, msg.right_turn_signal) {
                    (Some(true), _) => Some(turn_signal::LEFT),
                    (_, Some(true)) => Some(turn_signal::RIGHT),
                    (Some(false), _) | (_, Some(false)) => Some(turn_signal::NONE),
                    (None, None) => None,
                };
                (
                    turn,
                    msg.high_beam_signal,
                    msg.low_beam_signal,
                    msg.horn,
                    None,
                )
            }
        };
        Ok(ChassisMsg {
            time_s,
            speed_mps: msg
                .speed_mps
                .and_then(|v| finite(f64::from(v)))
                .map(f64::abs),
            gear: msg.gear_location,
            throttle_pct: finite32(msg.throttle_percentage),
            brake_pct: finite32(msg.brake_percentage),
            steering_pct: finite32(msg.steering_percentage),
            turn_signal: turn,
            high_beam,
            low_beam,
            horn,
            hazard,
        })
    }

    /// Writes the reported fields into the held frame (speed goes through the assembler).
    pub fn apply(&self, frame: &mut Frame) {
        if let Some(g) = self.gear {
            frame.gear = g;
        }
        if let Some(v) = self.throttle_pct {
            frame.throttle_pct = v;
        }
        if let Some(v) = self.brake_pct {
            frame.brake_pct = v;
        }
        if let Some(v) = self.steering_pct {
            frame.steering_pct = v;
        }
        if let Some(v) = self.turn_signal {
            frame.turn_signal = v;
        }
        if let Some(v) = self.high_beam {
            frame.high_beam = v;
        }
        if let Some(v) = self.low_beam {
            frame.low_beam = v;
        }
        if let Some(v) = self.horn {
            frame.horn = v;
        }
        if let Some(v) = self.hazard {
            frame.hazard = v;
        }
    }
}
