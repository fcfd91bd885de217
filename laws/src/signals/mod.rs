//! LawBreaker's signal vocabulary, computed from one [`Frame`].
//!
//! A law talks about named signals (`speed`, `stoplineAhead`, `PriorityNPCAhead`, ...). [`Signals`] holds
//! the value of every signal at one frame in a flat array indexed by [`Signal`], so that evaluating an
//! atom is one array read and one comparison. Values keep LawBreaker's units so that its law texts work
//! unchanged: ego `speed` in km/h, distances in metres, NPC speeds in m/s, booleans as 0/1.
//!
//! Where LawBreaker used a stand-in or had a bug, we compute the signal correctly and say so here:
//! - `turnSignal`: right is 2 (LawBreaker collapsed it to 1 through a bool conversion).
//! - `trafficLightAhead.color`: 0 when no light governs the ego lane (LawBreaker reported green).
//! - `speedLimit.upperLimit`: the ego lane's limit in km/h (LawBreaker used the constant 1000).
//! - `PriorityNPCAhead`, `PriorityPedsAhead`: computed at the current frame (LawBreaker computed them for
//!   the frame 20 frames back).
//! - Distances to absent features and NPCs are `+inf` (LawBreaker used 200 and 1000).
//!
//! Scenario constants (`Time`, `rain`, `fog`, `snow`, `visibility`) come from a [`SignalContext`].
//!
//! **avguard extensions for prediction** (not in LawBreaker; usable in laws and `properties.toml` like any
//! signal): the required decelerations `stoplineAhead.decel`, `stopSignAhead.decel`,
//! `junctionAhead.decel`, the time `junctionAhead.time`, the closest point of approach `closestApproach`
//! (`.time`, `.ttc`), the priority-conflict signals `PriorityConflict` (`.time`, `.egoTime`, `.gap`) (see
//! [`motion`] for their definitions and edge cases), the RSS flag `rssDangerous` ([`crate::rss`] with CARLA's
//! defaults), the ego `jerk`, its mean acceleration over the last second `acc.mean1s` and the time to reach
//! the speed limit at that acceleration `speedLimit.time`, which need earlier frames: a run's signals come
//! from a [`SignalStream`] (live and batch alike); [`Signals::from_frame`] alone reports a jerk of 0 and the
//! frame's `acc` as `acc.mean1s` (and reads `speedLimit.time` at it).

pub mod motion;
mod obstacles;
mod stream;

use crate::frame::{turn_signal, Frame};
use crate::geometry::Mover;

pub use crate::frame::{EGO_FRONT_M, EGO_LENGTH_M, EGO_REAR_M, EGO_WIDTH_M};
pub use motion::{MotionNeeds, MotionSignals};
pub use obstacles::{ObstacleNeeds, ObstacleSignals};
pub use stream::{signal_table, SignalStream};

/// The value type and the way a signal may be used in a formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// A number compared with `==`, `<`, ...
    Value,
    /// A 0/1 flag; written bare it means `X == 1`.
    Flag,
    /// A distance in metres; written `X(d)` it means `X <= d`.
    Distance,
}

macro_rules! signals {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $kind:ident; )*) => {
        /// A named signal of the law language.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Signal {
            $( $(#[$doc])* $variant, )*
        }

        impl Signal {
            /// Every signal, in index order.
            pub const ALL: &'static [Signal] = &[$(Signal::$variant,)*];

            /// The name used in law texts (LawBreaker's spelling).
            pub fn name(self) -> &'static str {
                match self { $(Signal::$variant => $name,)* }
            }

            /// How the signal may be used in a formula.
            pub const fn kind(self) -> SignalKind {
                match self { $(Signal::$variant => SignalKind::$kind,)* }
            }

            /// The signal called `name` in law texts, if avguard supplies it.
            pub fn from_name(name: &str) -> Option<Signal> {
                match name { $($name => Some(Signal::$variant),)* _ => None }
            }
        }
    };
}

