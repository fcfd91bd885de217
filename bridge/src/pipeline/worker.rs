//! One monitor worker thread: per-connection state (assembler → decision session → enforcer → outputs) for
//! the connections sharded to it. A connection's runs (see [`crate::run`]) each get a fresh session,
//! enforcer and recording; the assembler says when message time starts a new run.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{select, Receiver, Sender};
use laws::Frame;

use super::link::{ConnLink, OutTopic, QueueError, Queued};
use super::{DataItem, Input, Lifecycle, MonitorConfig, Sinks};
use crate::control_command;
use crate::decide::{Decide, Decision};
use crate::enforce::{EnforceConfig, Enforcer, Event, Intervention};
use crate::metrics::Metrics;
use crate::models::ModelSlot;
use crate::record::Recording;
use crate::run::RunName;
use ingest::assemble::Assembler;

/// Per-connection monitor state.
struct ConnState {
    link: Arc<ConnLink>,
    assembler: Assembler,
    session: Box<dyn Decide>,
    generation: u64,
    enforcer: Enforcer,
    /// The current run.
    run: RunName,
    /// The run's recording: made on the run's first frame (a run without frames leaves no file); `None`
    /// before that, when not recording, or after a write failed.
    recording: Option<Recording>,
    /// True once this run's recording failed (it is not retried).
    recording_failed: bool,
}

/// Most messages taken from one connection before the worker turns to the next ready one.
const TURN: usize = 32;

pub(super) struct Worker {
    /// The ready queue: connections with waiting input (also used to put a busy one back).
    pub(super) ready: Sender<DataItem>,
    pub(super) data: Receiver<DataItem>,
    pub(super) lifecycle: Receiver<Lifecycle>,
    pub(super) sinks: Sinks,
    pub(super) metrics: Arc<Metrics>,
    pub(super) config: MonitorConfig,
}

