//! A law body compiled into a straight-line program of incremental operators.
//!
//! Every node outputs, at step `k`, the value of its sub-formula at position `k - delay` (its *delay* is
//! how many frames later than the position its value is decided). Children of a binary node are aligned by
//! inserting [`DelayLine`]s. Maximal state sub-formulas are one [`StateFn`] each (a truth table over atom
//! bits). Interval operators keep O(1) state that is updated once per step:
//! - `F[a,b] p`: the latest position where p held; true at i iff it is ≥ i + a (the child's newest
//!   position is i + b, so nothing later can be in the way).
//! - `G[a,b] p`: the same with the latest position where p failed.
//! - `p U[a,b] q`: two monotone queues, the positions in the window where q held and where p failed; true
//!   at i iff the earliest q-position ≥ i + a is ≤ min(i + b, first p-failure ≥ i).
//! - `A -> F[a,b] B` with state formulas A, B and 0 ≤ a (the shape of most traffic laws) is one fused
//!   operator: a ring of A's bits over the last b + 1 positions and the latest position where B held.
//!
//! Positions before frame 0 do not exist: `F` over them is false, `G` true. All buffers are allocated at
//! compile time, so a step never allocates.

use std::collections::VecDeque;

use super::atoms::AtomTable;
use super::state::StateFn;
use super::EvalError;
use crate::lang::formula::{Formula, Interval};
use crate::lang::limits::MAX_WINDOW_BYTES;

/// No position yet (far enough below any `i + a` to never satisfy a window).
pub(super) const NEVER: i64 = i64::MIN / 4;

/// A fixed delay: outputs the value pushed `len` steps ago (false until then).
#[derive(Debug, Clone)]
struct DelayLine {
    buf: Box<[bool]>,
    pos: usize,
}

impl DelayLine {
    #[inline]
    fn push(&mut self, v: bool) -> bool {
        // `pos < buf.len()` always holds: it is reduced modulo the (non-zero) length after each step.
        let out = std::mem::replace(&mut self.buf[self.pos], v);
        self.pos += 1;
        if self.pos == self.buf.len() {
            self.pos = 0;
        }
        out
    }
}

/// A power-of-two ring of bits indexed by position: bit `i mod len` holds the value at position `i`.
#[derive(Debug, Clone)]
pub(super) struct BitRing {
    words: Box<[u64]>,
    /// `len - 1`, with `len` (bits) a power of two ≥ 64.
    mask: usize,
}

impl BitRing {
    /// A ring that remembers at least `n` positions.
    pub(super) fn new(n: usize) -> BitRing {
        let len = n.next_power_of_two().max(64);
        BitRing {
            words: vec![0; len / 64].into_boxed_slice(),
            mask: len - 1,
        }
    }

    #[inline]
    fn slot(&self, pos: i64) -> (usize, u32) {
        // Two's-complement wrap keeps the slot arithmetic right for negative positions too.
        let i = (pos as usize) & self.mask;
        (i >> 6, (i & 63) as u32)
    }

    #[inline]
    pub(super) fn set(&mut self, pos: i64, v: bool) {
        let (w, b) = self.slot(pos);
        if let Some(word) = self.words.get_mut(w) {
            *word = (*word & !(1 << b)) | (u64::from(v) << b);
        }
    }

    #[inline]
    pub(super) fn get(&self, pos: i64) -> bool {
        let (w, b) = self.slot(pos);
        self.words.get(w).is_some_and(|word| (word >> b) & 1 == 1)
    }

    /// Every bit false.
    pub(super) fn clear(&mut self) {
        self.words.fill(0);
    }
}

/// The fused `A -> F[lo,hi] B` for state formulas A, B and `0 ≤ lo ≤ hi` (also the core of a law's
/// obligation memory, [`super::obligation`]).
#[derive(Debug, Clone)]
pub(super) struct ImpliesEventually {
    a: StateFn,
    b: StateFn,
    pub(super) lo: i64,
    pub(super) hi: i64,
    /// A's values at positions `k - hi ..= k`.
    pub(super) a_ring: BitRing,
    /// The latest position where B held.
    pub(super) last_b: i64,
}

impl ImpliesEventually {
    /// Records frame `k`: A's value there, and B's.
    #[inline]
    pub(super) fn record(&mut self, k: i64, words: &[u64]) {
        self.a_ring.set(k, self.a.eval(words));
        if self.b.eval(words) {
            self.last_b = k;
        }
    }