signals! {
    /// Ego speed, km/h (frame speed × 3.6).
    Speed = "speed", Value;
    /// Ego longitudinal acceleration, m/s².
    Acc = "acc", Value;
    /// Brake pedal, percent.
    Brake = "brake", Value;
    /// Apollo gear position (2 = reverse).
    Gear = "gear", Value;
    /// Turn indicator: 0 none, 1 left, 2 right.
    TurnSignal = "turnSignal", Value;
    /// Planned manoeuvre at the next junction: 0 straight, 1 left, 2 right.
    Direction = "direction", Value;
    /// Number of lanes of the ego's road; 0 inside a junction.
    LaneNumber = "currentLane.number", Value;
    /// Colour of the light governing the ego lane: 0 none, 1 red, 2 yellow, 3 green, 4 black.
    LightColor = "trafficLightAhead.color", Value;
    /// 1 when that light blinks.
    LightBlink = "trafficLightAhead.isBlinking", Flag;
    /// 1 when a traffic light governs the ego lane ahead.
    SignalAhead = "signalAhead", Value;
    /// Distance to the next stop line, m.
    StoplineAhead = "stoplineAhead", Distance;
    /// Distance to the next junction entry, m (0 inside).
    JunctionAhead = "junctionAhead", Distance;
    /// Distance to the next crosswalk, m.
    CrosswalkAhead = "crosswalkAhead", Distance;
    /// Distance to the next stop-sign stop line, m.
    StopSignAhead = "stopSignAhead", Distance;
    /// Speed limit of the ego lane, km/h.
    SpeedUpper = "speedLimit.upperLimit", Value;
    /// Minimum speed, km/h (always 0: our maps carry none).
    SpeedLower = "speedLimit.lowerLimit", Value;
    /// 1 when the junction ahead is jammed.
    TrafficJam = "isTrafficJam", Flag;
    /// Horn on.
    Horn = "hornOn", Flag;
    /// High beam on.
    HighBeam = "highBeamOn", Flag;
    /// Low beam on.
    LowBeam = "lowBeamOn", Flag;
    /// Hazard lights on.
    WarningFlash = "warningFlashOn", Flag;
    /// Bumper-to-bumper gap to the nearest vehicle ahead in the ego's corridor, m.
    NpcAhead = "NPCAhead", Distance;
    /// Speed of that vehicle, m/s; +inf when there is none. LawBreaker reports 0 there, which makes
    /// `NPCAhead.speed < 0.5` ("the car ahead is stopped") true on an empty road, so that law53 demands a
    /// stop at every jammed junction whatever is ahead. With +inf an absent car is never "stopped".
    NpcAheadSpeed = "NPCAhead.speed", Value;
    /// avguard extension: time to collision with `NPCAhead`, s; +inf when not closing.
    NpcAheadTtc = "NPCAhead.ttc", Value;
    /// avguard extension: closing speed on `NPCAhead`, m/s (positive when the gap shrinks).
    NpcAheadClosing = "NPCAhead.closing", Value;
    /// Footprint gap to the nearest vehicle in any direction, m.
    NearestNpc = "NearestNPC", Distance;
    /// Speed of that vehicle, m/s (0 when there is none).
    NearestNpcSpeed = "NearestNPC.speed", Value;
    /// Footprint gap to the nearest oncoming vehicle in the 30 m forward wedge, m.
    NpcOpposite = "NPCOpposite", Distance;
    /// Speed of that vehicle, m/s (0 when there is none).
    NpcOppositeSpeed = "NPCOpposite.speed", Value;
    /// 1 when a vehicle with right of way over the ego is ahead (current frame, no lag).
    PriorityNpcAhead = "PriorityNPCAhead", Flag;
    /// 1 when a pedestrian with right of way over the ego is ahead (current frame, no lag).
    PriorityPedsAhead = "PriorityPedsAhead", Flag;
    /// 1 on frames where the ego overlaps another road user.
    Collision = "collision", Flag;
    /// 1 once the ego has reached its destination.
    Destination = "destination", Flag;
    /// avguard extension: deceleration needed to stop at the next stop line, m/s² (`v²/2d`; 0 when stopped
    /// or none ahead, +inf when moving on the line).
    StoplineDecel = "stoplineAhead.decel", Value;
    /// avguard extension: deceleration needed to stop at the next stop-sign line, m/s² (as above).
    StopSignDecel = "stopSignAhead.decel", Value;
    /// avguard extension: deceleration needed to stop at the junction entry, m/s² (0 inside the junction).
    JunctionDecel = "junctionAhead.decel", Value;
    /// avguard extension: time to reach the junction entry at the current speed, s (0 inside, +inf when
    /// stopped before it or none).
    JunctionTime = "junctionAhead.time", Value;
    /// avguard extension: ego jerk, m/s³ (change of `acc` since the previous frame over its time step; 0 on
    /// a run's first frame).
    Jerk = "jerk", Value;
    /// avguard extension: the ego's mean longitudinal acceleration over the last second, m/s² (its speed
    /// change over that second divided by the time it spans; the frame's `acc` on a run's first frame).
    /// Unlike `acc` it is read off the speed, so pedal and sensor noise on the acceleration average out and
    /// a driver who keeps going where they should be slowing shows.
    AccMean = "acc.mean1s", Value;
    /// avguard extension: the time until the ego reaches its lane's speed limit at its mean acceleration
    /// over the last second (`acc.mean1s`), s: 0 at or above the limit, +inf when not speeding up. The
    /// kinematic precursor of speeding, as `junctionAhead.time` is of entering a junction.
    SpeedLimitTime = "speedLimit.time", Value;
    /// avguard extension: the smallest footprint gap to any road user within the next 5 s at constant
    /// velocities, m (+inf when none).
    ClosestApproach = "closestApproach", Distance;
    /// avguard extension: when that closest approach is reached, s.
    ClosestApproachTime = "closestApproach.time", Value;
    /// avguard extension: when the footprints would first touch (2-D time to collision), s; +inf when they
    /// would not within 5 s.
    ClosestApproachTtc = "closestApproach.ttc", Value;
    /// avguard extension: when the footprints would first touch if the ego kept its current acceleration
    /// (braking to a standstill and staying there) and every road user its velocity (a modified time to
    /// collision), s; +inf when they would not within 5 s.
    ClosestApproachAccTtc = "closestApproach.accTtc", Value;
    /// avguard extension: the most critical priority road user's distance to where its path crosses the
    /// ego's, m (+inf when none).
    PriorityConflict = "PriorityConflict", Distance;
    /// avguard extension: its time to reach that conflict area at its speed, s.
    PriorityConflictTime = "PriorityConflict.time", Value;
    /// avguard extension: the ego's time to reach the conflict area at its speed, s.
    PriorityConflictEgoTime = "PriorityConflict.egoTime", Value;
    /// avguard extension: the predicted gap between the ego's and its occupancy of the area, s (0: both in
    /// it at once).
    PriorityConflictGap = "PriorityConflict.gap", Value;
    /// avguard extension: 1 when RSS (CARLA's default parameters) finds the ego in a dangerous situation with
    /// some road user.
    RssDangerous = "rssDangerous", Flag;
    /// Scenario time of day, hours (12:30 = 12.5).
    Time = "Time", Value;
    /// Rain, 0..1.
    Rain = "rain", Value;
    /// Fog, 0..1.
    Fog = "fog", Value;
    /// Snow, 0..1.
    Snow = "snow", Value;
    /// Visibility, 0..100.
    Visibility = "visibility", Value;
}

