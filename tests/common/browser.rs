//! Reports as a reader's browser builds them: Debian's Chromium, headless.

use std::path::Path;
use std::process::Stdio;

/// Open a page in headless Chromium: the DOM it built, or with `screenshot` a picture of it.
/// Chromium is installed by .ci/run; elsewhere the browser half runs when /usr/bin/chromium
/// (or $LINKCERT_CHROMIUM) exists (None without it), and LINKCERT_REQUIRE_BROWSER=1 makes its
/// absence a failure.
pub fn browser(html: &Path, screenshot: Option<&Path>) -> Option<String> {
    let chromium = super::installed(
        super::Tool {
            env: "LINKCERT_CHROMIUM",
            path: "/usr/bin/chromium",
            required_by: "LINKCERT_REQUIRE_BROWSER",
            package: "chromium",
        },
        "the report was checked structurally only",
    )?;
    // A profile of its own per browser: two tests at once in one process would otherwise share
    // one, and the second Chromium refuses it ("SingletonLock: File exists").
    static BROWSERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let nth = BROWSERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = std::env::temp_dir().join(format!(
        "linkcert-chromium-profile-{nth}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).expect("a profile directory");
    let url = format!("file://{}", html.display());
    let mut args = vec![
        "--headless".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    match screenshot {
        Some(png) => {
            args.push(format!("--screenshot={}", png.display()));
            args.push("--window-size=1100,1400".into());
        }
        None => args.push("--dump-dom".into()),
    }
    args.push(url);
    let out = std::process::Command::new(&chromium)
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}
