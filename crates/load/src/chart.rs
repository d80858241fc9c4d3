//! Hand-written SVG charts of one scenario: answers per second against the plan's limit, and
//! the header trace (X-RateLimit-Remaining, seconds to X-RateLimit-Reset) over time.

use std::fmt::Write;

use super::judge::{Band, FleetSummary};
use super::judge::{ScenarioResult, Second};
use linkcert_report::escape as esc;

const W: f64 = 760.0;
const H: f64 = 220.0;
const LEFT: f64 = 50.0;
const RIGHT: f64 = 60.0;
/// Room for the title and, under it, the legend.
const TOP: f64 = 38.0;
const BOTTOM: f64 = 28.0;

/// A rate as people write it: 10, 2.5.
pub(crate) fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Axis ticks at round steps (1, 2, 2.5 or 5 times a power of ten) from 0 through `max`, each
/// with its label: no two labels alike, whatever the scale (0.25 steps read 0.25, not 0).
pub(crate) fn ticks(max: f64) -> Vec<(f64, String)> {
    ticks_in(max, 4.0)
}

/// As `ticks`, about `steps` steps.
fn ticks_in(max: f64, steps: f64) -> Vec<(f64, String)> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / steps;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    // Decimals enough for the step (2.5 x 10^k needs one more than 10^k).
    let decimals = ((-step.log10()).ceil().max(0.0) as usize + 1).min(9);
    let count = (max / step + 1e-9).floor() as usize;
    (0..=count)
        .map(|i| {
            let v = step * i as f64;
            let l = format!("{v:.decimals$}");
            let l = if l.contains('.') {
                l.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                l
            };
            (v, l)
        })
        .collect()
}

struct Frame {
    t_max: f64,
    y_max: f64,
}

impl Frame {
    fn x(&self, t: f64) -> f64 {
        LEFT + (W - LEFT - RIGHT) * (t / self.t_max).clamp(0.0, 1.0)
    }
    fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (H - TOP - BOTTOM) * (v / self.y_max).clamp(0.0, 1.0)
    }
}

/// The frame, title, and labelled ticks; `x_unit` at the end of the x axis (s for time).
fn axes(out: &mut String, f: &Frame, title: &str, y_label: &str, x_unit: &str) {
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        W - LEFT - RIGHT,
        H - TOP - BOTTOM
    );
    let _ = write!(
        out,
        r##"<text x="{LEFT}" y="15" font-size="12" font-weight="bold">{}</text>"##,
        esc(title)
    );
    for (v, label) in ticks(f.y_max) {
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" font-size="10" text-anchor="end">{label}</text>"##,
            LEFT - 4.0,
            f.y(v) + 3.0
        );
    }
    for (t, label) in ticks_in(f.t_max, 10.0) {
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{}" font-size="10" text-anchor="middle">{label}</text>"##,
            f.x(t),
            H - BOTTOM + 12.0
        );
    }
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" font-size="10" text-anchor="end">{}</text><text x="4" y="{}" font-size="10">{}</text>"##,
        W - RIGHT,
        H - 4.0,
        esc(x_unit),
        TOP - 4.0,
        esc(y_label)
    );
}

fn polyline(out: &mut String, f: &Frame, pts: &[(f64, f64)], color: &str, dash: bool) {
    if pts.is_empty() {
        return;
    }
    let mut d = String::new();
    for (t, v) in pts {
        let _ = write!(d, "{:.1},{:.1} ", f.x(*t), f.y(*v));
    }
    let _ = write!(
        out,
        r##"<polyline points="{d}" fill="none" stroke="{color}" stroke-width="1.6"{}/>"##,
        if dash {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        }
    );
}

fn legend(out: &mut String, items: &[(&str, &str)]) {
    let mut x = LEFT;
    for (label, color) in items {
        let _ = write!(
            out,
            r##"<rect x="{x}" y="21" width="10" height="10" fill="{color}"/><text x="{}" y="30" font-size="11">{}</text>"##,
            x + 13.0,
            esc(label)
        );
        x += 16.0 + 7.0 * label.len() as f64;
    }
}