    /// After [`ImpliesEventually::record`] of frame `k`: the value at position `k - hi`, decided now.
    #[inline]
    fn decided(&self, k: i64) -> bool {
        let i = k - self.hi;
        !self.a_ring.get(i) || self.last_b >= i + self.lo
    }

    /// Forgets every frame.
    pub(super) fn reset(&mut self) {
        self.a_ring.clear();
        self.last_b = NEVER;
    }
}

#[derive(Debug, Clone)]
enum Op {
    State(StateFn),
    Not(usize),
    And(usize, usize),
    Or(usize, usize),
    Delay {
        child: usize,
        line: DelayLine,
    },
    Eventually {
        child: usize,
        child_delay: i64,
        lo: i64,
        delay: i64,
        last_true: i64,
    },
    Always {
        child: usize,
        child_delay: i64,
        lo: i64,
        delay: i64,
        last_false: i64,
    },
    /// Boxed: its queues would make every operator of the program large and the step loop cache-unfriendly.
    Until(Box<UntilState>),
    /// Boxed for the same reason.
    ImpliesEventually(Box<ImpliesEventually>),
}

#[derive(Debug, Clone)]
struct UntilState {
    p: usize,
    q: usize,
    child_delay: i64,
    lo: i64,
    hi: i64,
    q_true: VecDeque<i64>,
    p_false: VecDeque<i64>,
}

/// A compiled formula.
#[derive(Debug, Clone)]
pub struct Program {
    ops: Vec<Op>,
    vals: Vec<bool>,
    root: usize,
    horizon: i64,
}

/// Compile-time context: the frame period, the atom table, the law name for errors, and the window memory
/// still available to the law set.
pub struct Compiler<'a> {
    /// Frame period, s.
    pub period_s: f64,
    /// Interns atoms into the evaluator-wide table.
    pub atoms: &'a mut AtomTable,
    /// Law name, for errors.
    pub law: &'a str,
    /// The file the law is defined in, for errors.
    pub file: &'a str,
    /// Window-buffer bytes the set has compiled into so far (bounded by [`MAX_WINDOW_BYTES`]); checked
    /// before every buffer is allocated.
    pub window_bytes: &'a mut usize,
}

/// Converts a bound in seconds to frames; rejects bounds that are not a multiple of the period.
pub fn to_frames(bound_s: f64, period_s: f64) -> Option<i64> {
    let frames = (bound_s / period_s).round();
    ((frames * period_s - bound_s).abs() <= 1e-6 && frames.abs() < 1e12).then_some(frames as i64)
}

