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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_704_067_200), "2024-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
    }
}
