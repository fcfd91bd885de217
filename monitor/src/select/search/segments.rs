//! Every run's abstract trace as segments of constant state, and how a candidate predicate splits them.

use super::super::data::{PropertyData, Toggles};
use crate::StateId;

/// Every run's segmentation under the current predicate set: `(first frame, state)` per segment.
#[derive(Debug, Clone, Default)]
pub struct Segments {
    offsets: Vec<usize>,
    segs: Vec<(u32, StateId)>,
}

impl Segments {
    /// The segmentation under the unsafe predicate alone.
    pub fn initial(data: &PropertyData) -> Segments {
        let mut s = Segments {
            offsets: vec![0],
            segs: Vec::new(),
        };
        for r in 0..data.runs.len() {
            merge_run(
                &[(0, 0)],
                data.runs[r].n,
                &data.unsafe_toggles,
                r,
                0,
                &mut s.segs,
            );
            s.offsets.push(s.segs.len());
        }
        s
    }

    /// Run `r`'s segments.
    pub fn run(&self, r: usize) -> &[(u32, StateId)] {
        &self.segs[self.offsets[r]..self.offsets[r + 1]]
    }

    /// The segmentation with candidate `t` added as bit `bit`.
    pub fn with(&self, data: &PropertyData, t: &Toggles, bit: u32) -> Segments {
        let mut s = Segments {
            offsets: Vec::with_capacity(self.offsets.len()),
            segs: Vec::with_capacity(self.segs.len() * 2),
        };
        s.offsets.push(0);
        for r in 0..data.runs.len() {
            merge_run(self.run(r), data.runs[r].n, t, r, bit, &mut s.segs);
            s.offsets.push(s.segs.len());
        }
        s
    }

    /// Run `r`'s state at every kept frame.
    pub fn frame_states(&self, r: usize, n: u32) -> Vec<StateId> {
        let segs = self.run(r);
        let mut out = Vec::with_capacity(n as usize);
        for (i, &(start, st)) in segs.iter().enumerate() {
            let end = segs.get(i + 1).map_or(n, |s| s.0);
            out.extend(std::iter::repeat_n(st, (end - start) as usize));
        }
        out
    }
}

/// Appends run `r`'s segments under `segs` ∪ {candidate `t` as bit `bit`} to `out`.
pub(super) fn merge_run(
    segs: &[(u32, StateId)],
    n: u32,
    t: &Toggles,
    r: usize,
    bit: u32,
    out: &mut Vec<(u32, StateId)>,
) {
    let (mut v, toggles) = t.run(r);
    let mut ti = 0;
    for (i, &(start, st)) in segs.iter().enumerate() {
        let end = segs.get(i + 1).map_or(n, |s| s.0);
        while ti < toggles.len() && toggles[ti] <= start {
            v = !v;
            ti += 1;
        }
        out.push((start, st | StateId::from(v) << bit));
        while ti < toggles.len() && toggles[ti] < end {
            v = !v;
            out.push((toggles[ti], st | StateId::from(v) << bit));
            ti += 1;
        }
    }
}
