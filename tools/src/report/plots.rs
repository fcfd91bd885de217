//! Inline SVG plots (plotters' SVG backend renders to a string; text stays text, so no font files are
//! needed and the page works offline).

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{PropertyReport, RiskTrace};

const SIZE: (u32, u32) = (560, 320);

type PlotResult = Result<String, String>;

fn draw(
    build: impl FnOnce(DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), String>,
) -> PlotResult {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        build(root.clone())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A chart with real-valued axes on the SVG backend.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws a polyline of `color` and `width` with a legend entry `label`.
fn labelled_line(
    chart: &mut Chart<'_, '_>,
    points: impl IntoIterator<Item = (f64, f64)>,
    color: RGBColor,
    width: u32,
    label: impl Into<String>,
) -> Result<(), String> {
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(width)))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
    Ok(())
}

/// Draws the legend box of `chart`.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .map_err(err)
}

/// Histogram of lead times (s) for each threshold, side by side as coloured bars.
pub fn lead_histogram(p: &PropertyReport) -> PlotResult {
    // 5 % headroom so that the largest lead's bar is not clipped by the plot's edge.
    let max_lead = 1.05 * p.leads.values().flatten().copied().fold(1.0_f64, f64::max);
    let n_bins = 20usize;
    let bin_w = max_lead / n_bins as f64;
    let counts: Vec<(String, Vec<u32>)> = p
        .leads
        .iter()
        .map(|(key, leads)| {
            let mut c = vec![0u32; n_bins];
            for &l in leads {
                let b = ((l / bin_w) as usize).min(n_bins - 1);
                c[b] += 1;
            }
            (key.clone(), c)
        })
        .collect();
    let y_max = counts
        .iter()
        .flat_map(|(_, c)| c.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1);
    draw(|root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: lead time distribution", p.name),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(40)
            .build_cartesian_2d(0.0..max_lead, 0u32..y_max + 1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("lead (s)")
            .y_desc("runs")
            .draw()
            .map_err(err)?;
        let n_series = counts.len().max(1) as f64;
        for (si, (key, c)) in counts.iter().enumerate() {
            let color = Palette99::pick(si).to_rgba();
            let offset = bin_w * si as f64 / n_series;
            let width = bin_w / n_series;
            chart
                .draw_series(c.iter().enumerate().filter(|(_, &n)| n > 0).map(|(b, &n)| {
                    let x0 = b as f64 * bin_w + offset;
                    Rectangle::new([(x0, 0), (x0 + width, n)], color.filled())
                }))
                .map_err(err)?
                .label(format!("θ={key}"))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        legend(&mut chart)?;
        Ok(())
    })
}

/// Prediction % and false-alarm % as θ varies.
pub fn tradeoff(p: &PropertyReport) -> PlotResult {
    draw(|root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: prediction vs false alarms over θ", p.name),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(40)
            .build_cartesian_2d(0.0..1.0, 0.0..100.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("θ")
            .y_desc("% of runs")
            .draw()
            .map_err(err)?;
        labelled_line(
            &mut chart,
            p.tradeoff.iter().map(|&(t, pr, _)| (t, pr)),
            BLUE,
            2,
            "predicted (violating runs)",
        )?;
        labelled_line(
            &mut chart,
            p.tradeoff.iter().map(|&(t, _, fa)| (t, fa)),
            RED,
            2,
            "false alarms (safe runs)",
        )?;
        legend(&mut chart)?;
        Ok(())
    })
}

/// One run's risk over time, with the threshold, the first alarm and the violation marked.
pub fn risk_trace(name: &str, trace: &RiskTrace, theta: f64) -> PlotResult {
    let t_end = trace.t.last().copied().unwrap_or(1.0).max(0.1);
    let t_start = trace.t.first().copied().unwrap_or(0.0).min(t_end - 0.1);
    let first_alarm = trace
        .t
        .iter()
        .zip(&trace.risk)
        .find(|(t, r)| **r >= theta && trace.violation_t.is_none_or(|v| **t < v))
        .map(|(t, _)| *t);
    draw(|root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{name}: risk over time, run {}", trace.run_id),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(40)
            .build_cartesian_2d(t_start..t_end, 0.0..1.05)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("t (s)")
            .y_desc("risk")
            .draw()
            .map_err(err)?;
        labelled_line(
            &mut chart,
            trace.t.iter().copied().zip(trace.risk.iter().copied()),
            BLUE,
            1,
            "risk",
        )?;
        labelled_line(
            &mut chart,
            [(t_start, theta), (t_end, theta)],
            BLACK,
            1,
            format!("θ = {theta}"),
        )?;
        if let Some(a) = first_alarm {
            labelled_line(&mut chart, [(a, 0.0), (a, 1.05)], GREEN, 2, "first alarm")?;
        }
        if let Some(v) = trace.violation_t {
            labelled_line(&mut chart, [(v, 0.0), (v, 1.05)], RED, 2, "violation")?;
        }
        legend(&mut chart)?;
        Ok(())
    })
}
