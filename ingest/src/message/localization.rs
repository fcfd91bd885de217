//! `/apollo/localization/pose` (`LocalizationEstimate`): ego pose, velocity and acceleration.
//!
//! The message time is `measurement_time` (the time the pose refers to), falling back to the header's
//! `timestamp_sec`; a pose with neither cannot be placed on the clock and is rejected. Position x/y must be
//! finite (Apollo's NaN default means "unknown", and a frame without a position is meaningless). Heading is
//! `pose.heading` when reported, else the previous heading is held. Speed is the horizontal norm of the
//! world-frame velocity; acceleration is the world-frame acceleration projected on the heading.

use laws::Frame;

use super::{finite, DecodeError};
use crate::wire::apollo::localization::LocalizationEstimate;

const CHANNEL: &str = "/apollo/localization/pose";

/// The fields of a `LocalizationEstimate` that a frame uses.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalizationMsg {
    /// Message time, s.
    pub time_s: f64,
    /// Rear-axle centre, map frame, m.
    pub x_m: f64,
    /// Rear-axle centre, map frame, m.
    pub y_m: f64,
    /// Height, m (0 when not reported).
    pub z_m: f64,
    /// Heading, rad ENU, when reported.
    pub heading_rad: Option<f64>,
    /// Horizontal speed from the world-frame velocity, m/s, when reported.
    pub speed_mps: Option<f64>,
    /// Longitudinal acceleration, m/s², when reported.
    pub accel_mps2: Option<f64>,
}

impl LocalizationMsg {
    /// Converts the wire message.
    pub fn from_proto(msg: LocalizationEstimate) -> Result<Self, DecodeError> {
        let header_time = msg.header.as_ref().and_then(|h| h.timestamp_sec);
        let time_s = msg
            .measurement_time
            .or(header_time)
            .ok_or(DecodeError::Missing {
                channel: CHANNEL,
                field: "measurement_time or header.timestamp_sec",
            })?;
        if !time_s.is_finite() {
            return Err(DecodeError::NonFinite {
                channel: CHANNEL,
                field: "measurement_time",
            });
        }
        let pose = msg.pose.ok_or(DecodeError::Missing {
            channel: CHANNEL,
            field: "pose",
        })?;
        let position = pose.position.ok_or(DecodeError::Missing {
            channel: CHANNEL,
            field: "pose.position",
        })?;
        let non_finite = |field| DecodeError::NonFinite {
            channel: CHANNEL,
            field,
        };
        let x_m = finite(position.x()).ok_or(non_finite("pose.position.x"))?;
        let y_m = finite(position.y()).ok_or(non_finite("pose.position.y"))?;
        let z_m = finite(position.z()).unwrap_or(0.0);
        let heading_rad = pose.heading.and_then(finite);
        let speed_mps = pose
            .linear_velocity
            .and_then(|v| finite(v.x().hypot(v.y())));
        let accel_mps2 = match (pose.linear_acceleration, heading_rad) {
            (Some(a), Some(h)) => finite(a.x() * h.cos() + a.y() * h.sin()),
            _ => None,
        };
        Ok(LocalizationMsg {
            time_s,
            x_m,
            y_m,
            z_m,
            heading_rad,
            speed_mps,
            accel_mps2,
        })
    }

    /// Writes the pose into the held frame (speed goes through the assembler, which prefers chassis).
    pub fn apply(&self, frame: &mut Frame) {
        frame.x = self.x_m;
        frame.y = self.y_m;
        frame.z = self.z_m;
        if let Some(h) = self.heading_rad {
            frame.heading = h;
        }
        if let Some(a) = self.accel_mps2 {
            frame.accel_mps2 = a;
        }
    }
}
