//! The domain snapshot every stage of avguard consumes: one [`Frame`] per tick.
//!
//! A frame is what the simulator bridge assembles from the latest message of each channel, what the
//! scenario generator emits each step, and what a row of an HDF5 log holds (the log format is specified in
//! `docs/INTERFACES.md` §2; field names here match its dataset names). Units are SI unless a name says
//! otherwise; positions are in the map frame (ENU, x east, y north); headings are radians, 0 = east,
//! counter-clockwise positive.
//!
//! Frames carry raw, physical quantities only. The signals of LawBreaker's vocabulary (speed in km/h,
//! `NPCAhead`, `PriorityNPCAhead`, ...) are derived from a frame by the `signals` module, never stored.
//!
//! The ego footprint is LawBreaker's Lincoln MKZ, [`EGO_LENGTH_M`] × [`EGO_WIDTH_M`], with the frame's
//! reference point (`x`, `y`) at the rear-axle centre: the front bumper is [`EGO_FRONT_M`] ahead of it and
//! the rear bumper [`EGO_REAR_M`] (negative: behind it). These constants are the one copy of those figures;
//! the geometry, the signals, RSS, the HD-map context and the scenario generator use them.

/// Most other road users one frame may hold. Every source of frames (the bridge's obstacle messages, log
/// files) refuses more with an error naming the limit: the signals look at every obstacle of every frame,
/// so this bounds the work and memory one frame can cost. Dense urban perception reports a few hundred.
pub const MAX_OBSTACLES: usize = 1024;

/// Ego length, m.
pub const EGO_LENGTH_M: f64 = 4.7;
/// Ego width, m.
pub const EGO_WIDTH_M: f64 = 2.06;
/// Front bumper, m ahead of the reference point.
pub const EGO_FRONT_M: f64 = 3.6986;
/// Rear bumper, m ahead of the reference point (negative: behind it).
pub const EGO_REAR_M: f64 = -1.0014;

/// Apollo `Chassis.GearPosition` values (the `gear` field).
pub mod gear {
    /// GEAR_NEUTRAL.
    pub const NEUTRAL: i32 = 0;
    /// GEAR_DRIVE.
    pub const DRIVE: i32 = 1;
    /// GEAR_REVERSE.
    pub const REVERSE: i32 = 2;
    /// GEAR_PARKING.
    pub const PARKING: i32 = 3;
}

/// Apollo `VehicleSignal.TurnSignal` values (the `turn_signal` field), also LawBreaker's `left`/`right`.
pub mod turn_signal {
    /// TURN_NONE.
    pub const NONE: i32 = 0;
    /// TURN_LEFT.
    pub const LEFT: i32 = 1;
    /// TURN_RIGHT.
    pub const RIGHT: i32 = 2;
    /// TURN_HAZARD_WARNING (Apollo 8+).
    pub const HAZARD: i32 = 3;
}

/// Apollo `TrafficLight.Color` values (the `light_color` field), also LawBreaker's `red`/`yellow`/`green`.
pub mod light_color {
    /// UNKNOWN; also "no light governs the ego lane".
    pub const NONE: i32 = 0;
    /// RED.
    pub const RED: i32 = 1;
    /// YELLOW.
    pub const YELLOW: i32 = 2;
    /// GREEN.
    pub const GREEN: i32 = 3;
    /// BLACK (light off).
    pub const BLACK: i32 = 4;
}

/// Planned manoeuvre at the next junction (the `planned_turn` field, LawBreaker's `direction`).
pub mod planned_turn {
    /// Straight on, or no junction ahead.
    pub const STRAIGHT: i32 = 0;
    /// Left turn.
    pub const LEFT: i32 = 1;
    /// Right turn.
    pub const RIGHT: i32 = 2;
}

/// Apollo `PerceptionObstacle.Type` values (the obstacle `kind` field).
pub mod obstacle_type {
    /// UNKNOWN.
    pub const UNKNOWN: i32 = 0;
    /// UNKNOWN_MOVABLE.
    pub const UNKNOWN_MOVABLE: i32 = 1;
    /// UNKNOWN_UNMOVABLE.
    pub const UNKNOWN_UNMOVABLE: i32 = 2;
    /// PEDESTRIAN.
    pub const PEDESTRIAN: i32 = 3;
    /// BICYCLE.
    pub const BICYCLE: i32 = 4;
    /// VEHICLE.
    pub const VEHICLE: i32 = 5;
}

/// One other road user as perceived at a frame (a row of the `/obstacles` table of a log).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obstacle {
    /// Track id, stable across frames for the same road user.
    pub id: i32,
    /// Apollo `PerceptionObstacle.Type` (see [`obstacle_type`]).
    pub kind: i32,
    /// Centre of the footprint in the map frame, m.
    pub x: f64,
    /// Centre of the footprint in the map frame, m.
    pub y: f64,
    /// Heading in the map frame, rad.
    pub heading: f64,
    /// Speed over ground, m/s, ≥ 0.
    pub speed_mps: f64,
    /// Footprint length along `heading`, m.
    pub length: f64,
    /// Footprint width, m.
    pub width: f64,
    /// True when this road user has right of way over the ego (e.g. oncoming traffic during an unprotected
    /// left turn, a pedestrian on the crosswalk ahead).
    pub priority: bool,
}

#[cfg(test)]
impl Obstacle {
    /// A 4 m × 2 m vehicle without priority, id 1 (tests).
    pub(crate) fn car(x: f64, y: f64, heading: f64, speed_mps: f64) -> Obstacle {
        Obstacle {
            id: 1,
            kind: obstacle_type::VEHICLE,
            x,
            y,
            heading,
            speed_mps,
            length: 4.0,
            width: 2.0,
            priority: false,
        }
    }
}

