//! What the abstraction search keeps of the training runs.
//!
//! **Recording** ([`Recorder`]): every frame of every run goes once through the same tracker as learning
//! and the runtime (so the predicate values are the ones a [`crate::Session`] will see), which also
//! evaluates every candidate atom of every property into a bitset and keeps the values of the numeric
//! signals that get thresholds ([`RunRecord`]).
//!
//! **Compression** ([`PropertyData`]): per property, each run is cut at its first unsafe frame (as a
//! learning trace is) and every candidate becomes its list of *toggles*, the frames where its value
//! changes. Runs are long and predicates change rarely, so a run of a few hundred frames becomes a few
//! toggles per candidate; the search then works on segments of constant state, never on frames.

use laws::signals::SignalSet;
use laws::{Atom, Frame, Signal, SignalContext};
use serde::{Deserialize, Serialize};

use crate::abstraction::{Compiled, ExtraHandles, PropertyDef, Tracker};
use crate::error::ModelError;
use crate::spec::ResolvedProperty;
use laws::LawSource;

/// Where a candidate's value comes from in a [`RunRecord`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Bit `i` of the recorded bitset (an atom or a window predicate).
    Bit(usize),
    /// `value <= c` on recorded column `i` (a signal).
    AtMost(usize, f64),
    /// `value > c` on recorded column `i` (an obligation's pending age in frames, −1 when none).
    Above(usize, f64),
}

/// One run as recorded: frame times, candidate bits, signal values, and each property's first unsafe
/// frame.
///
/// Serializable so that runs recorded on other machines can be learned from together (the Python
/// package's Ray learning); deserialization checks the lengths, and [`RunRecord::layout`] must equal the
/// [`Recorder::layout`] of the plan it is used with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawRunRecord")]
pub struct RunRecord {
    /// Frame times, s.
    pub t: Vec<f64>,
    n_words: usize,
    bits: Vec<u64>,
    n_signals: usize,
    values: Vec<f64>,
    /// Per property (in plan order): the first frame whose state is unsafe, if any.
    pub first_unsafe: Vec<Option<u32>>,
}

/// A [`RunRecord`] as stored, before its lengths are checked.
#[derive(Deserialize)]
struct RawRunRecord {
    t: Vec<f64>,
    n_words: usize,
    bits: Vec<u64>,
    n_signals: usize,
    values: Vec<f64>,
    first_unsafe: Vec<Option<u32>>,
}

impl TryFrom<RawRunRecord> for RunRecord {
    type Error = String;

    fn try_from(raw: RawRunRecord) -> Result<RunRecord, String> {
        let n = raw.t.len();
        if raw.n_words == 0 || Some(raw.bits.len()) != n.checked_mul(raw.n_words) {
            return Err(format!(
                "{} bit words for {n} frames of {} words",
                raw.bits.len(),
                raw.n_words
            ));
        }
        if Some(raw.values.len()) != n.checked_mul(raw.n_signals) {
            return Err(format!(
                "{} values for {n} frames of {} signals",
                raw.values.len(),
                raw.n_signals
            ));
        }
        if raw.first_unsafe.iter().flatten().any(|&k| k as usize >= n) {
            return Err(format!("a first unsafe frame beyond the run's {n} frames"));
        }
        Ok(RunRecord {
            t: raw.t,
            n_words: raw.n_words,
            bits: raw.bits,
            n_signals: raw.n_signals,
            values: raw.values,
            first_unsafe: raw.first_unsafe,
        })
    }
}

#[cfg(test)]
impl RunRecord {
    /// A record of frames at `t` with one word of candidate bits per frame, no signals, and one property
    /// whose first unsafe frame is `first_unsafe`.
    pub(crate) fn from_bits(t: Vec<f64>, bits: Vec<u64>, first_unsafe: Option<u32>) -> RunRecord {
        RunRecord::try_from(RawRunRecord {
            t,
            n_words: 1,
            bits,
            n_signals: 0,
            values: Vec::new(),
            first_unsafe: vec![first_unsafe],
        })
        .expect("a consistent record")
    }

    /// [`RunRecord::from_bits`] with one signal, whose value at each frame is `signal`'s.
    pub(crate) fn from_bits_and_signal(
        t: Vec<f64>,
        bits: Vec<u64>,
        signal: Vec<f64>,
        first_unsafe: Option<u32>,
    ) -> RunRecord {
        RunRecord::try_from(RawRunRecord {
            t,
            n_words: 1,
            bits,
            n_signals: 1,
            values: signal,
            first_unsafe: vec![first_unsafe],
        })
        .expect("a consistent record")
    }
}