/// The three charts of a scenario, one SVG per key: answers per second, the header trace, and
/// the target's latency per second. A fleet gets one chart for all its keys (`fleet_svg`).
pub fn svg(r: &ScenarioResult) -> String {
    if let Some(fl) = &r.fleet {
        return fleet_svg(r, fl);
    }
    let mut all = String::new();
    for (key, k) in r.keys.iter().enumerate() {
        let secs: Vec<_> = r.seconds.iter().filter(|s| s.key == key).collect();
        let t_max = (secs.len() as f64).max(1.0);
        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{}" font-family="sans-serif">"##,
            3.0 * H + 20.0
        );
        // Each key's own limit (`plans`: its plan's); the scenario's where none was kept.
        let limit = if k.limit > 0 { k.limit } else { r.limit };
        answers(&mut out, r, (&k.label, limit), &secs, t_max);
        trace(&mut out, r, key, t_max);
        latency(&mut out, &secs, t_max);
        out.push_str("</svg>");
        all.push_str(&out);
        all.push('\n');
    }
    all
}

/// Answers per second by outcome, against what was offered and the plan's limit.
fn answers(
    out: &mut String,
    r: &ScenarioResult,
    (label, limit): (&str, u64),
    secs: &[&Second],
    t_max: f64,
) {
    let limit_per_sec = if r.window_secs > 0.0 {
        limit as f64 / r.window_secs
    } else {
        0.0
    };
    let peak = secs
        .iter()
        .map(|s| s.n.offered.max(s.n.sent) as f64)
        .fold(limit_per_sec, f64::max);
    let f = Frame {
        t_max,
        y_max: (peak * 1.15).max(1.0),
    };
    axes(
        out,
        &f,
        &format!("{} · {label}: answers per second", r.name),
        "req/s",
        "s",
    );
    let series = |pick: &dyn Fn(&Second) -> u64| -> Vec<(f64, f64)> {
        secs.iter()
            .flat_map(|s| {
                let v = pick(s) as f64;
                [(s.t as f64, v), (s.t as f64 + 1.0, v)]
            })
            .collect()
    };
    polyline(out, &f, &series(&|s| s.n.offered), "#888", true);
    polyline(out, &f, &series(&|s| s.n.admitted), "#2a9d3a", false);
    polyline(out, &f, &series(&|s| s.n.throttled), "#d62828", false);
    polyline(
        out,
        &f,
        &series(&|s| s.n.other + s.n.errors),
        "#f4a261",
        false,
    );
    polyline(out, &f, &series(&|s| s.n.failed_to_send), "#7b2cbf", true);
    let limit = [(0.0, limit_per_sec), (t_max, limit_per_sec)];
    polyline(out, &f, &limit, "#1d4ed8", true);
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" fill="#1d4ed8">limit {}/s</text>"##,
        W - RIGHT - 4.0,
        f.y(limit_per_sec) - 4.0,
        trim(limit_per_sec)
    );
    legend(
        out,
        &[
            ("offered", "#888"),
            ("admitted 2xx", "#2a9d3a"),
            ("throttled 429", "#d62828"),
            ("other", "#f4a261"),
            ("late/unsent", "#7b2cbf"),
        ],
    );
}

/// The header trace, below the answers: X-RateLimit-Remaining (left axis) and the seconds to
/// X-RateLimit-Reset (right axis) of each traced answer of key `key`.
fn trace(out: &mut String, r: &ScenarioResult, key: usize, t_max: f64) {
    let _ = write!(out, r##"<g transform="translate(0,{})">"##, H + 10.0);
    let trace: Vec<_> = r.trace.iter().filter(|p| p.key == key).collect();
    let rem_max = trace
        .iter()
        .filter_map(|p| p.remaining)
        .max()
        .unwrap_or(r.limit)
        .max(1) as f64;
    let reset_max = trace
        .iter()
        .filter_map(|p| p.reset_in)
        .fold(r.window_secs, f64::max)
        .max(1.0);
    let fr = Frame {
        t_max,
        y_max: rem_max,
    };
    let fs = Frame {
        t_max,
        y_max: reset_max,
    };
    axes(
        out,
        &fr,
        "header trace: X-RateLimit-Remaining (left), seconds to X-RateLimit-Reset (right)",
        "remaining",
        "s",
    );
    for (v, label) in ticks(reset_max) {
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" font-size="10" fill="#b45309">{label}</text>"##,
            W - RIGHT + 4.0,
            fs.y(v) + 3.0
        );
    }
    for p in &trace {
        if let Some(v) = p.remaining {
            let color = if p.status == 429 {
                "#d62828"
            } else {
                "#2a9d3a"
            };
            let _ = write!(
                out,
                r##"<circle cx="{:.1}" cy="{:.1}" r="1.6" fill="{color}"/>"##,
                fr.x(p.t),
                fr.y(v as f64)
            );
        }
        if let Some(v) = p.reset_in {
            let _ = write!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="2" height="2" fill="#b45309"/>"##,
                fs.x(p.t) - 1.0,
                fs.y(v) - 1.0
            );
        }
    }
    out.push_str("</g>");
}

