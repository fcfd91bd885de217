//! Scoring one log: every frame through a fresh `monitor::Session`, then `time_ahead::score_run` per property.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use laws::rss::RssParams;
use laws::Frame;
use monitor::{Model, RiskMeasure, Session, SessionConfig};

use super::{FileResult, TraceRecord, MAX_TRACE_POINTS};
use crate::mapfile::LoadedMap;

use crate::time_ahead::{score_run_calibrated, RunSeries};

/// Every property's per-frame series over one run, through `session` (which is reset first); with `rss`,
/// also the RSS comparator's alarms (the same for every property), and for each property whose model
/// stores an RSS tuning ([`monitor::PropertyModel::rss_tuning`]) the alarms of CARLA's RSS with its
/// response times scaled as tuned.
pub fn run_series(
    frames: &[Frame],
    session: &mut Session,
    measure: &RiskMeasure,
    rss: Option<&RssParams>,
) -> Vec<RunSeries> {
    session.reset();
    let model = Arc::clone(session.model());
    let n = frames.len();
    let mut series: Vec<RunSeries> = model
        .properties()
        .iter()
        .map(|_| RunSeries {
            t: Vec::with_capacity(n),
            risk: Vec::with_capacity(n),
            unsafe_now: Vec::with_capacity(n),
            baseline_alarm: Vec::with_capacity(n),
            rss_alarm: Vec::new(),
            rule_alarm: Vec::new(),
            rss_tuned_alarm: Vec::new(),
        })
        .collect();
    let tuned: Vec<Option<RssParams>> = model
        .properties()
        .iter()
        .map(|p| {
            let t = p.rss_tuning().filter(|_| rss.is_some())?;
            Some(RssParams::CARLA.with_response_scale(t.response_scale))
        })
        .collect();
    let has_rule: Vec<bool> = model
        .properties()
        .iter()
        .map(|p| p.reactive_rule().is_some())
        .collect();
    for frame in frames {
        // RSS sees the road users where the model does: smoothed and moved ahead as it reads them.
        let (outcome, seen) = session.step_seen(frame);
        let rss_alarm = rss.map(|p| p.dangerous(seen));
        for (p, (s, po)) in series.iter_mut().zip(&outcome.properties).enumerate() {
            s.t.push(frame.t);
            s.risk.push(measure.risk(p, po));
            s.unsafe_now.push(po.unsafe_now);
            s.baseline_alarm.push(po.baseline_alarm);
            if has_rule[p] {
                s.rule_alarm.push(po.rule_alarm);
            }
            if let Some(a) = rss_alarm {
                s.rss_alarm.push(a);
            }
            if let Some(params) = &tuned[p] {
                s.rss_tuned_alarm.push(params.dangerous(seen));
            }
        }
    }
    series
}

/// Scores one log against every property of `model`. A Cyber record (by name) is read as the live bridge
/// would assemble it, at the model's frame period, with road fields from `map` when given; each run of its
/// recording is scored as a run of its own (a fresh session), as `import` would have written it.
pub fn score_file(
    path: &Path,
    model: &Arc<Model>,
    measure: &RiskMeasure,
    thresholds: &[(String, f64)],
    map: Option<&LoadedMap>,
    rss: Option<&RssParams>,
) -> anyhow::Result<FileResult> {
    let logs = if crate::records::is_record_name(path) {
        let config = ingest::assemble::AssemblerConfig {
            period_s: model.frame_period_s(),
            ..ingest::assemble::AssemblerConfig::default()
        };
        config.check().map_err(|e| {
            anyhow::anyhow!("the model's frames cannot be assembled from a record: {e}")
        })?;
        crate::records::read_record_logs(path, config, map)?
    } else {
        vec![scenarios::log::read_log_isolated(path)?]
    };
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut result = FileResult {
        file,
        n_frames: 0,
        scores: Vec::with_capacity(logs.len() * model.properties().len()),
        traces: Vec::new(),
    };
    for log in &logs {
        if !model.properties().is_empty() {
            crate::batch::check_log_period(log.meta.frame_period_s, model.frame_period_s())?;
        }
        let mut session = Session::new(model, &SessionConfig::default())
            .context("cannot start a monitor session")?;
        result.n_frames += log.frames.len();
        let series = run_series(&log.frames, &mut session, measure, rss);
        for (i, (property, s)) in model.properties().iter().zip(&series).enumerate() {
            let score = score_run_calibrated(
                &log.meta.run_id,
                &log.meta.scenario,
                property.name(),
                s,
                thresholds,
                calibrated_rule(model, i, measure),
            );
            if score.violated || score.alarms.values().any(|a| a.false_alarm) {
                result
                    .traces
                    .push(thin(&log.meta.run_id, property.name(), s));
            }
            result.scores.push(score);
        }
    }
    Ok(result)
}

fn thin(run_id: &str, property: &str, s: &RunSeries) -> TraceRecord {
    let stride = s.t.len().div_ceil(MAX_TRACE_POINTS).max(1);
    TraceRecord {
        run_id: run_id.to_owned(),
        property: property.to_owned(),
        t: s.t.iter().step_by(stride).copied().collect(),
        risk: s.risk.iter().step_by(stride).copied().collect(),
    }
}

/// Property `p`'s calibrated `(θ, debounce)` when it was calibrated for the risk `measure` scores.
pub fn calibrated_rule(model: &Model, p: usize, measure: &RiskMeasure) -> Option<(f64, u32)> {
    monitor::calibrate::for_measure(model, p, measure)
}
