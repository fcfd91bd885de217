//! The signals of a run, frame after frame: [`Signals::from_frame_needed`] plus the signals that need the
//! earlier frames (`jerk`, `acc.mean1s` and `speedLimit.time`, which reads it).
//!
//! Every caller that steps a run (the monitor's tracker, `avguard laws eval`, the scenario generator's
//! law check, the live bridge through the monitor) goes through a [`SignalStream`], so a recorded session
//! re-evaluates to the same signals as it had live.

use std::collections::VecDeque;

use super::{Signal, SignalContext, SignalSet, Signals};
use crate::frame::Frame;
use crate::geometry::{finite_or_zero, Mover};

/// The span `acc.mean1s` averages over, s.
pub const ACC_MEAN_WINDOW_S: f64 = 1.0;

/// At most this many earlier frames are kept for `acc.mean1s`; at a frame rate so high that a second
/// holds more, the mean spans the latest ones only (memory stays bounded whatever the input).
const ACC_MEAN_MAX_FRAMES: usize = 256;

/// The largest change of a speed (m/s) or an acceleration (m/s²) between frames that the stream's
/// differences treat as none (`jerk`, `acc.mean1s`): far below any sensor's resolution, far above the
/// rounding of a value that went through a message encoding.
const NEGLIGIBLE_CHANGE: f64 = 1e-9;

/// `new − old`, or 0 when that is at most [`NEGLIGIBLE_CHANGE`] in size.
fn change(new: f64, old: f64) -> f64 {
    let d = new - old;
    if d.abs() <= NEGLIGIBLE_CHANGE {
        0.0
    } else {
        d
    }
}

/// One run's signal computation: the scenario constants, the signals to compute, and what the next frame
/// needs from the previous one.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalStream {
    context: SignalContext,
    needed: SignalSet,
    /// The previous frame's time and longitudinal acceleration.
    prev: Option<(f64, f64)>,
    /// Time and speed (m/s) of the run's frames of the last [`ACC_MEAN_WINDOW_S`], oldest first.
    speeds: VecDeque<(f64, f64)>,
    /// The signals of the latest frame, refilled in place (what `needed` leaves out stays at its default).
    current: Signals,
    /// Scratch space for the frame's road users in the ego frame, kept to save an allocation per frame.
    movers: Scratch,
}

/// Scratch space: its contents say nothing about the stream, so any two are equal.
#[derive(Debug, Clone, Default)]
struct Scratch(Vec<Mover>);

impl PartialEq for Scratch {
    fn eq(&self, _: &Scratch) -> bool {
        true
    }
}

impl SignalStream {
    /// A stream at the start of a run computing the signals of `needed` (the others keep their defaults,
    /// as with [`Signals::from_frame_needed`]).
    pub fn new(context: SignalContext, needed: SignalSet) -> SignalStream {
        SignalStream {
            context,
            needed,
            prev: None,
            speeds: VecDeque::new(),
            current: Signals::default(),
            movers: Scratch::default(),
        }
    }

    /// The signals of the next frame of the run.
    ///
    /// `jerk` is `(acc − previous acc) / (t − previous t)`; it is 0 on the first frame and whenever the
    /// time step is not a positive finite number (a repeated or out-of-order stamp), which also restarts
    /// the difference from this frame.
    ///
    /// `acc.mean1s` is `(v − v₀) / (t − t₀)` for the oldest frame `(t₀, v₀)` of the run no more than
    /// `ACC_MEAN_WINDOW_S` before this one; the frame's own `acc` when there is none. A stamp that
    /// is not later than the previous one, or a non-finite time or speed, restarts the window.
    ///
    /// In both differences a change of at most 10⁻⁹ (m/s, m/s²) counts as none: a speed or an
    /// acceleration that went through a message encoding (a velocity vector's length, say) comes back a
    /// rounding error off, and a constant acceleration must still give a jerk of exactly 0, where learned
    /// thresholds such as `jerk<=0` sit.
    pub fn next(&mut self, f: &Frame) -> &Signals {
        self.current
            .fill_from_frame(f, &self.context, self.needed, &mut self.movers.0);
        let jerk = match self.prev {
            Some((t, acc)) if f.t - t > 0.0 && (f.t - t).is_finite() => {
                change(f.accel_mps2, acc) / (f.t - t)
            }
            _ => 0.0,
        };
        // A non-finite acceleration gives no jerk either (nor does it poison the next frame's).
        self.current.set(Signal::Jerk, finite_or_zero(jerk));
        self.prev = Some((f.t, f.accel_mps2));
        let mean = self.mean_acceleration(f);
        self.current.set(Signal::AccMean, mean);
        self.current.set(
            Signal::SpeedLimitTime,
            super::motion::time_to_limit_s(f.speed_mps, f.speed_limit_mps, mean),
        );
        &self.current
    }

    /// `acc.mean1s` of frame `f` (see [`SignalStream::next`]); records `f` in the window.
    fn mean_acceleration(&mut self, f: &Frame) -> f64 {
        let (t, v) = (f.t, f.speed_mps);
        if !(t.is_finite() && v.is_finite()) {
            self.speeds.clear();
            return finite_or_zero(f.accel_mps2);
        }
        if self.speeds.back().is_some_and(|&(last, _)| t <= last) {
            self.speeds.clear();
        }
        while self
            .speeds
            .front()
            .is_some_and(|&(t0, _)| t - t0 > ACC_MEAN_WINDOW_S + 1e-9)
        {
            self.speeds.pop_front();
        }
        let mean = match self.speeds.front() {
            Some(&(t0, v0)) => change(v, v0) / (t - t0),
            None => f.accel_mps2,
        };
        if self.speeds.len() == ACC_MEAN_MAX_FRAMES {
            self.speeds.pop_front();
        }
        self.speeds.push_back((t, v));
        finite_or_zero(mean)
    }

    /// Forgets the previous frame (a new run starts).
    pub fn reset(&mut self) {
        self.prev = None;
        self.speeds.clear();
    }

    /// The signals this stream computes.
    pub fn needed(&self) -> SignalSet {
        self.needed
    }
}

/// Every signal of every frame of a run, as [`SignalStream`] computes them with all signals needed:
/// `table[i][k]` is signal `Signal::ALL[i]` on frame `k` (the table `avguard laws signals` writes and the
/// Python package's `avguard.signals` returns).
pub fn signal_table(frames: &[Frame], context: SignalContext) -> Vec<Vec<f64>> {
    let mut table = vec![Vec::with_capacity(frames.len()); Signal::ALL.len()];
    let mut stream = SignalStream::new(context, SignalSet::ALL);
    for frame in frames {
        let values = stream.next(frame);
        for (column, &sig) in table.iter_mut().zip(Signal::ALL) {
            column.push(values.get(sig));
        }
    }
    table
}