impl Compiler<'_> {
    fn bounds(&self, i: &Interval) -> Result<(i64, i64), EvalError> {
        let Some((lo_s, hi_s)) = i.bounds_s else {
            return Err(EvalError::Unbounded {
                law: self.law.to_string(),
                file: self.file.to_string(),
                line: i.line,
                col: i.col,
            });
        };
        let conv = |b: f64| {
            to_frames(b, self.period_s).ok_or_else(|| EvalError::BoundNotMultiple {
                law: self.law.to_string(),
                file: self.file.to_string(),
                line: i.line,
                col: i.col,
                bound_s: b,
                period_s: self.period_s,
            })
        };
        Ok((conv(lo_s)?, conv(hi_s)?))
    }

    /// Reserves `bytes` of window buffers, or fails naming the law and the limit.
    fn reserve(&mut self, bytes: usize) -> Result<(), EvalError> {
        let total = self.window_bytes.saturating_add(bytes);
        if total > MAX_WINDOW_BYTES {
            return Err(EvalError::TooLarge {
                law: self.law.to_string(),
                bytes: total,
                limit: MAX_WINDOW_BYTES,
            });
        }
        *self.window_bytes = total;
        Ok(())
    }

    /// Compiles `f` into a program whose root outputs `f` at position `k - horizon`.
    pub fn compile(&mut self, f: &Formula) -> Result<Program, EvalError> {
        let mut prog = Program {
            ops: Vec::new(),
            vals: Vec::new(),
            root: 0,
            horizon: 0,
        };
        let (root, horizon) = self.node(&mut prog, f)?;
        prog.root = root;
        prog.horizon = horizon;
        prog.vals = vec![false; prog.ops.len()];
        Ok(prog)
    }

    fn push(prog: &mut Program, op: Op) -> usize {
        prog.ops.push(op);
        prog.ops.len() - 1
    }

    fn delayed(&mut self, prog: &mut Program, child: usize, by: i64) -> Result<usize, EvalError> {
        if by <= 0 {
            return Ok(child);
        }
        let len = usize::try_from(by).unwrap_or(usize::MAX);
        self.reserve(len)?;
        let line = DelayLine {
            buf: vec![false; len].into_boxed_slice(),
            pos: 0,
        };
        Ok(Self::push(prog, Op::Delay { child, line }))
    }

    fn aligned(
        &mut self,
        prog: &mut Program,
        a: &Formula,
        b: &Formula,
    ) -> Result<(usize, usize, i64), EvalError> {
        let (a, da) = self.node(prog, a)?;
        let (b, db) = self.node(prog, b)?;
        let d = da.max(db);
        Ok((
            self.delayed(prog, a, d - da)?,
            self.delayed(prog, b, d - db)?,
            d,
        ))
    }

    fn node(&mut self, prog: &mut Program, f: &Formula) -> Result<(usize, i64), EvalError> {
        if let Some(state) = StateFn::new(f, self.atoms) {
            return Ok((Self::push(prog, Op::State(state)), 0));
        }
        if let Some(fused) = self.implies_eventually(f)? {
            let delay = fused.hi;
            return Ok((
                Self::push(prog, Op::ImpliesEventually(Box::new(fused))),
                delay,
            ));
        }
        Ok(match f {
            Formula::Const(_) | Formula::Atom(_) => {
                unreachable!("state formulas are handled above")
            }
            Formula::Not(p) => {
                let (c, d) = self.node(prog, p)?;
                (Self::push(prog, Op::Not(c)), d)
            }
            Formula::And(a, b) => {
                let (a, b, d) = self.aligned(prog, a, b)?;
                (Self::push(prog, Op::And(a, b)), d)
            }
            Formula::Or(a, b) => {
                let (a, b, d) = self.aligned(prog, a, b)?;
                (Self::push(prog, Op::Or(a, b)), d)
            }
            Formula::Implies(a, b) => {
                let (a, b, d) = self.aligned(prog, a, b)?;
                let not_a = Self::push(prog, Op::Not(a));
                (Self::push(prog, Op::Or(not_a, b)), d)
            }
            Formula::Next(p) => self.window(prog, p, 1, 1, true)?,
            Formula::Eventually(i, p) => {
                let (lo, hi) = self.bounds(i)?;
                self.window(prog, p, lo, hi, true)?
            }
            Formula::Always(i, p) => {
                let (lo, hi) = self.bounds(i)?;
                self.window(prog, p, lo, hi, false)?
            }
            Formula::Until(i, a, b) => {
                let (lo, hi) = self.bounds(i)?;
                let (p, q, d) = self.aligned(prog, a, b)?;
                let cap = usize::try_from(hi + 2).unwrap_or(usize::MAX);
                // Two queues of positions, each up to the window's length.
                self.reserve(cap.saturating_mul(2 * std::mem::size_of::<i64>()))?;
                let op = Op::Until(Box::new(UntilState {
                    p,
                    q,
                    child_delay: d,
                    lo,
                    hi,
                    q_true: VecDeque::with_capacity(cap),
                    p_false: VecDeque::with_capacity(cap),
                }));
                (Self::push(prog, op), d + hi)
            }
        })
    }

    /// `A -> F[lo,hi] B` with state formulas A, B and `lo ≥ 0`, fused into one operator.
    pub(super) fn implies_eventually(
        &mut self,
        f: &Formula,
    ) -> Result<Option<ImpliesEventually>, EvalError> {
        let Formula::Implies(a, rhs) = f else {
            return Ok(None);
        };
        let Formula::Eventually(interval, b) = &**rhs else {
            return Ok(None);
        };
        if interval.bounds_s.is_none() || !a.is_state() || !b.is_state() {
            return Ok(None);
        }
        let (lo, hi) = self.bounds(interval)?;
        if lo < 0 || hi < lo {
            return Ok(None);
        }
        let (Some(a), Some(b)) = (StateFn::new(a, self.atoms), StateFn::new(b, self.atoms)) else {
            return Ok(None);
        };
        let n = usize::try_from(hi).unwrap_or(usize::MAX).saturating_add(1);
        self.reserve(n.saturating_add(63) / 8)?;
        Ok(Some(ImpliesEventually {
            a,
            b,
            lo,
            hi,
            a_ring: BitRing::new(n),
            last_b: NEVER,
        }))
    }

    fn window(
        &mut self,
        prog: &mut Program,
        p: &Formula,
        lo: i64,
        hi: i64,
        any: bool,
    ) -> Result<(usize, i64), EvalError> {
        let (mut c, mut d) = self.node(prog, p)?;
        if d + hi < 0 {
            // A purely past window: delay the child so that its newest position is exactly i + hi.
            c = self.delayed(prog, c, -(d + hi))?;
            d = -hi;
        }
        let delay = d + hi;
        let op = if any {
            Op::Eventually {
                child: c,
                child_delay: d,
                lo,
                delay,
                last_true: NEVER,
            }
        } else {
            Op::Always {
                child: c,
                child_delay: d,
                lo,
                delay,
                last_false: NEVER,
            }
        };
        Ok((Self::push(prog, op), delay))
    }
}

