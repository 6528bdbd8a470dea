//! `--plot FILE.svg|FILE.png`: the comparison as bars (median M lookups/s per engine and path,
//! min–max whiskers), and, when the run covered several table sizes or thread counts, scaling
//! line plots next to it (`FILE-sizes.svg`, `FILE-threads.svg`).
//!
//! Text is drawn with a font compiled into the binary (Ubuntu Light from
//! `epaint_default_fonts`), so plots look the same on machines without system fonts.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::bench::report::Row;

/// The image formats `--plot` writes, chosen by the file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics.
    Svg,
    /// Portable network graphics.
    Png,
}

impl Format {
    /// The format for a file name; anything but `.svg`/`.png` is an error naming the file.
    pub fn of(path: &Path) -> anyhow::Result<Self> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => anyhow::bail!(
                "--plot {}: the file name must end in .svg or .png",
                path.display()
            ),
        }
    }
}

const SIZE: (u32, u32) = (1200, 700);
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the crate; should that ever change,
        // plotting reports a font error instead of drawing, which is all that can be done.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("plotting: {e}")
}

/// Draws with the backend the format asks for, then writes the file.
fn draw(
    path: &Path,
    format: Format,
    paint: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> anyhow::Result<()>,
    paint_png: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    register_font();
    match format {
        Format::Svg => {
            let area = SVGBackend::new(path, SIZE).into_drawing_area();
            area.fill(&WHITE).map_err(err)?;
            paint(&area)?;
            area.present().map_err(err)
        }
        Format::Png => {
            let area = BitMapBackend::new(path, SIZE).into_drawing_area();
            area.fill(&WHITE).map_err(err)?;
            paint_png(&area)?;
            area.present().map_err(err)
        }
    }
    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Writes the plots for a run; returns the files written.
pub fn plot(path: &Path, rows: &[Row]) -> anyhow::Result<Vec<PathBuf>> {
    let format = Format::of(path)?;
    let Some(first) = rows.first() else {
        anyhow::bail!("nothing to plot: no measurements");
    };
    let mut written = Vec::new();
    // The bar chart shows the first table size and thread count of the run.
    let main: Vec<&Row> = rows
        .iter()
        .filter(|r| r.table.prefixes == first.table.prefixes && r.threads == first.threads)
        .collect();
    let title = format!(
        "{} {} prefixes, {} trace, {} thread(s)",
        first.table.family, first.table.prefixes, first.trace.trace, first.threads
    );
    draw(
        path,
        format,
        |a| bars(a, &main, &title),
        |a| bars(a, &main, &title),
    )?;
    written.push(path.to_path_buf());

    let sizes = distinct(rows.iter().map(|r| r.table.prefixes as u64));
    if sizes.len() > 1 {
        let p = sibling(path, "sizes");
        let sel: Vec<&Row> = rows.iter().filter(|r| r.threads == first.threads).collect();
        let x = |r: &Row| r.table.prefixes as f64 / 1000.0;
        let label = "prefixes (thousands)";
        draw(
            &p,
            format,
            |a| lines(a, &sel, x, label, &title_of(first, "table size")),
            |a| lines(a, &sel, x, label, &title_of(first, "table size")),
        )?;
        written.push(p);
    }
    let threads = distinct(rows.iter().map(|r| r.threads as u64));
    if threads.len() > 1 {
        let p = sibling(path, "threads");
        let sel: Vec<&Row> = rows
            .iter()
            .filter(|r| r.table.prefixes == first.table.prefixes)
            .collect();
        let x = |r: &Row| r.threads as f64;
        draw(
            &p,
            format,
            |a| lines(a, &sel, x, "threads", &title_of(first, "threads")),
            |a| lines(a, &sel, x, "threads", &title_of(first, "threads")),
        )?;
        written.push(p);
    }
    Ok(written)
}

fn title_of(first: &Row, what: &str) -> String {
    format!(
        "{} scaling with {what}, {} trace (median M lookups/s, all threads)",
        first.table.family, first.trace.trace
    )
}

fn distinct(values: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `out.svg` → `out-sizes.svg`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("plot");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("svg");
    path.with_file_name(format!("{stem}-{suffix}.{ext}"))
}

fn bar_label(r: &Row, several_modes: bool) -> String {
    if several_modes {
        format!("{} {} {}", r.engine, r.path.name(), r.mode.name())
    } else {
        format!("{} {}", r.engine, r.path.name())
    }
}

fn color_of(engines: &[String], name: &str) -> RGBColor {
    let i = engines.iter().position(|e| e == name).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

fn bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rows: &[&Row],
    title: &str,
) -> anyhow::Result<()> {
    // Horizontal bars, so the engine labels read left to right however many there are.
    let several_modes = distinct(rows.iter().map(|r| r.mode as u64)).len() > 1;
    let labels: Vec<String> = rows.iter().map(|r| bar_label(r, several_modes)).collect();
    let mut engines: Vec<String> = rows.iter().map(|r| r.engine.clone()).collect();
    engines.dedup();
    let top = rows
        .iter()
        .map(|r| r.mlps_max)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.15;
    let n = rows.len();
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(260)
        .build_cartesian_2d(0.0f64..top, (0..n.saturating_sub(1)).into_segmented())
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n.max(1))
        .y_label_formatter(&|v| match v {
            // Row 0 at the top.
            SegmentValue::CenterOf(i) => n
                .checked_sub(i + 1)
                .and_then(|k| labels.get(k))
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(("sans-serif", 15))
        .x_desc("M lookups/s (bar: median; whiskers: min-max over the runs)")
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    for (k, r) in rows.iter().enumerate() {
        let i = n - 1 - k;
        let color = color_of(&engines, &r.engine);
        let style = if r.path == crate::bench::modes::Path::Batch {
            color.mix(0.55).filled()
        } else {
            color.filled()
        };
        let mlps = if r.mlps.is_finite() { r.mlps } else { top };
        let mut bar = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(i)),
                (mlps, SegmentValue::Exact(i + 1)),
            ],
            style,
        );
        bar.set_margin(4, 4, 0, 0);
        chart.draw_series(std::iter::once(bar)).map_err(err)?;
        let (lo, hi) = (r.mlps_min.min(top), r.mlps_max.min(top));
        let whisker = BLACK.stroke_width(2);
        let mid = SegmentValue::CenterOf(i);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(lo, mid.clone()), (hi, mid.clone())],
                whisker,
            )))
            .map_err(err)?;
        for x in [lo, hi] {
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((x, mid.clone()))
                        + PathElement::new(vec![(0, -7), (0, 7)], whisker),
                ))
                .map_err(err)?;
        }
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((hi, mid.clone()))
                    + Text::new(
                        format!("{mlps:.2}"),
                        (8, -7),
                        ("sans-serif", 14).into_font(),
                    ),
            ))
            .map_err(err)?;
    }
    Ok(())
}

