//! Frame assembly: per-channel latest values (sample and hold) turned into one [`Frame`] per tick.
//!
//! The clock is message time, never the wall clock. Ticks are `t0 + k * period` where `t0` is the time of
//! the first localization (a frame without an ego pose is meaningless, so nothing is emitted before it).
//! A frame at tick `T` holds the latest value of each channel with time ≤ `T`. It is emitted as soon as
//! either a localization with time ≥ `T` has been applied (localization closes its tick, so a simulator that
//! publishes the pose last gets its frame without waiting a period), or any message later than `T` arrives.
//!
//! Per channel, a message older than the last one of the same channel is *out of order* and a message with
//! the same time is a *duplicate*; both are counted and dropped. A message older than the last emitted tick
//! from a *different* channel is *late*: it is counted and still held for the next frame. Messages without
//! a time are held without moving the clock.
//!
//! **Runs.** A message whose time is more than [`AssemblerConfig::max_backstep_s`] before the previous
//! message of its channel or the last emitted tick (the simulator was reset), or more than [`AssemblerConfig::max_gap_s`] after the
//! next tick (a new scenario on another clock), starts a new run: [`Assembler::push`] returns the
//! [`RunBoundary`], everything held is forgotten (as by [`Assembler::reset`]) and the message is the first
//! of the new run. Nothing more of the old run is emitted: its last frame was closed by its last
//! localization. The caller ends the old run's session, windows and recording before it steps the new
//! frames.
//!
//! Speed: the chassis speedometer when a chassis message has reported one, else the localization velocity.
//!
//! **Road fields.** Without an HD map they are held from `/avguard/road_context`, and the light colour is
//! the road context's `light_color` once it has given one, else the first detected light. With a map
//! ([`Assembler::with_map`]) every frame's road fields, light colour and obstacle priorities are computed
//! from its pose ([`crate::hdmap::tracker::MapTracker`]), following `/apollo/routing_response` when sent;
//! the fields a road context message has given still override the map's (an explicit override for
//! sources that know better), and its `priority` replaces the map's right-of-way rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use laws::Frame;

use crate::hdmap::tracker::{MapTracker, TrackerConfig};
use crate::hdmap::HdMap;
use crate::message::{Channel, RoadContextMsg, SimMessage};

#[cfg(test)]
mod tests;

/// Assembly settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AssemblerConfig {
    /// Tick period, s (default 0.1).
    pub period_s: f64,
    /// Largest forward jump in message time that is filled with ticks, s; beyond it a new run starts.
    pub max_gap_s: f64,
    /// Largest step back in time of one channel that is only an out-of-order message, s; beyond it a new
    /// run starts.
    pub max_backstep_s: f64,
}

/// The shortest tick period, s: a tick per millisecond is ten times Apollo's fastest channel, and message
/// times (seconds since 1970, about 1.7e9) still tell ticks this far apart from each other by five orders
/// of magnitude.
pub const MIN_PERIOD_S: f64 = 0.001;

/// The longest tick period, s.
pub const MAX_PERIOD_S: f64 = 10.0;

/// The largest gap filled with ticks, s: with [`MIN_PERIOD_S`], at most 3.6 million ticks per gap.
pub const MAX_GAP_S: f64 = 3600.0;

impl AssemblerConfig {
    /// Checks the settings [`Assembler::new`] would otherwise adjust: a period in [[`MIN_PERIOD_S`],
    /// [`MAX_PERIOD_S`]] s, a gap limit from the period to [`MAX_GAP_S`] s, a backstep limit that is a
    /// number of seconds ≥ 0.
    ///
    /// # Errors
    /// The first setting out of range, in words naming it.
    pub fn check(&self) -> Result<(), String> {
        if !(self.period_s >= MIN_PERIOD_S && self.period_s <= MAX_PERIOD_S) {
            return Err(format!(
                "a frame period of {:?} s is outside {MIN_PERIOD_S}–{MAX_PERIOD_S} s",
                self.period_s
            ));
        }
        if !(self.max_gap_s >= self.period_s && self.max_gap_s <= MAX_GAP_S) {
            return Err(format!(
                "a gap limit of {:?} s is outside the frame period ({:?} s) to {MAX_GAP_S} s",
                self.max_gap_s, self.period_s
            ));
        }
        if !(self.max_backstep_s >= 0.0 && self.max_backstep_s.is_finite()) {
            return Err(format!(
                "a backstep limit of {:?} s is not a number of seconds ≥ 0",
                self.max_backstep_s
            ));
        }
        Ok(())
    }
}

impl Default for AssemblerConfig {
    fn default() -> Self {
        AssemblerConfig {
            period_s: 0.1,
            max_gap_s: 5.0,
            max_backstep_s: 1.0,
        }
    }
}

/// Why a new run started (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunBoundary {
    /// A channel's time went back by more than `max_backstep_s`.
    TimeBackwards {
        /// The previous time of the channel, s.
        from_s: f64,
        /// The new message's time, s.
        to_s: f64,
    },
    /// Time jumped forward by more than `max_gap_s`.
    TimeJump {
        /// The next tick of the old run, s.
        from_s: f64,
        /// The new message's time, s.
        to_s: f64,
    },
}