/// The target's latency per second (send to answer), p50 and p99, below the header trace.
fn latency(out: &mut String, secs: &[&Second], t_max: f64) {
    let _ = write!(
        out,
        r##"<g transform="translate(0,{})">"##,
        2.0 * (H + 10.0)
    );
    let top = secs
        .iter()
        .map(|s| s.p99_ms.max(s.p50_ms))
        .fold(1.0, f64::max);
    let f = Frame {
        t_max,
        y_max: top * 1.15,
    };
    axes(
        out,
        &f,
        "the target's latency per second: p50 and p99 (send to answer)",
        "ms",
        "s",
    );
    let series = |pick: &dyn Fn(&Second) -> f64| -> Vec<(f64, f64)> {
        secs.iter()
            .filter(|s| s.n.sent > 0)
            .flat_map(|s| {
                let v = pick(s);
                [(s.t as f64, v), (s.t as f64 + 1.0, v)]
            })
            .collect()
    };
    polyline(out, &f, &series(&|s| s.p50_ms), "#0f766e", false);
    polyline(out, &f, &series(&|s| s.p99_ms), "#b91c1c", true);
    legend(out, &[("p50", "#0f766e"), ("p99", "#b91c1c")]);
    out.push_str("</g>");
}

/// A fleet in one chart: per second, the spread across keys (p10, p50, p90) of what each key
/// was admitted, against one key's limit per second.
fn fleet_svg(r: &ScenarioResult, fl: &FleetSummary) -> String {
    let limit_per_sec = if r.window_secs > 0.0 {
        r.limit as f64 / r.window_secs
    } else {
        0.0
    };
    let t_max = fl.bands.last().map_or(1.0, |b| b.t as f64 + 1.0);
    let peak = fl.bands.iter().map(|b| b.p90).fold(limit_per_sec, f64::max);
    let f = Frame {
        t_max,
        y_max: (peak * 1.15).max(1.0),
    };
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">"##
    );
    axes(
        &mut out,
        &f,
        &format!("{} · {} keys: admitted per key and second", r.name, fl.keys),
        "req/s",
        "s",
    );
    let series = |pick: &dyn Fn(&Band) -> f64| -> Vec<(f64, f64)> {
        fl.bands
            .iter()
            .flat_map(|b| [(b.t as f64, pick(b)), (b.t as f64 + 1.0, pick(b))])
            .collect()
    };
    polyline(&mut out, &f, &series(&|b| b.p90), "#d62828", true);
    polyline(&mut out, &f, &series(&|b| b.p50), "#2a9d3a", false);
    polyline(&mut out, &f, &series(&|b| b.p10), "#888", true);
    polyline(
        &mut out,
        &f,
        &[(0.0, limit_per_sec), (t_max, limit_per_sec)],
        "#1d4ed8",
        true,
    );
    legend(
        &mut out,
        &[
            ("p90 of keys", "#d62828"),
            ("p50", "#2a9d3a"),
            ("p10", "#888"),
            ("one key's limit", "#1d4ed8"),
        ],
    );
    out.push_str("</svg>\n");
    out.push_str(&distribution_svg(r));
    out
}

/// Bins of the distribution chart.
const BINS: usize = 24;

