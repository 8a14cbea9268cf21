//! `chart.png`: four panels of horizontal bars (medians), stdio pinned sequential and
//! pipelined calls/s, HTTP session-era and stateless-era requests/s. Text is drawn with
//! the system's DejaVu Sans (plotters' `ab_glyph` backend needs a TrueType file).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::Runs;
use crate::tables::{HTTP, STDIO};

type Error = Box<dyn std::error::Error>;

const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn load_font() -> Result<(), Error> {
    let path = FONTS
        .iter()
        .find(|p| Path::new(p).exists())
        .map(|p| (*p).to_owned())
        .or_else(|| {
            let out = std::process::Command::new("fc-match")
                .args(["-f", "%{file}", "sans"])
                .output()
                .ok()?;
            String::from_utf8(out.stdout).ok()
        })
        .ok_or("no TrueType font found (install fonts-dejavu-core)")?;
    let bytes: &'static [u8] = Box::leak(std::fs::read(path)?.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| "unreadable font")?;
    Ok(())
}

pub(crate) fn draw(runs: &Runs, path: &Path) -> Result<(), Error> {
    load_font()?;
    let root = BitMapBackend::new(path, (1600, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((2, 2));
    let stdio = |metric: &'static str| {
        STDIO
            .iter()
            .map(move |(server, name)| (*name, runs.median(server, "stdio-pinned", metric)))
            .collect::<Vec<_>>()
    };
    let http = |metric: &'static str| {
        HTTP.iter()
            .map(move |(server, name)| (*name, runs.median(server, "http", metric)))
            .collect::<Vec<_>>()
    };
    bars(
        &panels[0],
        "stdio sequential calls/s (pinned, one CPU)",
        &stdio("sequential/calls_per_s"),
    )?;
    bars(
        &panels[1],
        "stdio pipelined calls/s, 32 in flight (pinned)",
        &stdio("pipelined/calls_per_s"),
    )?;
    bars(
        &panels[2],
        "HTTP session era req/s (50 sessions)",
        &http("session/calls_per_s"),
    )?;
    bars(
        &panels[3],
        "HTTP stateless era req/s (50 clients)",
        &http("stateless/calls_per_s"),
    )?;
    root.present()?;
    Ok(())
}

fn bars(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    values: &[(&str, Option<f64>)],
) -> Result<(), Error> {
    let max = values.iter().filter_map(|(_, v)| *v).fold(1.0, f64::max);
    let n = values.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(30)
        .y_label_area_size(10)
        .build_cartesian_2d(0.0..max * 1.55, 0.0..n)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(6)
        .x_label_formatter(&|x| format!("{:.0}k", x / 1000.0))
        .label_style(("sans-serif", 15))
        .draw()?;
    for (i, (name, value)) in values.iter().enumerate() {
        let y = n - i as f64 - 1.0;
        let color = Palette99::pick(i).to_rgba();
        let v = value.unwrap_or(0.0);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y + 0.15), (v, y + 0.85)],
            color.filled(),
        )))?;
        let label = match value {
            Some(v) => format!("{}: {v:.0}", name.replace('`', "")),
            None => format!("{}: not measured", name.replace('`', "")),
        };
        chart.draw_series(std::iter::once(Text::new(
            label,
            (v + max * 0.01, y + 0.62),
            ("sans-serif", 17).into_font(),
        )))?;
    }
    Ok(())
}
