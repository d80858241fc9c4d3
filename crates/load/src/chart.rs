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

fn axes(out: &mut String, f: &Frame, title: &str, y_label: &str) {
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
    for i in 0..=4 {
        let v = f.y_max * f64::from(i) / 4.0;
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" font-size="10" text-anchor="end">{v:.0}</text>"##,
            LEFT - 4.0,
            f.y(v) + 3.0
        );
    }
    let ticks = (f.t_max.ceil() as u64).clamp(1, 20);
    for i in 0..=ticks {
        let t = f.t_max * i as f64 / ticks as f64;
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{}" font-size="10" text-anchor="middle">{t:.0}</text>"##,
            f.x(t),
            H - BOTTOM + 12.0
        );
    }
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" font-size="10" text-anchor="end">s</text><text x="4" y="{}" font-size="10">{}</text>"##,
        W - RIGHT,
        H - 4.0,
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
        answers(&mut out, r, &k.label, &secs, t_max);
        trace(&mut out, r, key, t_max);
        latency(&mut out, &secs, t_max);
        out.push_str("</svg>");
        all.push_str(&out);
        all.push('\n');
    }
    all
}

/// Answers per second by outcome, against what was offered and the plan's limit.
fn answers(out: &mut String, r: &ScenarioResult, label: &str, secs: &[&Second], t_max: f64) {
    let limit_per_sec = if r.window_secs > 0.0 {
        r.limit as f64 / r.window_secs
    } else {
        0.0
    };
    let peak = secs
        .iter()
        .map(|s| s.offered.max(s.sent) as f64)
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
    );
    let series = |pick: &dyn Fn(&Second) -> u64| -> Vec<(f64, f64)> {
        secs.iter()
            .flat_map(|s| {
                let v = pick(s) as f64;
                [(s.t as f64, v), (s.t as f64 + 1.0, v)]
            })
            .collect()
    };
    polyline(out, &f, &series(&|s| s.offered), "#888", true);
    polyline(out, &f, &series(&|s| s.admitted), "#2a9d3a", false);
    polyline(out, &f, &series(&|s| s.throttled), "#d62828", false);
    polyline(out, &f, &series(&|s| s.other + s.errors), "#f4a261", false);
    polyline(out, &f, &series(&|s| s.failed_to_send), "#7b2cbf", true);
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
    );
    for i in 0..=4 {
        let v = reset_max * f64::from(i) / 4.0;
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" font-size="10" fill="#b45309">{v:.1}</text>"##,
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
    );
    let series = |pick: &dyn Fn(&Second) -> f64| -> Vec<(f64, f64)> {
        secs.iter()
            .filter(|s| s.sent > 0)
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{KeyStats, Percentiles, ScenarioResult, Second};

    #[test]
    fn the_chart_draws_the_targets_latency_per_second() {
        let s = crate::Scenario::load("free-overload").expect("built-in");
        let mut r = ScenarioResult::of(&s, "standard");
        r.limit = 60;
        r.window_secs = 6.0;
        r.keys.push(KeyStats {
            label: "free#1".into(),
            target_key: 0,
            scheduled: 2,
            sent: 2,
            admitted: 2,
            throttled: 0,
            other: Default::default(),
            errors: 0,
            refused_locally: 0,
            late: 0,
            unsent: 0,
            latency_ms: Percentiles::default(),
            windows_loaded: 1.0,
            rolling_max: 2,
            admitted_bounds: [0.0, 60.0],
            first_throttled_at: None,
            rate: 1.0,
        });
        for t in 0..2 {
            r.seconds.push(Second {
                t,
                key: 0,
                offered: 1,
                sent: 1,
                admitted: 1,
                p50_ms: 250.0,
                p99_ms: 400.0,
                ..Second::default()
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