/// Counters of what the assembler did with its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AssemblyStats {
    /// Messages applied.
    pub n_applied: u64,
    /// Dropped: older than the previous message of the same channel.
    pub n_out_of_order: u64,
    /// Dropped: same time as the previous message of the same channel.
    pub n_duplicate: u64,
    /// Held, but older than the last emitted tick.
    pub n_late: u64,
    /// New runs started by a time jump or a step back in time.
    pub n_resync: u64,
    /// Frames emitted.
    pub n_frames: u64,
}

/// Tolerance for comparing message times with ticks (float sums of 0.1 are not exact).
const EPS_S: f64 = 1e-6;

/// Turns a stream of [`SimMessage`]s into [`Frame`]s. One per simulator connection (or record).
#[derive(Debug)]
pub struct Assembler {
    config: AssemblerConfig,
    /// The HD map and the run's position on it, when road fields come from a map.
    map: Option<(Arc<HdMap>, TrackerConfig, MapTracker)>,
    /// Every road field a road context message has given in this run (they override the map's).
    road_override: RoadContextMsg,
    /// The held values (sample and hold); `t` is overwritten per emitted frame.
    held: Frame,
    /// The last chassis speedometer reading, preferred over the localization speed.
    chassis_speed_mps: Option<f64>,
    /// The last localization speed.
    pose_speed_mps: f64,
    /// True once the road context has given a light colour: it then rules over detections.
    light_from_context: bool,
    /// Right of way by obstacle id, from the road context.
    priority: BTreeMap<i32, bool>,
    /// Last message time per channel (index [`Channel::index`]).
    last_time_s: [Option<f64>; Channel::ALL.len()],
    /// Tick grid origin and the index of the next tick to emit; `None` before the first localization.
    grid: Option<(f64, u64)>,
    /// Time of the last emitted frame.
    last_emitted_s: Option<f64>,
    stats: AssemblyStats,
}

impl Assembler {
    /// A fresh assembler. Settings [`AssemblerConfig::check`] refuses are adjusted here, so that no
    /// setting makes assembly unbounded: a period that is not a positive number becomes 0.1 s, and is
    /// then held within [[`MIN_PERIOD_S`], [`MAX_PERIOD_S`]]; a gap limit below the period becomes 5 s
    /// (or the period) and is held below [`MAX_GAP_S`]; a bad backstep limit becomes 1 s.
    pub fn new(mut config: AssemblerConfig) -> Self {
        if !(config.period_s.is_finite() && config.period_s > 0.0) {
            config.period_s = AssemblerConfig::default().period_s;
        }
        config.period_s = config.period_s.clamp(MIN_PERIOD_S, MAX_PERIOD_S);
        if !(config.max_gap_s.is_finite() && config.max_gap_s >= config.period_s) {
            config.max_gap_s = AssemblerConfig::default().max_gap_s.max(config.period_s);
        }
        config.max_gap_s = config.max_gap_s.min(MAX_GAP_S);
        if !(config.max_backstep_s.is_finite() && config.max_backstep_s >= 0.0) {
            config.max_backstep_s = AssemblerConfig::default().max_backstep_s;
        }
        Assembler {
            config,
            map: None,
            road_override: RoadContextMsg::default(),
            held: Frame::default(),
            chassis_speed_mps: None,
            pose_speed_mps: 0.0,
            light_from_context: false,
            priority: BTreeMap::new(),
            last_time_s: [None; Channel::ALL.len()],
            grid: None,
            last_emitted_s: None,
            stats: AssemblyStats::default(),
        }
    }

    /// A fresh assembler whose frames get their road fields from `map` (see the module docs).
    pub fn with_map(config: AssemblerConfig, map: Arc<HdMap>, tracker: TrackerConfig) -> Self {
        let mut a = Assembler::new(config);
        let t = MapTracker::new(Arc::clone(&map), tracker);
        a.map = Some((map, tracker, t));
        a
    }

    /// The counters so far (over all runs).
    pub fn stats(&self) -> AssemblyStats {
        self.stats
    }

    /// Forgets everything held (values, clock, route, lights) and starts a new run; the configuration,
    /// the map and the counters stay.
    pub fn reset(&mut self) {
        let fresh = Assembler::new(self.config);
        self.road_override = fresh.road_override;
        self.held = fresh.held;
        self.chassis_speed_mps = None;
        self.pose_speed_mps = 0.0;
        self.light_from_context = false;
        self.priority.clear();
        self.last_time_s = fresh.last_time_s;
        self.grid = None;
        self.last_emitted_s = None;
        if let Some((map, config, tracker)) = &mut self.map {
            *tracker = MapTracker::new(Arc::clone(map), *config);
        }
    }