/// The avguard prediction signals computed from one frame (everything of [`motion`] and `rssDangerous`).
const PREDICTION_SIGNALS: SignalSet = {
    let mut bits = 0u64;
    let mut i = Signal::StoplineDecel as usize;
    while i <= Signal::RssDangerous as usize {
        bits |= 1 << i;
        i += 1;
    }
    // `jerk`, `acc.mean1s` and `speedLimit.time` (from `acc.mean1s`) need earlier frames: the stream
    // sets them.
    SignalSet(
        bits & !(1 << Signal::Jerk as usize)
            & !(1 << Signal::AccMean as usize)
            & !(1 << Signal::SpeedLimitTime as usize),
    )
};

/// Number of signals (the length of [`Signals`]' array).
pub const N_SIGNALS: usize = Signal::Visibility as usize + 1;

/// LawBreaker signals that avguard frames cannot supply; a law using one is rejected with a clear error.
pub const UNAVAILABLE: &[&str] = &[
    "isLaneChanging",
    "isOverTaking",
    "isTurningAround",
    "honkingAllowed",
    "streetLightOn",
    "fogLightOn",
    "engineOn",
    "manualIntervention",
    "specialLocationAhead",
    "specialLocationAhead.type",
    "currentLane.direction",
    "trafficLightAhead.direction.color",
    "trafficLightAhead.direction.isBlinking",
];