fn lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rows: &[&Row],
    x_of: impl Fn(&Row) -> f64,
    x_desc: &str,
    title: &str,
) -> anyhow::Result<()> {
    // One series per engine, path and mode.
    let mut keys: Vec<(String, &'static str, &'static str)> = Vec::new();
    for r in rows {
        let k = (r.engine.clone(), r.path.name(), r.mode.name());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let xs: Vec<f64> = rows.iter().map(|r| x_of(r)).collect();
    let (x_lo, x_hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let pad = ((x_hi - x_lo) * 0.05).max(0.5);
    let top = rows
        .iter()
        .map(|r| r.mlps_max)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((x_lo - pad)..(x_hi + pad), 0.0f64..top)
        .map_err(err)?;
    let integral = xs.iter().all(|x| x.fract() == 0.0);
    chart
        .configure_mesh()
        .x_label_formatter(&|x| {
            if !integral {
                format!("{x}")
            } else if x.fract() == 0.0 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        })
        .x_desc(x_desc)
        .y_desc("M lookups/s")
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    for (k, (engine, path, mode)) in keys.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| &r.engine == engine && r.path.name() == *path && r.mode.name() == *mode)
            .map(|r| (x_of(r), r.mlps.min(top)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = HSLColor(k as f64 / keys.len() as f64, 0.75, 0.42);
        let stroke = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(pts.clone(), stroke))
            .map_err(err)?
            .label(format!("{engine} {path} {mode}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], stroke));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_by_extension() {
        assert_eq!(Format::of(Path::new("a/b.svg")).unwrap(), Format::Svg);
        assert_eq!(Format::of(Path::new("B.PNG")).unwrap(), Format::Png);
        let e = Format::of(Path::new("out.pdf")).unwrap_err().to_string();
        assert!(e.contains("out.pdf") && e.contains(".svg"), "{e}");
        assert!(Format::of(Path::new("noext")).is_err());
    }

    #[test]
    fn siblings_keep_directory_and_extension() {
        assert_eq!(
            sibling(Path::new("d/out.svg"), "sizes"),
            PathBuf::from("d/out-sizes.svg")
        );
        assert_eq!(
            sibling(Path::new("x.png"), "threads"),
            PathBuf::from("x-threads.png")
        );
    }
}