    /// Whether a message of `channel` at `t` starts a new run (see the module docs). A routing response
    /// carries the time its route was planned, possibly long before, so only its own channel's clock counts
    /// for it.
    fn boundary(&self, channel: Channel, t: f64) -> Option<RunBoundary> {
        let own = self.last_time_s[channel.index()];
        let clock = if channel == Channel::Routing {
            own
        } else {
            own.into_iter().chain(self.last_emitted_s).reduce(f64::max)
        };
        if let Some(last) = clock {
            if t < last - self.config.max_backstep_s {
                return Some(RunBoundary::TimeBackwards {
                    from_s: last,
                    to_s: t,
                });
            }
        }
        let next = self.next_tick_s()?;
        (t - next > self.config.max_gap_s).then_some(RunBoundary::TimeJump {
            from_s: next,
            to_s: t,
        })
    }

    /// Applies one message and appends every frame it completes to `out`. Returns the boundary when the
    /// message starts a new run; the frames in `out` then all belong to the new run.
    pub fn push(&mut self, msg: &SimMessage, out: &mut Vec<Frame>) -> Option<RunBoundary> {
        let channel = msg.channel();
        let time = msg.time_s();
        let boundary = time.and_then(|t| self.boundary(channel, t));
        if boundary.is_some() {
            self.stats.n_resync += 1;
            self.reset();
        }
        if let Some(t) = time {
            if let Some(last) = self.last_time_s[channel.index()] {
                if t < last - EPS_S {
                    self.stats.n_out_of_order += 1;
                    return boundary;
                }
                if (t - last).abs() <= EPS_S {
                    self.stats.n_duplicate += 1;
                    return boundary;
                }
            }
            self.last_time_s[channel.index()] = Some(t);
            self.emit_before(t, out);
            if self.last_emitted_s.is_some_and(|e| t < e - EPS_S) {
                self.stats.n_late += 1;
            }
        }
        self.apply(msg);
        self.stats.n_applied += 1;
        if let SimMessage::Localization(loc) = msg {
            match self.grid {
                None => {
                    self.grid = Some((loc.time_s, 0));
                    self.emit_next(out);
                }
                Some(_) if loc.time_s >= self.next_tick_s().unwrap_or(f64::INFINITY) - EPS_S => {
                    self.emit_next(out);
                }
                Some(_) => {}
            }
        }
        boundary
    }

    fn next_tick_s(&self) -> Option<f64> {
        self.grid
            .map(|(t0, k)| t0 + k as f64 * self.config.period_s)
    }

    /// Emits every pending tick strictly before `t` (they can no longer receive messages ≤ them).
    fn emit_before(&mut self, t: f64, out: &mut Vec<Frame>) {
        while let Some(next) = self.next_tick_s() {
            if next < t - EPS_S {
                self.emit_next(out);
            } else {
                break;
            }
        }
    }

    fn emit_next(&mut self, out: &mut Vec<Frame>) {
        let Some((t0, k)) = self.grid else {
            return;
        };
        let t = t0 + k as f64 * self.config.period_s;
        self.grid = Some((t0, k + 1));
        let mut frame = self.held.clone();
        frame.t = t;
        frame.speed_mps = self.chassis_speed_mps.unwrap_or(self.pose_speed_mps);
        let priority_from_map = match &mut self.map {
            Some((_, _, tracker)) => {
                tracker.fill(&mut frame);
                self.road_override.apply(&mut frame);
                self.road_override.priority.is_none()
            }
            None => false,
        };
        if !priority_from_map {
            for ob in &mut frame.obstacles {
                ob.priority = self.priority.get(&ob.id).copied().unwrap_or(false);
            }
        }
        self.last_emitted_s = Some(t);
        self.stats.n_frames += 1;
        out.push(frame);
    }

    fn apply(&mut self, msg: &SimMessage) {
        match msg {
            SimMessage::Localization(m) => {
                m.apply(&mut self.held);
                if let Some(v) = m.speed_mps {
                    self.pose_speed_mps = v;
                }
            }
            SimMessage::Chassis(m) => {
                m.apply(&mut self.held);
                if let Some(v) = m.speed_mps {
                    self.chassis_speed_mps = Some(v);
                }
            }
            SimMessage::Obstacles(m) => m.apply(&mut self.held),
            SimMessage::TrafficLights(m) => {
                if let Some((_, _, tracker)) = &mut self.map {
                    tracker.set_lights(m.lights.iter().cloned());
                }
                if !self.light_from_context {
                    m.apply(&mut self.held);
                }
            }
            SimMessage::RoadContext(m) => {
                m.apply(&mut self.held);
                self.road_override.merge(m);
                if m.light_color.is_some() {
                    self.light_from_context = true;
                }
                if let Some(p) = &m.priority {
                    self.priority.clone_from(p);
                }
            }
            SimMessage::Routing(m) => {
                if let Some((_, _, tracker)) = &mut self.map {
                    tracker.set_route(m.lanes.iter().map(|(id, road)| (id.as_str(), *road)));
                }
            }
        }
    }
}
