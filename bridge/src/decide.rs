//! The decision step as the bridge sees it: a per-connection [`Decide`] session made by a swappable
//! [`DecideFactory`].
//!
//! The monitor crate's `Session` (law windows → abstraction → table lookup) is plugged in behind these
//! traits; the bridge's own logic (enforcement, logs, transport) only needs per-property risk, the abstract
//! state and the explanation data, so it is testable with a scripted double.

use laws::Frame;

/// One property's verdict at one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyRisk {
    /// Property name.
    pub name: String,
    /// Abstract state as a bit string.
    pub state_bits: String,
    /// The abstract state in words (the predicates that hold).
    pub state_words: String,
    /// P(unsafe eventually), or within the horizon when one is configured.
    pub risk: f64,
    /// True on the frame where a violation of the property becomes certain.
    pub violated: bool,
    /// Most likely path of abstract states to the violation (words), empty when unknown.
    pub likely_path: Vec<String>,
    /// Expected time to the violation along that path, s.
    pub expected_time_s: Option<f64>,
    /// The model's calibrated (θ, debounce frames) for this property and risk measure, if any.
    pub calibrated: Option<(f64, u32)>,
    /// The (θ, debounce frames) a collision property's interventions use when the model calibrated
    /// them apart from its alarms (`avguard calibrate --enforce-target-false-alarms`), if any.
    pub enforcement: Option<(f64, u32)>,
    /// Its violation is a collision (the unsafe predicate reads the collision flag alone): its alarm
    /// episodes last at least the enforcer's collision hold.
    pub collision: bool,
}

/// The verdicts of every monitored property at one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// One entry per property, in a fixed order.
    pub properties: Vec<PropertyRisk>,
    /// The frame as the model read it, when it reads road users otherwise than as they arrive (smoothed
    /// over their recent reports or moved ahead by a perception latency: `avguard learn
    /// --road-user-smoothing`, `--perception-latency`); `None` when it reads them as they arrive. The
    /// brake check rolls out the road users where the model sees them.
    pub seen: Option<Frame>,
}

/// A per-connection decision session: holds the law windows of one simulator run.
pub trait Decide: Send {
    /// Consumes the next frame and returns every property's risk. The decision is borrowed from the
    /// session so that a session can reuse its buffers: the hot path allocates nothing per frame.
    fn step(&mut self, frame: &Frame) -> &Decision;
}

/// Makes sessions; one model. Swapped at run time through `arc_swap` by the pipeline.
pub trait DecideFactory: Send + Sync {
    /// A fresh session (empty windows).
    fn session(&self) -> Box<dyn Decide>;
    /// A label for logs (e.g. the model file).
    fn label(&self) -> String;
}