/// Scenario constants that are not part of a frame (LawBreaker's `time` and `weather` settings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignalContext {
    /// Time of day, hours (default 12:00).
    pub time_h: f64,
    /// Rain, 0..1 (default 0).
    pub rain: f64,
    /// Fog, 0..1 (default 0).
    pub fog: f64,
    /// Snow, 0..1 (default 0).
    pub snow: f64,
    /// Visibility, 0..100 (default 100).
    pub visibility: f64,
}

impl Default for SignalContext {
    fn default() -> Self {
        SignalContext {
            time_h: 12.0,
            rain: 0.0,
            fog: 0.0,
            snow: 0.0,
            visibility: 100.0,
        }
    }
}

/// The value of every signal at one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signals {
    values: [f64; N_SIGNALS],
}

/// The value of every signal before a frame is read: 0, except distances, the speeds of absent vehicles,
/// `NPCAhead.ttc` and the times of the prediction signals (+inf), and the scenario defaults. Built at compile time so that a frame starts from
/// one copy.
const DEFAULT_VALUES: [f64; N_SIGNALS] = {
    let mut v = [0.0; N_SIGNALS];
    let mut i = 0;
    while i < N_SIGNALS {
        if matches!(Signal::ALL[i].kind(), SignalKind::Distance) {
            v[i] = f64::INFINITY;
        }
        i += 1;
    }
    v[Signal::NpcAheadTtc as usize] = f64::INFINITY;
    v[Signal::NpcAheadSpeed as usize] = f64::INFINITY;
    v[Signal::NearestNpcSpeed as usize] = f64::INFINITY;
    v[Signal::NpcOppositeSpeed as usize] = f64::INFINITY;
    v[Signal::JunctionTime as usize] = f64::INFINITY;
    v[Signal::SpeedLimitTime as usize] = f64::INFINITY;
    v[Signal::ClosestApproachTime as usize] = f64::INFINITY;
    v[Signal::ClosestApproachTtc as usize] = f64::INFINITY;
    v[Signal::ClosestApproachAccTtc as usize] = f64::INFINITY;
    v[Signal::PriorityConflictTime as usize] = f64::INFINITY;
    v[Signal::PriorityConflictEgoTime as usize] = f64::INFINITY;
    v[Signal::PriorityConflictGap as usize] = f64::INFINITY;
    // SignalContext::default(), spelled out because trait methods are not const.
    v[Signal::Time as usize] = 12.0;
    v[Signal::Visibility as usize] = 100.0;
    v
};

impl Default for Signals {
    /// Every signal 0 except distances, the speeds of absent vehicles, `NPCAhead.ttc` and the times of the
    /// prediction signals (+inf), and the scenario defaults.
    fn default() -> Self {
        Signals {
            values: DEFAULT_VALUES,
        }
    }
}