impl RunRecord {
    /// Bit words and signal values per frame; equal to the [`Recorder::layout`] that made the record.
    pub fn layout(&self) -> (usize, usize) {
        (self.n_words, self.n_signals)
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// True for a run without frames.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The candidate's value at frame `k`.
    pub fn value(&self, source: Source, k: usize) -> bool {
        match source {
            Source::Bit(i) => self.bits[k * self.n_words + i / 64] >> (i % 64) & 1 == 1,
            Source::AtMost(i, c) => self.values[k * self.n_signals + i] <= c,
            Source::Above(i, c) => self.values[k * self.n_signals + i] > c,
        }
    }

    /// The recorded value of signal `i` at frame `k`.
    fn signal_at(&self, i: usize, k: usize) -> f64 {
        self.values[k * self.n_signals + i]
    }

    /// The recorded values of signal `i` (every `stride`-th frame).
    pub fn signal_values(&self, i: usize, stride: usize) -> impl Iterator<Item = f64> + '_ {
        self.values
            .iter()
            .skip(i)
            .step_by(self.n_signals.max(1) * stride.max(1))
            .copied()
    }
}

#[cfg(test)]
impl RunRecord {
    /// A record of candidate bits only (one 64-bit word per frame, no signal values) and one property's
    /// first unsafe frame: hand-made data for tests of the search and the rule.
    pub(crate) fn of_bits(t: Vec<f64>, bits: Vec<u64>, first_unsafe: Option<u32>) -> RunRecord {
        assert_eq!(t.len(), bits.len(), "one word per frame");
        RunRecord {
            t,
            n_words: 1,
            bits,
            n_signals: 0,
            values: Vec::new(),
            first_unsafe: vec![first_unsafe],
        }
    }
}

/// What a [`Recorder`] records beyond each property's unsafe frames.
#[derive(Debug, Clone, Copy)]
pub struct RecordSpec<'a> {
    /// Atoms: bits `0..atoms.len()`.
    pub atoms: &'a [Atom],
    /// Window predicates `L.w` of these laws: the bits after the atoms.
    pub window_laws: &'a [String],
    /// Signal values: columns `0..signals.len()`.
    pub signals: &'a [Signal],
    /// Pending ages (frames, −1 when none is pending, and always for a law without obligations) of these
    /// laws' obligations: the columns after the signals.
    pub obligation_laws: &'a [String],
}

/// Records runs for the search.
#[derive(Debug, Clone)]
pub struct Recorder {
    tracker: Tracker,
    handles: ExtraHandles,
    windows: Vec<usize>,
    signals: Vec<Signal>,
}

