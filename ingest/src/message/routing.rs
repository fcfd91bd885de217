//! `/apollo/routing_response` (`RoutingResponse`): the lanes of the planned route, for HD-map road context.
//!
//! Records carry the same message on `/apollo/routing_response_history`. Only the lane ids matter, each
//! with the index of its road segment (parallel passages of one road segment share it); without an HD map
//! the message is accepted and has no effect.

use super::{finite, DecodeError};
use crate::wire::apollo::routing::RoutingResponse;

/// Most lane segments taken from one response: a route across a city has a few thousand.
pub const MAX_ROUTE_SEGMENTS: usize = 100_000;

const CHANNEL: &str = "/apollo/routing_response";

/// The route's lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingMsg {
    /// Header time, s.
    pub time_s: Option<f64>,
    /// (lane id, road segment index), in route order.
    pub lanes: Vec<(String, usize)>,
}

impl RoutingMsg {
    /// Converts the wire message.
    pub fn from_proto(msg: RoutingResponse) -> Result<Self, DecodeError> {
        let time_s = msg
            .header
            .as_ref()
            .and_then(|h| h.timestamp_sec)
            .and_then(finite);
        let mut lanes = Vec::new();
        for (road_i, road) in msg.road.into_iter().enumerate() {
            for passage in road.passage {
                for segment in passage.segment {
                    if lanes.len() >= MAX_ROUTE_SEGMENTS {
                        return Err(DecodeError::Mapping {
                            channel: CHANNEL,
                            reason: format!("more than {MAX_ROUTE_SEGMENTS} lane segments"),
                        });
                    }
                    if let Some(id) = segment.id {
                        lanes.push((id, road_i));
                    }
                }
            }
        }
        Ok(RoutingMsg { time_s, lanes })
    }
}