/// A set of signals, e.g. the ones some loaded atom reads (bit `i` = the signal with index `i`).
///
/// [`Signals::from_frame_needed`] uses it to skip what nobody reads, above all the obstacle geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SignalSet(u64);

const _: () = assert!(
    N_SIGNALS <= 64,
    "SignalSet holds one bit per signal in a u64"
);

impl SignalSet {
    /// No signal.
    pub const EMPTY: SignalSet = SignalSet(0);
    /// Every signal.
    pub const ALL: SignalSet = SignalSet(if N_SIGNALS == 64 {
        u64::MAX
    } else {
        (1u64 << N_SIGNALS) - 1
    });

    /// Adds a signal.
    pub fn insert(&mut self, sig: Signal) {
        self.0 |= 1 << (sig as u32);
    }

    /// True when `sig` is in the set.
    pub fn contains(self, sig: Signal) -> bool {
        self.0 >> (sig as u32) & 1 == 1
    }

    /// The union of two sets.
    pub fn union(self, other: SignalSet) -> SignalSet {
        SignalSet(self.0 | other.0)
    }

    /// True when the two sets share a signal.
    pub fn intersects(self, other: SignalSet) -> bool {
        self.0 & other.0 != 0
    }

    /// True when some signal of `sigs` is in the set.
    pub fn contains_any(self, sigs: &[Signal]) -> bool {
        sigs.iter().any(|&s| self.contains(s))
    }

    /// Which obstacle signal groups the set reads.
    pub fn obstacle_needs(self) -> ObstacleNeeds {
        use Signal::*;
        ObstacleNeeds {
            ahead: self.contains_any(&[NpcAhead, NpcAheadSpeed, NpcAheadTtc, NpcAheadClosing]),
            nearest: self.contains_any(&[NearestNpc, NearestNpcSpeed]),
            opposite: self.contains_any(&[NpcOpposite, NpcOppositeSpeed]),
            priority_npc: self.contains(PriorityNpcAhead),
            priority_peds: self.contains(PriorityPedsAhead),
        }
    }

    /// Which motion signal groups the set reads.
    pub fn motion_needs(self) -> MotionNeeds {
        use Signal::*;
        MotionNeeds {
            cpa: self.contains_any(&[ClosestApproach, ClosestApproachTime, ClosestApproachTtc]),
            contact_accelerating: self.contains(ClosestApproachAccTtc),
            priority_conflict: self.contains_any(&[
                PriorityConflict,
                PriorityConflictTime,
                PriorityConflictEgoTime,
                PriorityConflictGap,
            ]),
        }
    }
}

impl Extend<Signal> for SignalSet {
    fn extend<I: IntoIterator<Item = Signal>>(&mut self, iter: I) {
        for sig in iter {
            self.insert(sig);
        }
    }
}

impl FromIterator<Signal> for SignalSet {
    fn from_iter<I: IntoIterator<Item = Signal>>(iter: I) -> Self {
        let mut set = SignalSet::EMPTY;
        for sig in iter {
            set.insert(sig);
        }
        set
    }
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

impl Signals {
    /// Computes every signal from a frame and the scenario constants (`jerk`, which needs the previous
    /// frame, is 0 and `acc.mean1s` is the frame's `acc`: use a [`SignalStream`] for a run).
    pub fn from_frame(f: &Frame, ctx: &SignalContext) -> Signals {
        Self::from_frame_needed(f, ctx, SignalSet::ALL)
    }

    /// Computes the signals of `needed` from a frame and the scenario constants; every signal in `needed`
    /// has exactly its [`Signals::from_frame`] value. The cheap per-frame signals are always computed; the
    /// obstacle-derived ones outside `needed` keep their "no such NPC" defaults and their geometry is
    /// skipped (all of it when no obstacle signal is needed).
    pub fn from_frame_needed(f: &Frame, ctx: &SignalContext, needed: SignalSet) -> Signals {
        let mut s = Signals::default();
        s.fill_from_frame(f, ctx, needed, &mut Vec::new());
        s
    }