/// The ego vehicle's state and its road context at one tick.
///
/// Distances to road features are measured along the ego lane from the ego's front bumper and are
/// `f64::INFINITY` when there is no such feature ahead.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Simulation time, s (from message timestamps, never the wall clock).
    pub t: f64,
    /// Ego reference point (rear-axle centre) in the map frame, m.
    pub x: f64,
    /// Ego reference point in the map frame, m.
    pub y: f64,
    /// Ego reference point in the map frame, m.
    pub z: f64,
    /// Ego heading, rad, ENU.
    pub heading: f64,
    /// Ego speed, m/s, ≥ 0.
    pub speed_mps: f64,
    /// Ego longitudinal acceleration, m/s².
    pub accel_mps2: f64,
    /// Apollo gear position (see [`gear`]).
    pub gear: i32,
    /// Throttle pedal, percent.
    pub throttle_pct: f32,
    /// Brake pedal, percent.
    pub brake_pct: f32,
    /// Steering, percent of full scale, left positive.
    pub steering_pct: f32,
    /// Turn indicator (see [`turn_signal`]).
    pub turn_signal: i32,
    /// Colour of the light governing the ego lane (see [`light_color`]); `NONE` when there is none.
    pub light_color: i32,
    /// True when that light blinks.
    pub light_blink: bool,
    /// Distance along the ego lane to the next stop line, m.
    pub stopline_dist_m: f64,
    /// Distance to the next junction entry, m; 0 inside a junction.
    pub junction_dist_m: f64,
    /// Distance to the next crosswalk, m.
    pub crosswalk_dist_m: f64,
    /// Distance to the next stop-sign stop line, m.
    pub stopsign_dist_m: f64,
    /// Speed limit of the ego lane, m/s.
    pub speed_limit_mps: f64,
    /// Number of lanes of the ego's road; 0 inside a junction.
    pub lane_number: i32,
    /// Planned manoeuvre at the next junction (see [`planned_turn`]).
    pub planned_turn: i32,
    /// True when a traffic light governs the ego lane ahead.
    pub signal_ahead: bool,
    /// True when the junction ahead is jammed (≥ 3 vehicles below 1 m/s in it).
    pub traffic_jam: bool,
    /// Horn on.
    pub horn: bool,
    /// High beam on.
    pub high_beam: bool,
    /// Low beam on.
    pub low_beam: bool,
    /// Hazard lights on.
    pub hazard: bool,
    /// True on frames where the ego overlaps another road user.
    pub collision: bool,
    /// True once the ego has reached its destination.
    pub destination: bool,
    /// Other road users at this frame.
    pub obstacles: Vec<Obstacle>,
}

impl Frame {
    /// Moves every road user `lag_s` ahead along its heading at its speed: where it is now if the frame
    /// reports it `lag_s` late, as a perception stack with latency does (constant velocity over the lag;
    /// [`crate::geometry::latency`] estimates the lag). A road user whose speed or heading is not finite,
    /// or a lag that is not, is left where it is.
    pub fn advance_road_users(&mut self, lag_s: f64) {
        if !lag_s.is_finite() || lag_s == 0.0 {
            return;
        }
        for o in &mut self.obstacles {
            if o.speed_mps.is_finite() && o.heading.is_finite() {
                let (sin, cos) = o.heading.sin_cos();
                o.x += lag_s * o.speed_mps * cos;
                o.y += lag_s * o.speed_mps * sin;
            }
        }
    }

    /// Sets the road fields (what an HD map or a road context gives: the light, the distances to the
    /// features ahead, the speed limit, the lane count, the planned turn, the signal and jam flags) to
    /// those of a source without a map: nothing ahead, no limit, one lane, no light, as
    /// [`Frame::default`] has them. The pose, the vehicle's own signals, the labels and the road users
    /// (their `priority` included) are left as they are.
    pub fn clear_road_fields(&mut self) {
        let d = Frame::default();
        self.light_color = d.light_color;
        self.light_blink = d.light_blink;
        self.stopline_dist_m = d.stopline_dist_m;
        self.junction_dist_m = d.junction_dist_m;
        self.crosswalk_dist_m = d.crosswalk_dist_m;
        self.stopsign_dist_m = d.stopsign_dist_m;
        self.speed_limit_mps = d.speed_limit_mps;
        self.lane_number = d.lane_number;
        self.planned_turn = d.planned_turn;
        self.signal_ahead = d.signal_ahead;
        self.traffic_jam = d.traffic_jam;
    }
}

impl Default for Frame {
    /// A stationary ego at the origin on an open road with nothing around: every distance is infinite.
    fn default() -> Self {
        Frame {
            t: 0.0,
            x: 0.0,
            y: 0.0,
            z: 0.0,
            heading: 0.0,
            speed_mps: 0.0,
            accel_mps2: 0.0,
            gear: gear::DRIVE,
            throttle_pct: 0.0,
            brake_pct: 0.0,
            steering_pct: 0.0,
            turn_signal: turn_signal::NONE,
            light_color: light_color::NONE,
            light_blink: false,
            stopline_dist_m: f64::INFINITY,
            junction_dist_m: f64::INFINITY,
            crosswalk_dist_m: f64::INFINITY,
            stopsign_dist_m: f64::INFINITY,
            speed_limit_mps: f64::INFINITY,
            lane_number: 1,
            planned_turn: planned_turn::STRAIGHT,
            signal_ahead: false,
            traffic_jam: false,
            horn: false,
            high_beam: false,
            low_beam: false,
            hazard: false,
            collision: false,
            destination: false,
            obstacles: Vec::new(),
        }
    }
}
