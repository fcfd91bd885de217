//! `/apollo/perception/obstacles` (`PerceptionObstacles`): the other road users.
//!
//! Each obstacle needs a finite position; one without is dropped from the list (and counted in
//! [`ObstaclesMsg::n_dropped`]) rather than failing the whole message, since the rest are still valid
//! perception. Speed is the horizontal norm of the world-frame velocity (0 when unreported). Right of way
//! (`priority`) is not in Apollo's message; it comes from `/avguard/road_context` and is merged by the
//! assembler. A message replaces the whole obstacle list. The time is the header's `timestamp_sec`; Apollo
//! test data leaves it 0, which is treated as "no time".

use laws::{Frame, Obstacle};

use laws::frame::MAX_OBSTACLES;

use super::{finite, Channel, DecodeError};
use crate::wire::apollo::perception::PerceptionObstacles;

/// The obstacle list of one `PerceptionObstacles`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObstaclesMsg {
    /// Header time, s.
    pub time_s: Option<f64>,
    /// Obstacles with a finite position (priority not yet known: `false`).
    pub obstacles: Vec<Obstacle>,
    /// Obstacles left out for lack of a finite position.
    pub n_dropped: usize,
}

impl ObstaclesMsg {
    /// Converts the wire message.
    pub fn from_proto(msg: PerceptionObstacles) -> Result<Self, DecodeError> {
        let time_s = msg
            .header
            .as_ref()
            .and_then(|h| h.timestamp_sec)
            .and_then(finite)
            .filter(|t| *t > 0.0);
        let n = msg.perception_obstacle.len();
        if n > MAX_OBSTACLES {
            return Err(DecodeError::TooMany {
                channel: Channel::Obstacles.topic(),
                field: "perception_obstacle",
                found: n,
                limit: MAX_OBSTACLES,
            });
        }
        let mut n_dropped = 0;
        let mut obstacles = Vec::with_capacity(n);
        for ob in &msg.perception_obstacle {
            let position = ob
                .position
                .as_ref()
                .and_then(|p| Some((finite(p.x())?, finite(p.y())?)));
            let Some((x, y)) = position else {
                n_dropped += 1;
                continue;
            };
            let speed_mps = ob
                .velocity
                .as_ref()
                .and_then(|v| finite(v.x().hypot(v.y())))
                .unwrap_or(0.0);
            obstacles.push(Obstacle {
                id: ob.id(),
                kind: ob.r#type.unwrap_or(0),
                x,
                y,
                heading: finite(ob.theta()).unwrap_or(0.0),
                speed_mps,
                length: finite(ob.length()).unwrap_or(0.0),
                width: finite(ob.width()).unwrap_or(0.0),
                priority: false,
            });
        }
        Ok(ObstaclesMsg {
            time_s,
            obstacles,
            n_dropped,
        })
    }

    /// Replaces the held obstacle list.
    pub fn apply(&self, frame: &mut Frame) {
        frame.obstacles.clone_from(&self.obstacles);
    }
}