    /// Overwrites every signal [`Signals::from_frame_needed`] computes for `needed`; the others keep
    /// their values. Starting from the defaults with the same `needed` set, the result is
    /// `from_frame_needed`'s (a [`SignalStream`] refills one buffer frame after frame).
    /// `movers` is scratch space (its contents on entry do not matter).
    pub(crate) fn fill_from_frame(
        &mut self,
        f: &Frame,
        ctx: &SignalContext,
        needed: SignalSet,
        movers: &mut Vec<Mover>,
    ) {
        let s = self;
        s.set(Signal::Speed, f.speed_mps * 3.6);
        s.set(Signal::Acc, f.accel_mps2);
        // Without earlier frames the mean acceleration is the frame's own (the stream overwrites both).
        s.set(Signal::AccMean, f.accel_mps2);
        s.set(
            Signal::SpeedLimitTime,
            motion::time_to_limit_s(f.speed_mps, f.speed_limit_mps, f.accel_mps2),
        );
        s.set(Signal::Brake, f64::from(f.brake_pct));
        s.set(Signal::Gear, f64::from(f.gear));
        // Apollo's TurnSignal values are LawBreaker's constants (left 1, right 2); hazard counts as none.
        let turn = if f.turn_signal == turn_signal::HAZARD {
            0
        } else {
            f.turn_signal
        };
        s.set(Signal::TurnSignal, f64::from(turn));
        s.set(Signal::Direction, f64::from(f.planned_turn));
        s.set(Signal::LaneNumber, f64::from(f.lane_number));
        s.set(Signal::LightColor, f64::from(f.light_color));
        s.set(Signal::LightBlink, flag(f.light_blink));
        s.set(Signal::SignalAhead, flag(f.signal_ahead));
        s.set(Signal::StoplineAhead, f.stopline_dist_m.max(0.0));
        s.set(Signal::JunctionAhead, f.junction_dist_m.max(0.0));
        s.set(Signal::CrosswalkAhead, f.crosswalk_dist_m.max(0.0));
        s.set(Signal::StopSignAhead, f.stopsign_dist_m.max(0.0));
        s.set(Signal::SpeedUpper, f.speed_limit_mps * 3.6);
        s.set(Signal::SpeedLower, 0.0);
        s.set(Signal::TrafficJam, flag(f.traffic_jam));
        s.set(Signal::Horn, flag(f.horn));
        s.set(Signal::HighBeam, flag(f.high_beam));
        s.set(Signal::LowBeam, flag(f.low_beam));
        s.set(
            Signal::WarningFlash,
            flag(f.hazard || f.turn_signal == turn_signal::HAZARD),
        );
        s.set(Signal::Collision, flag(f.collision));
        s.set(Signal::Destination, flag(f.destination));
        // When the motion signals of every road user and RSS are both needed, each road user is put into
        // the ego frame once, for them and the obstacle signals alike (its relative heading's sine and
        // cosine are most of that). For one of them alone, writing the shared copies costs more than it
        // saves.
        let motion = needed.motion_needs();
        let shared = needed.contains(Signal::RssDangerous)
            && (motion.cpa || motion.contact_accelerating)
            && !f.obstacles.is_empty();
        if shared {
            let frame = crate::geometry::EgoFrame::of(f);
            movers.clear();
            movers.extend(f.obstacles.iter().map(|o| frame.mover(o)));
        }
        let movers: Option<&[Mover]> = shared.then_some(movers.as_slice());
        let o = match movers {
            Some(m) => ObstacleSignals::from_movers(f, m, needed.obstacle_needs()),
            None => ObstacleSignals::from_frame_needed(f, needed.obstacle_needs()),
        };
        s.set(Signal::NpcAhead, o.npc_ahead_m);
        s.set(Signal::NpcAheadSpeed, o.npc_ahead_speed_mps);
        s.set(Signal::NpcAheadTtc, o.npc_ahead_ttc_s);
        s.set(Signal::NpcAheadClosing, o.npc_ahead_closing_mps);
        s.set(Signal::NearestNpc, o.nearest_npc_m);
        s.set(Signal::NearestNpcSpeed, o.nearest_npc_speed_mps);
        s.set(Signal::NpcOpposite, o.npc_opposite_m);
        s.set(Signal::NpcOppositeSpeed, o.npc_opposite_speed_mps);
        s.set(Signal::PriorityNpcAhead, flag(o.priority_npc_ahead));
        s.set(Signal::PriorityPedsAhead, flag(o.priority_peds_ahead));
        if needed.intersects(PREDICTION_SIGNALS) {
            s.set_prediction(f, needed, movers);
        }
        s.set_context(ctx);
    }

