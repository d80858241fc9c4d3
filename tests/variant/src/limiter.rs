//! A fixed-window counter per key, windows aligned to the clock (multiples of the window since
//! the epoch), refused requests not counted: up to 2N can pass in a rolling window that
//! straddles a boundary, which the document does not forbid.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub struct FixedWindow {
    window_ms: u128,
    /// key -> (window index, admitted in it, admitted in all)
    counts: Mutex<HashMap<String, (u128, u64, u64)>>,
}

pub struct State {
    pub admitted: bool,
    pub remaining: u64,
    /// When the current window ends, UTC epoch seconds (rounded up).
    pub reset_epoch_secs: u64,
    pub retry_after_secs: u64,
}

impl FixedWindow {
    pub fn new(window: Duration) -> FixedWindow {
        FixedWindow {
            window_ms: window.as_millis().max(1),
            counts: Mutex::new(HashMap::new()),
        }
    }

    pub fn admit(&self, key: &str, limit: u64) -> State {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let index = now_ms / self.window_ms;
        let end_ms = (index + 1) * self.window_ms;
        let mut map = self.counts.lock().unwrap();
        let e = map.entry(key.to_string()).or_insert((index, 0, 0));
        if e.0 != index {
            e.0 = index;
            e.1 = 0;
        }
        let admitted = e.1 < limit;
        if admitted {
            e.1 += 1;
            e.2 += 1;
        }
        State {
            admitted,
            remaining: limit - e.1,
            reset_epoch_secs: end_ms.div_ceil(1000) as u64,
            retry_after_secs: (end_ms - now_ms).div_ceil(1000) as u64,
        }
    }

    pub fn admitted(&self, key: &str) -> u64 {
        self.counts.lock().unwrap().get(key).map_or(0, |e| e.2)
    }
}
