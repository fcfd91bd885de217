//! The signals of a run, frame after frame: [`Signals::from_frame_needed`] plus the signals that need the
//! previous frame (`jerk`).
//!
//! Every caller that steps a run (the monitor's tracker, `avguard laws eval`, the scenario generator's
//! law check, the live bridge through the monitor) goes through a [`SignalStream`], so a recorded session
//! re-evaluates to the same signals as it had live.

use super::{Signal, SignalContext, SignalSet, Signals};
use crate::frame::Frame;

/// One run's signal computation: the scenario constants, the signals to compute, and what the next frame
/// needs from the previous one.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalStream {
    context: SignalContext,
    needed: SignalSet,
    /// The previous frame's time and longitudinal acceleration.
    prev: Option<(f64, f64)>,
    /// The signals of the latest frame, refilled in place (what `needed` leaves out stays at its default).
    current: Signals,
}

impl SignalStream {
    /// A stream at the start of a run computing the signals of `needed` (the others keep their defaults,
    /// as with [`Signals::from_frame_needed`]).
    pub fn new(context: SignalContext, needed: SignalSet) -> SignalStream {
        SignalStream {
            context,
            needed,
            prev: None,
            current: Signals::default(),
        }
    }

    /// The signals of the next frame of the run.
    ///
    /// `jerk` is `(acc − previous acc) / (t − previous t)`; it is 0 on the first frame and whenever the
    /// time step is not a positive finite number (a repeated or out-of-order stamp), which also restarts
    /// the difference from this frame.
    pub fn next(&mut self, f: &Frame) -> &Signals {
        self.current.fill_from_frame(f, &self.context, self.needed);
        let jerk = match self.prev {
            Some((t, acc)) if f.t - t > 0.0 && (f.t - t).is_finite() => {
                (f.accel_mps2 - acc) / (f.t - t)
            }
            _ => 0.0,
        };
        // A non-finite acceleration gives no jerk either (nor does it poison the next frame's).
        self.current
            .set(Signal::Jerk, if jerk.is_finite() { jerk } else { 0.0 });
        self.prev = Some((f.t, f.accel_mps2));
        &self.current
    }

    /// Forgets the previous frame (a new run starts).
    pub fn reset(&mut self) {
        self.prev = None;
    }

    /// The signals this stream computes.
    pub fn needed(&self) -> SignalSet {
        self.needed
    }
}