/// A fleet's keys by what they were admitted per window over the limit (1: a full window's
/// worth), each group of keys (by rate) in its own colour, stacked: where the fleet stands
/// against the limit at a glance, however many keys.
fn distribution_svg(r: &ScenarioResult) -> String {
    let values: Vec<(f64, f64)> = r
        .keys
        .iter()
        .map(|k| (k.rate, super::judge::fleet::admitted_to_limit(k, r.limit)))
        .collect();
    let x_max = values.iter().map(|v| v.1).fold(1.25, f64::max);
    let mut rates: Vec<f64> = values.iter().map(|v| v.0).collect();
    rates.sort_by(|a, b| b.total_cmp(a));
    rates.dedup();
    // counts[bin][group]
    let mut counts = vec![vec![0u64; rates.len()]; BINS];
    for (rate, v) in &values {
        let bin = ((v / x_max * BINS as f64) as usize).min(BINS - 1);
        let g = rates.iter().position(|x| x == rate).unwrap_or(0);
        counts[bin][g] += 1;
    }
    let peak = counts
        .iter()
        .map(|c| c.iter().sum::<u64>())
        .max()
        .unwrap_or(0);
    let f = Frame {
        t_max: x_max,
        y_max: (peak as f64 * 1.1).max(1.0),
    };
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" class="distribution">"##
    );
    axes(
        &mut out,
        &f,
        &format!("{}: keys by admitted per window over the limit", r.name),
        "keys",
        "x the limit",
    );
    const COLORS: [&str; 4] = ["#d62828", "#2a9d3a", "#888", "#1d4ed8"];
    let width = x_max / BINS as f64;
    for (bin, c) in counts.iter().enumerate() {
        let mut below = 0u64;
        for (g, n) in c.iter().enumerate().filter(|(_, n)| **n > 0) {
            let (x0, x1) = (f.x(bin as f64 * width), f.x((bin + 1) as f64 * width));
            let (y0, y1) = (f.y((below + n) as f64), f.y(below as f64));
            let _ = write!(
                out,
                r##"<rect x="{x0:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{n} keys at {}x</title></rect>"##,
                (x1 - x0 - 1.0).max(0.5),
                y1 - y0,
                COLORS[g % COLORS.len()],
                trim(rates[g])
            );
            below += n;
        }
    }
    polyline(&mut out, &f, &[(1.0, 0.0), (1.0, f.y_max)], "#1d4ed8", true);
    let items: Vec<(String, &str)> = rates
        .iter()
        .enumerate()
        .map(|(g, rate)| {
            (
                format!("keys at {}x", trim(*rate)),
                COLORS[g % COLORS.len()],
            )
        })
        .chain([("the limit".to_string(), "#1d4ed8")])
        .collect();
    let items: Vec<(&str, &str)> = items.iter().map(|(l, c)| (l.as_str(), *c)).collect();
    legend(&mut out, &items);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{KeyStats, ScenarioResult, Second};

    /// Labels at round steps, none alike, at any scale: a fleet's quiet keys, admitted about
    /// once a second, read 0, 0.25, 0.5, 0.75, 1 (they read 1, 1, 1, 0, 0 before).
    #[test]
    fn axis_labels_are_round_and_distinct_at_any_scale() {
        let labels = |max: f64| -> Vec<String> { ticks(max).into_iter().map(|t| t.1).collect() };
        assert_eq!(labels(1.15), ["0", "0.5", "1"]);
        assert_eq!(labels(1.0), ["0", "0.25", "0.5", "0.75", "1"]);
        assert_eq!(labels(69.0), ["0", "20", "40", "60"]);
        assert_eq!(labels(0.023), ["0", "0.01", "0.02"]);
        assert_eq!(labels(3450.0), ["0", "1000", "2000", "3000"]);
        for max in [0.003, 0.7, 1.15, 7.0, 23.0, 140.0, 1e5] {
            let l = labels(max);
            let mut d = l.clone();
            d.dedup();
            assert_eq!(l, d, "{max}");
            assert!((3..=6).contains(&l.len()), "{max}: {l:?}");
        }
    }

    #[test]
    fn the_chart_draws_the_targets_latency_per_second() {
        let s = crate::Scenario::load("free-overload").expect("built-in");
        let mut r = ScenarioResult::of(&s, "standard");
        r.limit = 60;
        r.window_secs = 6.0;
        r.keys.push(KeyStats::of_test("free#1", 2, 2, 1.0, 1.0));
        for t in 0..2 {
            r.seconds.push(Second {
                t,
                key: 0,
                n: crate::judge::Tally {
                    offered: 1,
                    sent: 1,
                    admitted: 1,
                    ..Default::default()
                },
                p50_ms: 250.0,
                p99_ms: 400.0,
            });
        }
        let svg = svg(&r);
        assert!(
            svg.contains("the target&#39;s latency per second")
                || svg.contains("the target's latency per second"),
            "{svg}"
        );
        // Two polylines for the latency panel, drawn in its colours.
        assert!(svg.contains("#0f766e") && svg.contains("#b91c1c"), "{svg}");
    }
}