impl Worker {
    pub(super) fn run(self) {
        let mut conns: HashMap<u64, ConnState> = HashMap::new();
        let mut frames = Vec::new();
        let mut events = Vec::new();
        let mut batch = Vec::with_capacity(TURN);
        loop {
            select! {
                recv(self.lifecycle) -> c => match c {
                    Ok(Lifecycle::Close(id)) => {
                        if let Some(state) = conns.remove(&id) {
                            self.finish_recording(state);
                        }
                    }
                    Ok(Lifecycle::Quit) | Err(_) => break,
                },
                recv(self.data) -> d => match d {
                    Ok(link) => {
                        batch.clear();
                        let more = link.take_inputs(TURN, &mut batch);
                        for queued in batch.drain(..) {
                            self.handle(&mut conns, &link, queued, &mut frames, &mut events);
                        }
                        // Behind every other ready connection: round robin between clients. The queue
                        // has room: each connection is on it at most once.
                        if more && self.ready.try_send(link).is_err() {
                            self.metrics.n_data_dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(_) => break,
                },
            }
        }
        for (_, state) in conns.drain() {
            self.finish_recording(state);
        }
    }

    fn finish_recording(&self, mut state: ConnState) {
        self.finish_run_recording(&mut state);
    }

    fn finish_run_recording(&self, state: &mut ConnState) {
        if let Some(rec) = state.recording.take() {
            let path = rec.path().to_owned();
            if let Err(err) = rec.finish() {
                self.metrics.n_record_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(path = %path.display(), %err, "could not finish the session recording");
            }
        }
    }

    fn start_recording(&self, conn: u64, run: &RunName) -> Option<Recording> {
        self.sinks.record.as_ref().and_then(|cfg| {
            Recording::create_run(cfg, conn, run)
                .map_err(|err| {
                    self.metrics.n_record_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(conn, run = %run.id, %err, "cannot record this run");
                })
                .ok()
        })
    }

    fn new_state(&self, link: &Arc<ConnLink>, slot: &ModelSlot) -> ConnState {
        let run = RunName::first(link.id);
        let assembler = match &self.config.map {
            Some((map, tracker)) => {
                Assembler::with_map(self.config.assembler, Arc::clone(map), *tracker)
            }
            None => Assembler::new(self.config.assembler),
        };
        ConnState {
            link: Arc::clone(link),
            assembler,
            session: slot.factory.session(),
            generation: slot.generation,
            enforcer: Enforcer::new(self.config.enforce),
            recording: None,
            recording_failed: false,
            run,
        }
    }

    /// Ends the current run and starts the next: fresh session, law windows, enforcement episode and
    /// recording. The assembler was already reset (a time boundary) or is reset here (a client request).
    fn next_run(&self, state: &mut ConnState, run_id: Option<String>, slot: &ModelSlot) {
        self.finish_run_recording(state);
        state.session = slot.factory.session();
        state.generation = slot.generation;
        state.enforcer = Enforcer::new(self.config.enforce);
        state.run = state.run.next(state.link.id, run_id);
        state.recording_failed = false;
        self.metrics.n_runs.fetch_add(1, Ordering::Relaxed);
    }

    fn handle(
        &self,
        conns: &mut HashMap<u64, ConnState>,
        link: &Arc<ConnLink>,
        queued: Queued,
        frames: &mut Vec<Frame>,
        events: &mut Vec<Event>,
    ) {
        self.metrics.queue_wait.record(queued.at.elapsed());
        if !link.open.load(Ordering::SeqCst) {
            return;
        }
        let slot = &queued.model;
        let state = conns
            .entry(link.id)
            .or_insert_with(|| self.new_state(link, slot));
        frames.clear();
        match queued.input {
            Input::Message(msg) => {
                if state.assembler.push(&msg, frames).is_some() {
                    self.next_run(state, None, slot);
                }
            }
            Input::NewRun(run_id) => {
                state.assembler.reset();
                self.next_run(state, run_id, slot);
            }
        }
        for frame in frames.iter() {
            self.step(state, frame, events, slot);
        }
    }

    /// Decides `frame` with `slot`, the model current when the input completing it was queued: a
    /// reload swaps the session at the first frame queued after it, never at one queued before (inputs
    /// of one connection are queued in order, so their generations never go back).
    fn step(
        &self,
        state: &mut ConnState,
        frame: &Frame,
        events: &mut Vec<Event>,
        slot: &ModelSlot,
    ) {
        if slot.generation > state.generation {
            state.session = slot.factory.session();
            state.generation = slot.generation;
        }
        let started = Instant::now();
        let decision = state.session.step(frame);
        events.clear();
        state.enforcer.step(frame, decision, events);
        self.metrics.step.record(started.elapsed());
        self.metrics.n_frames.fetch_add(1, Ordering::Relaxed);
        // Interventions before the frame's risk message: a lock-step client that waits for the risk
        // reply has then seen every intervention of the frame.
        for event in events.iter() {
            self.handle_event(
                &state.link,
                &state.run.id,
                state.enforcer.config(),
                frame,
                event,
            );
        }
        if state.link.wants_risk.load(Ordering::Relaxed) {
            self.send_risk(&state.link, frame, decision);
        }
        // The recording is not part of the decision: written after the reply is on its way, so that its
        // periodic flush does not delay the frame's risk message.
        self.record(state, frame);
    }

    fn record(&self, state: &mut ConnState, frame: &Frame) {
        if state.recording.is_none() && !state.recording_failed {
            state.recording = self.start_recording(state.link.id, &state.run);
            state.recording_failed = state.recording.is_none();
        }
        if let Some(rec) = &mut state.recording {
            if let Err(err) = rec.append(frame) {
                self.metrics.n_record_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(conn = state.link.id, %err, "session recording stopped");
                state.recording = None;
                state.recording_failed = true;
            }
        }
    }

    fn send_risk(&self, link: &ConnLink, frame: &Frame, decision: &Decision) {
        // Serialized straight from the decision (no intermediate map or name copies).
        let Ok(msg) = serde_json::to_string(&RiskMsg {
            stamp: frame.t,
            risk: RiskMap(decision),
        }) else {
            return;
        };
        if link
            .try_send(OutTopic::Risk, msg, None, &self.metrics)
            .is_err()
        {
            link.n_risk_dropped.fetch_add(1, Ordering::Relaxed);
            self.metrics.n_risk_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn handle_event(
        &self,
        link: &ConnLink,
        run: &str,
        enforce: &EnforceConfig,
        frame: &Frame,
        event: &Event,
    ) {
        let id = link.id;
        if let Some(log) = &self.sinks.log {
            if log.write(id, run, event).is_err() {
                self.metrics.n_log_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        let intervention = match event {
            Event::AlarmStart(i) | Event::AlarmEnd(i) | Event::AlarmUpdate(i) => i,
            Event::Violation { .. } => return,
        };
        let Ok(msg_json) = serde_json::to_string(intervention) else {
            return;
        };
        // The line is written (and flushed) before the intervention is queued: after a crash, the log
        // holds every intervention a client may have received. One queued for a client whose queue is
        // full is logged but not delivered (that client is then closed as too slow).
        if let Some(log) = &self.sinks.log {
            if log.write_intervention(id, run, intervention).is_err() {
                self.metrics.n_log_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        match link.try_send(OutTopic::Intervention, msg_json, None, &self.metrics) {
            Ok(()) => {
                self.metrics.n_interventions.fetch_add(1, Ordering::Relaxed);
            }
            Err(QueueError::Full) => link.overflowed.store(true, Ordering::SeqCst),
            Err(QueueError::Closed) => return,
        }
        if self.config.control_command {
            self.send_control_command(link, enforce, frame, intervention);
        }
    }

    /// Queues the Apollo `ControlCommand` of an intervention (`--control-command`).
    fn send_control_command(
        &self,
        link: &ConnLink,
        enforce: &EnforceConfig,
        frame: &Frame,
        i: &Intervention,
    ) {
        let Some(cmd) = control_command::control_command(frame, i, enforce) else {
            return;
        };
        let Some(json) = control_command::to_json(&cmd) else {
            return;
        };
        let binary = Some(control_command::to_envelope(&cmd));
        match link.try_send(OutTopic::ControlCommand, json, binary, &self.metrics) {
            Ok(()) => {
                self.metrics
                    .n_control_commands
                    .fetch_add(1, Ordering::Relaxed);
            }
            // A control command is as important as the intervention it accompanies.
            Err(QueueError::Full) => link.overflowed.store(true, Ordering::SeqCst),
            Err(QueueError::Closed) => {}
        }
    }
}

/// The `/avguard/risk` message: `{"stamp": s, "risk": {property: p}}` (INTERFACES §3).
#[derive(serde::Serialize)]
struct RiskMsg<'a> {
    stamp: f64,
    risk: RiskMap<'a>,
}

/// Property name → risk, in the decision's property order (names are unique per model).
struct RiskMap<'a>(&'a Decision);

impl serde::Serialize for RiskMap<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.properties.len()))?;
        for p in &self.0.properties {
            map.serialize_entry(&p.name, &p.risk)?;
        }
        map.end()
    }
}
