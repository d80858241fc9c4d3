//! A real Prometheus for the tests of `load --metrics`: Debian's `prometheus` package (.ci/run
//! installs it), on loopback, with its remote-write receiver on; its query API; and the
//! picture the book shows, drawn from what its queries return.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Prometheus {
    child: Child,
    pub url: String,
    dir: PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port nothing listens on (bound, then let go).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    l.local_addr().expect("its address").port()
}

impl Prometheus {
    /// Started and ready; None where it is not installed (LINKCERT_REQUIRE_PROMETHEUS=1, which
    /// .ci/run sets, makes that a failure).
    pub async fn start(name: &str) -> Option<Prometheus> {
        let bin = super::installed(
            super::Tool {
                env: "LINKCERT_PROMETHEUS",
                path: "/usr/bin/prometheus",
                required_by: "LINKCERT_REQUIRE_PROMETHEUS",
                package: "prometheus",
            },
            "the test of load --metrics did not run",
        )?;
        let dir =
            std::env::temp_dir().join(format!("linkcert-prometheus-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a directory for Prometheus");
        let config = dir.join("prometheus.yml");
        // Nothing to scrape: everything comes by remote write.
        std::fs::write(&config, "global:\n  scrape_interval: 1h\n").expect("its config");
        let port = free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).expect("its log");
        let child = Command::new(&bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--web.enable-remote-write-receiver")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("its log"))
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        let p = Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        };
        let started = Instant::now();
        while reqwest::get(format!("{}/-/ready", p.url))
            .await
            .map_or(true, |r| !r.status().is_success())
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "Prometheus not ready in 30 s: {}",
                std::fs::read_to_string(p.dir.join("prometheus.log")).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Some(p)
    }

    /// Its remote-write endpoint, as `--metrics prometheus-rw=` takes it.
    pub fn write_url(&self) -> String {
        format!("{}/api/v1/write", self.url)
    }

    async fn api(&self, path: &str, params: &[(&str, String)]) -> Value {
        let url = reqwest::Url::parse_with_params(&format!("{}{path}", self.url), params)
            .expect("a query URL");
        let r = reqwest::Client::new()
            .get(url)
            .send()
            .await
            .expect("Prometheus answers");
        let v: Value = r.json().await.expect("JSON");
        assert_eq!(v["status"], "success", "{path} {params:?}: {v}");
        v["data"]["result"].clone()
    }

    /// An instant query now: its result vector.
    pub async fn query(&self, q: &str) -> Vec<Value> {
        self.api("/api/v1/query", &[("query", q.to_string())])
            .await
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// A range query, a step of a second: its result matrix.
    pub async fn query_range(&self, q: &str, start: f64, end: f64) -> Vec<Value> {
        self.api(
            "/api/v1/query_range",
            &[
                ("query", q.to_string()),
                ("start", format!("{start:.3}")),
                ("end", format!("{end:.3}")),
                ("step", "1".into()),
            ],
        )
        .await
        .as_array()
        .cloned()
        .unwrap_or_default()
    }
}

/// A sample's value as a number.
pub fn number(v: &Value) -> f64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN)
}

/// One panel of the picture: its title and its lines (a name, and (seconds, value) points).
pub struct Panel {
    pub title: String,
    pub unit: String,
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
}

/// Lines of a range query's result, named by `legend` (`{{plan}} admitted`: Grafana's form),
/// times counted from `start`.
pub fn lines(result: &[Value], legend: &str, start: f64) -> Vec<(String, Vec<(f64, f64)>)> {
    result
        .iter()
        .map(|s| {
            let mut name = legend.to_string();
            if let Some(m) = s["metric"].as_object() {
                for (k, v) in m {
                    name = name.replace(&format!("{{{{{k}}}}}"), v.as_str().unwrap_or_default());
                }
            }
            let points = s["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| Some((p[0].as_f64()? - start, number(&p[1]))))
                .filter(|(_, v)| v.is_finite())
                .collect();
            (name, points)
        })
        .collect()
}

/// A figure with three significant digits at most: 264, 26.4, 0.00264.
fn figure(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The panels as one SVG, two to a row, as the dashboard lays them out.
pub fn svg(panels: &[Panel]) -> String {
    let (w, h) = (460.0, 230.0);
    let rows = panels.len().div_ceil(2);
    let mut o = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">"#,
        w * 2.0,
        h * rows as f64
    );
    o.push_str(r##"<rect width="100%" height="100%" fill="#fff"/>"##);
    for (i, p) in panels.iter().enumerate() {
        let (x0, y0) = ((i % 2) as f64 * w, (i / 2) as f64 * h);
        let (left, top, pw, ph) = (x0 + 70.0, y0 + 40.0, w - 90.0, h - 70.0);
        let tmax = p
            .lines
            .iter()
            .flat_map(|(_, ps)| ps)
            .map(|(t, _)| *t)
            .fold(1.0, f64::max);
        let vmax = p
            .lines
            .iter()
            .flat_map(|(_, ps)| ps)
            .map(|(_, v)| *v)
            .fold(0.0, f64::max);
        let vmax = if vmax > 0.0 { vmax * 1.1 } else { 1.0 };
        o.push_str(&format!(
            r#"<text x="{}" y="{}" font-size="13" font-weight="bold">{}</text>"#,
            x0 + 10.0,
            y0 + 18.0,
            esc(&p.title)
        ));
        o.push_str(&format!(
            r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>"##
        ));
        for k in 0..=4 {
            let v = vmax * k as f64 / 4.0;
            let y = top + ph - ph * k as f64 / 4.0;
            o.push_str(&format!(
                r##"<text x="{}" y="{}" text-anchor="end" fill="#555">{} {}</text>"##,
                left - 4.0,
                y + 4.0,
                figure(v),
                esc(&p.unit)
            ));
        }
        o.push_str(&format!(
            r##"<text x="{}" y="{}" text-anchor="end" fill="#555">{tmax:.0} s</text>"##,
            left + pw,
            top + ph + 14.0
        ));
        for (j, (name, points)) in p.lines.iter().enumerate() {
            let c = COLOURS[j % COLOURS.len()];
            let d: Vec<String> = points
                .iter()
                .map(|(t, v)| {
                    format!(
                        "{:.1},{:.1}",
                        left + pw * t / tmax,
                        top + ph - ph * v / vmax
                    )
                })
                .collect();
            o.push_str(&format!(
                r#"<polyline class="series" fill="none" stroke="{c}" stroke-width="1.5" points="{}"/>"#,
                d.join(" ")
            ));
            o.push_str(&format!(
                r#"<text x="{}" y="{}" fill="{c}">{}</text>"#,
                // Three legends across, the fourth under the first, below the title.
                x0 + 10.0 + 150.0 * (j % 3) as f64,
                y0 + 32.0 + 11.0 * (j / 3) as f64,
                esc(name)
            ));
        }
    }
    o.push_str("</svg>\n");
    o
}