impl Program {
    /// Frames between a position and the step at which its value is decided.
    pub fn horizon(&self) -> i64 {
        self.horizon
    }

    /// Advances to step `k` (frame index) and returns the root's value at position `k - horizon`.
    #[inline]
    pub fn step(&mut self, k: i64, words: &[u64]) -> bool {
        // `vals` has one entry per operator; slicing it to the operators' length lets the compiler drop the
        // bounds check on the write below (children are earlier operators, checked on read).
        let vals = &mut self.vals[..self.ops.len()];
        for (n, op) in self.ops.iter_mut().enumerate() {
            let v = match op {
                Op::State(f) => f.eval(words),
                Op::ImpliesEventually(op) => {
                    op.record(k, words);
                    op.decided(k)
                }
                Op::Not(c) => !vals[*c],
                Op::And(a, b) => vals[*a] & vals[*b],
                Op::Or(a, b) => vals[*a] | vals[*b],
                Op::Delay { child, line } => line.push(vals[*child]),
                Op::Eventually {
                    child,
                    child_delay,
                    lo,
                    delay,
                    last_true,
                } => {
                    let pc = k - *child_delay;
                    if pc >= 0 && vals[*child] {
                        *last_true = pc;
                    }
                    *last_true >= k - *delay + *lo
                }
                Op::Always {
                    child,
                    child_delay,
                    lo,
                    delay,
                    last_false,
                } => {
                    let pc = k - *child_delay;
                    if pc >= 0 && !vals[*child] {
                        *last_false = pc;
                    }
                    *last_false < k - *delay + *lo
                }
                Op::Until(u) => {
                    let UntilState {
                        p,
                        q,
                        child_delay,
                        lo,
                        hi,
                        q_true,
                        p_false,
                    } = &mut **u;
                    let pc = k - *child_delay;
                    if pc >= 0 {
                        if vals[*q] {
                            q_true.push_back(pc);
                        }
                        if !vals[*p] {
                            p_false.push_back(pc);
                        }
                    }
                    let i = pc - *hi;
                    while q_true.front().is_some_and(|&j| j < i + *lo) {
                        q_true.pop_front();
                    }
                    while p_false.front().is_some_and(|&j| j < i) {
                        p_false.pop_front();
                    }
                    let first_fail = p_false.front().copied().unwrap_or(i64::MAX);
                    q_true
                        .front()
                        .is_some_and(|&j| j <= (i + *hi).min(first_fail))
                }
            };
            vals[n] = v;
        }
        vals[self.root]
    }

    /// Forgets all history (as if no frame had been seen).
    pub fn reset(&mut self) {
        for op in &mut self.ops {
            match op {
                Op::Delay { line, .. } => {
                    line.buf.fill(false);
                    line.pos = 0;
                }
                Op::Eventually { last_true, .. } => *last_true = NEVER,
                Op::Always { last_false, .. } => *last_false = NEVER,
                Op::Until(u) => {
                    u.q_true.clear();
                    u.p_false.clear();
                }
                Op::ImpliesEventually(op) => op.reset(),
                Op::State(_) | Op::Not(_) | Op::And(..) | Op::Or(..) => {}
            }
        }
        self.vals.fill(false);
    }
}
