//! The bridge's own topics (the Apollo channels it consumes are [`ingest::message::Channel`]'s, and the
//! vehicle-control topic it publishes is [`crate::control_command::CONTROL_COMMAND_TOPIC`]).

/// The topic that carries interventions.
pub const INTERVENTION_TOPIC: &str = "/avguard/intervention";
/// The topic that carries per-frame risk.
pub const RISK_TOPIC: &str = "/avguard/risk";
/// The topic of requests to avguard itself (`{"command": "reload"}`, `{"op": "new_run", "run_id": ...}`);
/// not to be confused with Apollo's vehicle-control topic
/// [`CONTROL_COMMAND_TOPIC`](crate::control_command::CONTROL_COMMAND_TOPIC), which avguard publishes.
pub const ADMIN_TOPIC: &str = "/avguard/control";
