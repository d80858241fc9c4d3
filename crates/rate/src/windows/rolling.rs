//! The most admissions provably inside one rolling window (load.rolling-window's count, and
//! the per-window counts of `named.rs`).

use std::collections::VecDeque;

/// Most admissions provably within one rolling window: for each admission i, those sent
/// after i's answer came and answered before i was sent plus W lie, at the server, within
/// [s_i, s_i + W]. Fed (sent, recv) of admissions in send order; an admission is counted once
/// no later one can fall in its window, so only the last window's admissions are kept.
pub struct RollingMax {
    w: f64,
    /// Admissions from the oldest still needed; `next`: the first not counted yet.
    adm: VecDeque<(f64, f64)>,
    next: usize,
    best: u64,
}

impl RollingMax {
    pub fn new(w: f64) -> RollingMax {
        RollingMax {
            w,
            adm: VecDeque::new(),
            next: 0,
            best: 0,
        }
    }
    pub fn observe(&mut self, sent: f64, recv: f64) {
        self.close(sent);
        self.adm.push_back((sent, recv));
    }
    pub fn finish(mut self) -> u64 {
        self.close(f64::INFINITY);
        self.best
    }
    /// Count every admission whose window ends before `now` (nothing sent later falls in it),
    /// then drop those no admission still to be counted can see.
    fn close(&mut self, now: f64) {
        while let Some(&(s, r)) = self.adm.get(self.next)
            && s + self.w < now
        {
            let end = s + self.w;
            let count = 1 + self
                .adm
                .iter()
                .enumerate()
                .filter(|&(j, &(bs, br))| j != self.next && bs >= r && bs <= end && br <= end)
                .count() as u64;
            self.best = self.best.max(count);
            self.next += 1;
        }
        // Those still to be counted look no earlier than their own send.
        let from = self.adm.get(self.next).map_or(now, |a| a.0);
        while self.next > 0 && self.adm.front().is_some_and(|a| a.0 < from) {
            self.adm.pop_front();
            self.next -= 1;
        }
    }
}
