//! The admitted count's bounds over the windows a key was driven: load.admitted and
//! check's limiter.over-time judge by them, and load's per-key figures carry them.

/// The admitted count's bounds over the k windows the key was loaded, with their slack.
pub struct Bounds {
    pub lower: f64,
    pub upper: f64,
    pub slack: f64,
    pub k: f64,
}

impl Bounds {
    /// `span`: seconds from the key's first send to its last; `overloaded`: the scenario
    /// overloads this key.
    pub fn of(span: f64, n: u64, w: f64, overloaded: bool) -> Bounds {
        let k = span / w;
        let boundaries = k.ceil() + 1.0;
        let slack = boundaries * (0.02 * n as f64).ceil().max(2.0);
        // A span of k windows touches at most ceil(k) + 1 fixed windows, each good for N: the
        // most any limiter of N per window may admit (a sliding log or bucket admits less).
        let upper = n as f64 * (k.ceil() + 1.0) + slack;
        let lower = if overloaded {
            (n as f64 * (k - 1.0) - slack).max(0.0)
        } else {
            0.0
        };
        Bounds {
            lower,
            upper,
            slack,
            k,
        }
    }
}