impl Recorder {
    /// A recorder of what `spec` names, with each property's unsafe frames taken from its fixed definition
    /// in `properties`.
    ///
    /// # Errors
    /// The laws or properties do not compile (see [`Compiled::new`]), or a window law is not among the
    /// properties' laws.
    pub fn new(
        laws: &[LawSource],
        properties: &[ResolvedProperty],
        frame_period_s: f64,
        window_frames: usize,
        road_users: laws::perception::RoadUserCorrection,
        spec: RecordSpec<'_>,
    ) -> Result<Recorder, ModelError> {
        let RecordSpec {
            atoms,
            window_laws,
            signals,
            obligation_laws,
        } = spec;
        let defs: Vec<PropertyDef<'_>> = properties.iter().map(PropertyDef::of).collect();
        let compiled =
            Compiled::new(laws, &defs, frame_period_s, window_frames)?.with_road_users(road_users);
        let windows = window_laws
            .iter()
            .map(|law| {
                compiled.laws().index_of(law).ok_or_else(|| {
                    ModelError::Config(format!("window predicate of law '{law}' is not compiled"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (tracker, handles) = compiled.tracker_with(
            SignalContext::default(),
            atoms,
            obligation_laws,
            signals.iter().copied().collect::<SignalSet>(),
        )?;
        Ok(Recorder {
            tracker,
            handles,
            windows,
            signals: signals.to_vec(),
        })
    }

    /// Whether each obligation law has obligations to track (in `obligation_laws` order).
    pub fn has_obligations(&self) -> Vec<bool> {
        self.handles
            .obligations
            .iter()
            .map(Option::is_some)
            .collect()
    }

    /// Bit words and signal values per frame of the records it makes.
    pub fn layout(&self) -> (usize, usize) {
        let n_bits = self.handles.atoms.len() + self.windows.len();
        (
            n_bits.div_ceil(64).max(1),
            self.signals.len() + self.handles.obligations.len(),
        )
    }

    /// Records one run.
    pub fn record(&mut self, frames: &[Frame]) -> RunRecord {
        self.tracker.reset();
        let (n_words, n_signals) = self.layout();
        let mut rec = RunRecord {
            t: Vec::with_capacity(frames.len()),
            n_words,
            bits: vec![0; frames.len() * n_words],
            n_signals,
            values: Vec::with_capacity(frames.len() * n_signals),
            first_unsafe: Vec::new(),
        };
        let mut first_unsafe: Vec<Option<u32>> = Vec::new();
        for (k, frame) in frames.iter().enumerate() {
            let (handles, windows, signals) = (&self.handles, &self.windows, &self.signals);
            let words = &mut rec.bits[k * n_words..(k + 1) * n_words];
            let values = &mut rec.values;
            self.tracker.step_with(frame, |s, verdicts, encoded| {
                let bits = handles
                    .atoms
                    .iter()
                    .map(|&h| verdicts.state(h))
                    .chain(windows.iter().map(|&w| verdicts.in_window(w)));
                for (i, b) in bits.enumerate() {
                    words[i / 64] |= u64::from(b) << (i % 64);
                }
                values.extend(signals.iter().map(|&sig| s.get(sig)));
                values.extend(handles.obligations.iter().map(|h| {
                    h.and_then(|h| verdicts.pending_frames(h))
                        .map_or(-1.0, |age| age as f64)
                }));
                first_unsafe.resize(encoded.len(), None);
                for (first, e) in first_unsafe.iter_mut().zip(encoded) {
                    if first.is_none() && e.unsafe_state {
                        *first = Some(k as u32);
                    }
                }
            });
            rec.t.push(frame.t);
        }
        rec.first_unsafe = first_unsafe;
        rec
    }
}

/// One run of one property, cut at its first unsafe frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PropRun {
    /// Index of the run's record.
    pub record: usize,
    /// Frames kept: up to and including the first unsafe frame, or all.
    pub n: u32,
    /// The run ends in an unsafe frame (frame `n - 1`).
    pub violated: bool,
}

/// One candidate over every run: initial values and toggle frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Toggles {
    init: Vec<bool>,
    offsets: Vec<u32>,
    frames: Vec<u32>,
}

impl Toggles {
    /// The value at frame 0 of run `r` and the frames (ascending, ≥ 1) where it changes.
    pub fn run(&self, r: usize) -> (bool, &[u32]) {
        (
            self.init[r],
            &self.frames[self.offsets[r] as usize..self.offsets[r + 1] as usize],
        )
    }

    /// The toggles of the conjunction `(self ≠ negated_self) ∧ (other ≠ negated_other)` over the same runs
    /// (`other` must come from the same [`PropertyData`]).
    pub fn and(&self, other: &Toggles, negated_self: bool, negated_other: bool) -> Toggles {
        let mut t = Toggles {
            init: Vec::with_capacity(self.init.len()),
            offsets: vec![0],
            frames: Vec::new(),
        };
        for r in 0..self.init.len() {
            let (ia, fa) = self.run(r);
            let (ib, fb) = other.run(r);
            let (mut va, mut vb) = (ia != negated_self, ib != negated_other);
            let mut out = va && vb;
            t.init.push(out);
            let (mut i, mut j) = (0, 0);
            while i < fa.len() || j < fb.len() {
                let k = match (fa.get(i), fb.get(j)) {
                    (Some(&x), Some(&y)) => x.min(y),
                    (Some(&x), None) => x,
                    (None, Some(&y)) => y,
                    (None, None) => break,
                };
                // Both may change at the same frame: the conjunction changes at most once there.
                if fa.get(i) == Some(&k) {
                    va = !va;
                    i += 1;
                }
                if fb.get(j) == Some(&k) {
                    vb = !vb;
                    j += 1;
                }
                if (va && vb) != out {
                    out = va && vb;
                    t.frames.push(k);
                }
            }
            t.offsets.push(t.frames.len() as u32);
        }
        t
    }

    /// The toggles of the runs `keep` (indices, in the order given) alone.
    pub fn subset(&self, keep: &[usize]) -> Toggles {
        let mut t = Toggles {
            init: Vec::with_capacity(keep.len()),
            offsets: Vec::with_capacity(keep.len() + 1),
            frames: Vec::new(),
        };
        t.offsets.push(0);
        for &r in keep {
            let (init, frames) = self.run(r);
            t.init.push(init);
            t.frames.extend_from_slice(frames);
            t.offsets.push(t.frames.len() as u32);
        }
        t
    }

    /// True when the candidate has the same value on every kept frame of every run.
    pub fn is_constant(&self) -> bool {
        self.frames.is_empty() && self.init.windows(2).all(|w| w[0] == w[1])
    }
}

/// One property's compressed training data.
#[derive(Debug, Clone)]
pub struct PropertyData {
    /// The runs (those with at least one frame).
    pub runs: Vec<PropRun>,
    /// The unsafe predicate's toggles (bit 0 of every state).
    pub unsafe_toggles: Toggles,
    /// Per candidate (in pool order).
    pub candidates: Vec<Toggles>,
}

fn toggles(
    records: &[RunRecord],
    runs: &[PropRun],
    value: impl Fn(&RunRecord, usize) -> bool,
) -> Toggles {
    let mut t = Toggles {
        init: Vec::with_capacity(runs.len()),
        offsets: Vec::with_capacity(runs.len() + 1),
        frames: Vec::new(),
    };
    t.offsets.push(0);
    for run in runs {
        let rec = &records[run.record];
        let mut prev = value(rec, 0);
        t.init.push(prev);
        for k in 1..run.n as usize {
            let v = value(rec, k);
            if v != prev {
                t.frames.push(k as u32);
                prev = v;
            }
        }
        t.offsets.push(t.frames.len() as u32);
    }
    t
}

impl PropertyData {
    /// The toggles of one more candidate read from `source`, over the same runs.
    pub fn toggles_of(&self, records: &[RunRecord], source: Source) -> Toggles {
        toggles(records, &self.runs, |rec, k| rec.value(source, k))
    }

    /// The toggles of `signal<=c` for every cut `c` of `cuts`, in that order: what
    /// [`PropertyData::toggles_of`] gives for each, in one pass over the runs instead of one per cut. At
    /// each frame the cuts whose value changes are those between the previous value's and this value's
    /// place among the cuts, found by binary search; a cut list that is not ascending or holds a NaN is read
    /// one cut at a time.
    pub fn toggles_of_cuts(
        &self,
        records: &[RunRecord],
        signal: usize,
        cuts: &[f64],
    ) -> Vec<Toggles> {
        let ascending = cuts.windows(2).all(|w| w[0] <= w[1]) && !cuts.iter().any(|c| c.is_nan());
        if !ascending {
            return cuts
                .iter()
                .map(|&c| self.toggles_of(records, Source::AtMost(signal, c)))
                .collect();
        }
        // `v <= c` holds exactly for the cuts from `place(v)` on (for a NaN value, for none).
        let place = |v: f64| cuts.partition_point(|&c| v.is_nan() || c < v);
        let mut out: Vec<Toggles> = cuts
            .iter()
            .map(|_| Toggles {
                init: Vec::with_capacity(self.runs.len()),
                offsets: vec![0],
                frames: Vec::new(),
            })
            .collect();
        for run in &self.runs {
            let rec = &records[run.record];
            let mut prev = place(rec.signal_at(signal, 0));
            for (j, t) in out.iter_mut().enumerate() {
                t.init.push(j >= prev);
            }
            for k in 1..run.n as usize {
                let now = place(rec.signal_at(signal, k));
                for t in &mut out[prev.min(now)..prev.max(now)] {
                    t.frames.push(k as u32);
                }
                prev = now;
            }
            for t in &mut out {
                t.offsets.push(t.frames.len() as u32);
            }
        }
        out
    }

    /// The data of the runs `keep` (indices into `runs`, in the order given) alone, over the same
    /// records: what [`PropertyData::new`] gives for those runs' records.
    pub fn subset(&self, keep: &[usize]) -> PropertyData {
        PropertyData {
            runs: keep.iter().map(|&r| self.runs[r]).collect(),
            unsafe_toggles: self.unsafe_toggles.subset(keep),
            candidates: self.candidates.iter().map(|t| t.subset(keep)).collect(),
        }
    }

    /// Compresses `records` for property number `property` with candidates read from `sources`.
    pub fn new(records: &[RunRecord], property: usize, sources: &[Source]) -> PropertyData {
        let runs: Vec<PropRun> = records
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
            .map(|(i, r)| {
                let first = r.first_unsafe.get(property).copied().flatten();
                PropRun {
                    record: i,
                    n: first.map_or(r.len() as u32, |f| f + 1),
                    violated: first.is_some(),
                }
            })
            .collect();
        // The unsafe bit is 0 everywhere except on the last frame of a violating run.
        let unsafe_toggles = Toggles {
            init: runs.iter().map(|r| r.violated && r.n == 1).collect(),
            offsets: std::iter::once(0)
                .chain(runs.iter().scan(0u32, |acc, r| {
                    *acc += u32::from(r.violated && r.n > 1);
                    Some(*acc)
                }))
                .collect(),
            frames: runs
                .iter()
                .filter(|r| r.violated && r.n > 1)
                .map(|r| r.n - 1)
                .collect(),
        };
        let candidates = {
            use rayon::prelude::*;
            sources
                .par_iter()
                .map(|&s| toggles(records, &runs, |rec, k| rec.value(s, k)))
                .collect()
        };
        PropertyData {
            runs,
            unsafe_toggles,
            candidates,
        }
    }
}

#[cfg(test)]
mod tests;
