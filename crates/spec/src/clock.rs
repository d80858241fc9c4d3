//! The wall clock: "now" in UTC epoch seconds (every reader of the wall clock that wants a
//! number asks here), and instants as people read them: RFC 3339 in UTC, as the reference's
//! data and every report write them. A leaf: no other module of ours is needed here.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wall clock in UTC epoch seconds.
pub fn now_epoch() -> f64 {
    since_epoch().as_secs_f64()
}

/// The wall clock in whole UTC epoch seconds (rounded down), for dates and stamps.
pub fn now_epoch_secs() -> u64 {
    since_epoch().as_secs()
}

fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Epoch seconds as `YYYY-MM-DDTHH:MM:SSZ` (days-from-civil, Howard Hinnant's algorithm).
pub fn rfc3339(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    let secs = epoch % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// An RFC 3339 time (`2026-11-26T03:00:00Z`, with fractions and offsets) as UTC epoch seconds;
/// None when it is not one.
pub fn parse_rfc3339(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        frac = format!("0.{}", &r[..digits]).parse().ok()?;
        rest = &r[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) && &o[3..4] == ":" => {
            let (oh, om): (i64, i64) = (o[1..3].parse().ok()?, o[4..6].parse().ok()?);
            let v = oh * 3600 + om * 60;
            if o.starts_with('-') { -v } else { v }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y2, m2) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + sec - offset) as f64 + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_704_067_200), "2024-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
    }

    #[test]
    fn what_rfc3339_writes_parses_back() {
        for epoch in [0, 951_782_400 + 3_661, 1_704_067_200, 1_764_126_000] {
            assert_eq!(parse_rfc3339(&rfc3339(epoch)), Some(epoch as f64));
        }
        // Across a month's end, with cargo-mutants' nanoseconds.
        let (a, b) = ("2026-11-30T23:59:30.5Z", "2026-12-01T00:00:30.5Z");
        assert_eq!(
            parse_rfc3339(b).zip(parse_rfc3339(a)).map(|(b, a)| b - a),
            Some(60.0)
        );
        assert_eq!(parse_rfc3339("2026-11-30"), None);
    }
}