    /// The avguard prediction signals of `needed` (see [`motion`]); the others keep their defaults.
    /// `movers`, when given, are the frame's road users in the ego frame (one per obstacle, in order).
    fn set_prediction(&mut self, f: &Frame, needed: SignalSet, movers: Option<&[Mover]>) {
        use motion::{required_decel_mps2, time_to_reach_s};
        let v = f.speed_mps;
        if needed.contains(Signal::StoplineDecel) {
            self.set(
                Signal::StoplineDecel,
                required_decel_mps2(v, f.stopline_dist_m.max(0.0)),
            );
        }
        if needed.contains(Signal::StopSignDecel) {
            self.set(
                Signal::StopSignDecel,
                required_decel_mps2(v, f.stopsign_dist_m.max(0.0)),
            );
        }
        // Inside the junction (distance 0) there is no entry left to stop at, and it has been reached.
        let junction_m = f.junction_dist_m.max(0.0);
        if needed.contains(Signal::JunctionDecel) && junction_m > 0.0 {
            self.set(Signal::JunctionDecel, required_decel_mps2(v, junction_m));
        }
        if needed.contains(Signal::JunctionTime) {
            self.set(Signal::JunctionTime, time_to_reach_s(v, junction_m));
        }
        let motion = needed.motion_needs();
        let rss = needed.contains(Signal::RssDangerous);
        let (m, dangerous) = match movers {
            Some(movers) => (
                MotionSignals::from_movers(f, movers, motion),
                rss && crate::rss::RssParams::CARLA.dangerous_movers(f, movers),
            ),
            None => (
                MotionSignals::from_frame_needed(f, motion),
                rss && crate::rss::RssParams::CARLA.dangerous(f),
            ),
        };
        self.set(Signal::ClosestApproach, m.cpa_m);
        self.set(Signal::ClosestApproachTime, m.cpa_time_s);
        self.set(Signal::ClosestApproachTtc, m.cpa_ttc_s);
        self.set(Signal::ClosestApproachAccTtc, m.accel_ttc_s);
        self.set(Signal::PriorityConflict, m.conflict_m);
        self.set(Signal::PriorityConflictTime, m.conflict_time_s);
        self.set(Signal::PriorityConflictEgoTime, m.conflict_ego_time_s);
        self.set(Signal::PriorityConflictGap, m.conflict_gap_s);
        if rss {
            self.set(Signal::RssDangerous, flag(dangerous));
        }
    }

    /// Overwrites the scenario constants.
    pub fn set_context(&mut self, ctx: &SignalContext) {
        self.set(Signal::Time, ctx.time_h);
        self.set(Signal::Rain, ctx.rain);
        self.set(Signal::Fog, ctx.fog);
        self.set(Signal::Snow, ctx.snow);
        self.set(Signal::Visibility, ctx.visibility);
    }

    /// The value of one signal.
    #[inline]
    pub fn get(&self, sig: Signal) -> f64 {
        self.values[sig as usize]
    }

    /// Sets one signal (used by tests and by callers that compute signals themselves).
    #[inline]
    pub fn set(&mut self, sig: Signal, value: f64) {
        self.values[sig as usize] = value;
    }
}

#[cfg(test)]
mod tests;
