//! Judging one settled answer of a key against the key's earlier answers.

use super::*;

/// How many earlier admissions an admission's Remaining is set against (`judge_lowered`).
const LOWERED_ANCHORS: usize = 32;

impl History {
    /// Judges the answer at `b`: every exchange sent before its answer came is in.
    pub(super) fn judge(&mut self, b: usize) {
        let Some(e) = self.get(b) else { return };
        let s = e.s;
        if s.admitted() {
            self.judge_admitted(b);
            if self.every_request {
                self.judge_lowered(b);
            }
            self.chain(b);
        } else if s.status == 429 {
            self.judge_throttled(b);
        } else if s.refused() && s.remaining.is_some() {
            self.judge_refused(b);
        }
    }

    /// A refusal's Remaining, no higher than the history leaves (the admission's rule, the
    /// refusal itself not counted: that is the target's choice); and, alone in flight right
    /// after an answer naming the same Reset, whether it lowered Remaining.
    fn judge_refused(&mut self, b: usize) {
        let Some((a, left)) = self.anchor(b, false) else {
            return;
        };
        let (Some(ea), Some(eb)) = (self.get(a), self.get(b)) else {
            return;
        };
        let (sa, sb) = (ea.s, eb.s);
        let claimed = sb.remaining.unwrap_or(0);
        let alone = a + 1 == b
            && eb.quiet_before
            && self.get(b + 1).is_none_or(|n| n.s.sent >= sb.recv)
            && sa.reset.is_some()
            && sa.reset == sb.reset
            && sa.status != 429;
        if alone {
            self.out.quiet_refusals += 1;
            self.out.lowered_by_refusals += u64::from(claimed < left);
        }
        // Admissions certainly decided after `a` and before `b`.
        let mut before_b = 0u64;
        for i in a + 1..b {
            let Some(e) = self.get(i) else { break };
            if e.s.sent >= sa.recv && e.s.admitted() && e.s.recv <= sb.sent {
                before_b += 1;
            }
        }
        let allowed = left as f64 + self.refill(&sa, &sb) + 1.0;
        self.out.judged += 1;
        if before_b.saturating_add(claimed) as f64 > allowed {
            let gap = sb.recv - sa.sent;
            self.fault(
                Fault::Remaining,
                b,
                format!("X-RateLimit-Remaining at most {:.0} on a refusal ({}): {left} left {gap:.2} s earlier, {before_b} admitted since, and what any limiter of {} per {} s gives back meanwhile", allowed - before_b as f64, sb.status, self.n, self.w),
                claimed.to_string(),
            );
        }
    }

    /// The latest-answered earlier exchange that says what was left (answered before `b` was
    /// sent, so the target decided it first), if any.
    fn anchor(&self, b: usize, admitted_only: bool) -> Option<(usize, u64)> {
        let sent = self.get(b)?.s.sent;
        let mut best: Option<(usize, u64, f64)> = None;
        for i in (self.base.max(b.saturating_sub(REACH))..b).rev() {
            let Some(e) = self.get(i) else { break };
            // Earlier sends cannot have been answered later than the best so far.
            if best.is_some_and(|(_, _, r)| e.s.sent + self.max_latency < r) {
                break;
            }
            if e.s.recv > sent || (admitted_only && !e.s.admitted()) {
                continue;
            }
            if let Some(left) = e.s.left()
                && best.is_none_or(|(_, _, r)| e.s.recv > r)
            {
                best = Some((i, left, e.s.recv));
            }
        }
        best.map(|(i, left, _)| (i, left))
    }

    /// What any legal limiter may give back to the key between `a`'s request and `b`'s answer.
    fn refill(&self, a: &Said, b: &Said) -> f64 {
        let span = (b.recv - a.sent).max(0.0);
        let rate = self.n as f64 * span / self.w + 1.0;
        // The target's own Reset: answers naming one Reset lie in one window. Never the
        // client's clock against the target's Reset: the two clocks may differ by seconds.
        let no_boundary = self.w >= 2.0 && a.reset.is_some_and(|r| b.reset == Some(r));
        let fixed = if no_boundary {
            0.0
        } else {
            self.per_window(span)
        };
        rate.max(fixed).max(self.aged_out(a.sent, b.recv))
    }

    /// N for every window a span of `span` seconds touches: what a fixed window gives back
    /// at its boundaries, and what a sliding log may (it admits at most N in any window).
    fn per_window(&self, span: f64) -> f64 {
        self.n as f64 * (span / self.w).ceil()
    }

    /// A sliding log's refill between `from` and `to`: the key's requests one window earlier,
    /// refused ones too (a log may keep them), counted generously, and what it may have used
    /// before its history starts.
    fn aged_out(&self, from: f64, to: f64) -> f64 {
        let lo = from - self.w - self.max_latency;
        let hi = to - self.w;
        if lo <= self.dropped_to {
            return self.n as f64;
        }
        let before = self
            .start
            .filter(|(start, _)| lo < *start)
            .map_or(0, |(_, prior)| prior);
        let first = self.entries.partition_point(|e| e.s.sent < lo);
        let last = self.entries.partition_point(|e| e.s.sent <= hi);
        (last.saturating_sub(first) as u64).saturating_add(before) as f64
    }

    /// After the latest answer saying r were left, no more admitted than r and the refill,
    /// and Remaining no higher than r less those admissions plus the refill.
    fn judge_admitted(&mut self, b: usize) {
        let Some((a, left)) = self.anchor(b, false) else {
            return;
        };
        let (Some(ea), Some(eb)) = (self.get(a), self.get(b)) else {
            return;
        };
        let (sa, sb) = (ea.s, eb.s);
        if b - a > REACH {
            return;
        }
        // Admissions certainly decided after `a` and before `b`'s answer, `b` included, and
        // of those the ones certainly decided before `b` (answered before it was sent): only
        // these are in `b`'s Remaining, since answers overtake each other.
        let (mut count, mut before_b) = (0u64, 1u64);
        for i in (a + 1..=b).rev() {
            let Some(e) = self.get(i) else { break };
            if e.s.sent < sa.recv || !e.s.admitted() || e.s.recv > sb.recv {
                continue;
            }
            count += 1;
            if e.s.recv <= sb.sent {
                before_b += 1;
            }
        }
        let refill = self.refill(&sa, &sb);
        let allowed = left as f64 + refill + 1.0;
        self.out.judged += 1;
        let claimed = sb.remaining.unwrap_or(0);
        let gap = sb.recv - sa.sent;
        if count as f64 > allowed {
            self.fault(
                Fault::OverAdmitted,
                b,
                format!("at most {allowed:.0} admitted: the {left} an earlier answer said were left, and what any limiter of {} per {} s gives back in {gap:.2} s", self.n, self.w),
                format!("{count} admitted"),
            );
        } else if before_b.saturating_add(claimed) as f64 > allowed {
            self.fault(
                Fault::Remaining,
                b,
                format!("X-RateLimit-Remaining at most {:.0}: {left} left {gap:.2} s earlier, {before_b} admitted since, and what any limiter of {} per {} s gives back meanwhile", allowed - before_b as f64, self.n, self.w),
                claimed.to_string(),
            );
        }
    }

    /// Remaining along answers that overlapped no other and name one Reset: Remaining plus
    /// the admissions so far rises no faster than the refill allows, from the lowest such
    /// answer (`Link::g`) on. Finds a drift too slow for one step to show (a counter per
    /// route, requests not counted).
    fn chain(&mut self, b: usize) {
        let Some(eb) = self.get(b) else { return };
        let sb = eb.s;
        let quiet_after = self.get(b + 1).is_none_or(|n| n.s.sent >= sb.recv);
        let (Some(reset), Some(left)) = (sb.reset, sb.remaining) else {
            return;
        };
        if !(eb.quiet_before && quiet_after) {
            return;
        }
        let n = self.n as f64;
        let p = left.saturating_add(eb.cum) as f64;
        let g = p - n * sb.sent / self.w;
        if let Some(link) = self.chains.get(&reset).copied()
            && let Some(ea) = self.get(link.at)
        {
            let sa = ea.s;
            let pa = sa.remaining.unwrap_or(0).saturating_add(ea.cum) as f64;
            let rise = p - pa;
            let allowed = self.refill(&sa, &sb) + 1.0;
            if rise > allowed && self.out.first.as_ref().is_none_or(|f| f.at != b) {
                let since = eb.cum - ea.cum;
                self.fault(
                    Fault::Remaining,
                    b,
                    format!(
                        "X-RateLimit-Remaining at most {:.0}: {} left {:.2} s earlier (same Reset), {since} admitted since, and what any limiter of {} per {} s gives back meanwhile",
                        pa + allowed - eb.cum as f64,
                        sa.remaining.unwrap_or(0),
                        sb.recv - sa.sent,
                        self.n,
                        self.w
                    ),
                    left.to_string(),
                );
            }
            if link.g <= g {
                return;
            }
        }
        self.chains.insert(reset, Link { g, at: b });
    }

    /// A 429 although the key's latest answer said more were left than everything the key
    /// sent since could have spent.
    fn judge_throttled(&mut self, b: usize) {
        let Some((a, left)) = self.anchor(b, true) else {
            return;
        };
        let (Some(sa), Some(sb)) = (self.get(a).map(|e| e.s), self.get(b).map(|e| e.s)) else {
            return;
        };
        self.out.judged += 1;
        if left < 2 {
            return;
        }
        let between = self.between(a, b, left);
        if left >= between + 2 {
            self.fault(
                Fault::Throttled,
                b,
                format!(
                    "admitted: {left} were left {:.2} s earlier and the key sent {between} requests since",
                    sb.recv - sa.sent
                ),
                "429".into(),
            );
        }
    }

    /// Every other exchange of the key the target may have decided between `a`'s decision
    /// and `b`'s, counted until `room` is explained (the count reaches `room - 1`).
    fn between(&self, a: usize, b: usize, room: u64) -> u64 {
        let (Some(ea), Some(eb)) = (self.get(a), self.get(b)) else {
            return u64::MAX;
        };
        let (sa, sb) = (ea.s, eb.s);
        let mut between = 0u64;
        let mut i = a + 1;
        while let Some(e) = self.get(i) {
            if e.s.sent > sb.recv || between + 2 > room {
                break;
            }
            if i != b {
                between += 1;
            }
            i += 1;
        }
        let mut i = a;
        while let Some(e) = i.checked_sub(1).and_then(|j| self.get(j)) {
            i -= 1;
            if e.s.sent + self.max_latency < sa.sent || a - i > REACH || between + 2 > room {
                break;
            }
            if e.s.recv >= sa.sent {
                between += 1;
            }
        }
        between
    }

    /// An admission's Remaining lower than the key's own requests explain: after an answer
    /// saying r were left, Remaining falls by at most the key's requests the target may have
    /// decided meanwhile (any status: a target may count refusals) and `b` itself, with the
    /// rule's own tolerance mirrored: `judge_admitted` lets an answer say as many too many as
    /// any limiter gives back over the span and two, which a later answer may take back.
    /// Every legal limiter only gives back as time passes; anything lower was charged for
    /// requests that were not the key's (a counter shared with other keys, or with requests
    /// refused for their credential). Set against the latest `LOWERED_ANCHORS` earlier
    /// admissions, not only the last: such charges add up over answers, where one step hides
    /// them in the tolerance.
    fn judge_lowered(&mut self, b: usize) {
        let Some(sb) = self.get(b).map(|e| e.s) else {
            return;
        };
        let Some(claimed) = sb.remaining else { return };
        let (mut tried, lo) = (0, self.base.max(b.saturating_sub(REACH)));
        for a in (lo..b).rev() {
            let Some(sa) = self.get(a).map(|e| e.s) else {
                break;
            };
            // Decided before `b`: answered before it was sent.
            let Some(left) = sa.remaining.filter(|_| sa.admitted() && sa.recv <= sb.sent) else {
                continue;
            };
            tried += 1;
            if tried > LOWERED_ANCHORS {
                break;
            }
            let span = (sb.recv - sa.sent).max(0.0);
            let tolerance = self.n as f64 * span / self.w + 2.0;
            let Some(room) = left.checked_sub(claimed).filter(|r| *r as f64 > tolerance) else {
                continue;
            };
            let between = self.between(a, b, room);
            let excess = room.saturating_sub(between.saturating_add(1));
            if excess as f64 > tolerance {
                self.fault(
                    Fault::Lowered,
                    b,
                    format!(
                        "X-RateLimit-Remaining at least {:.0}: {left} left {span:.2} s earlier, the key sent {between} other requests since, and {tolerance:.0} for what an answer may have said too many",
                        (left as f64 - between as f64 - 1.0 - tolerance).max(0.0).ceil()
                    ),
                    claimed.to_string(),
                );
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(at: f64, status: u16, remaining: Option<u64>) -> Said {
        let t0 = 1_700_000_000.0;
        Said {
            sent: t0 + at,
            recv: t0 + at + 0.005,
            status,
            remaining,
            reset: Some(1_700_000_020),
        }
    }

    /// A limit no history reaches (a custom plan: `check` judges only its 429s) neither
    /// overflows nor finds anything but a 429 with quota left; a 429 its own requests explain
    /// passes.
    #[test]
    fn an_unbounded_limit_judges_only_429s_with_quota_left() {
        let h = [
            said(0.0, 0, None),
            said(0.1, 200, Some(5000)),
            said(0.2, 400, Some(99_999)),
            said(0.3, 200, Some(4998)),
            said(0.4, 429, Some(0)),
        ];
        let j = History::new(u64::MAX, 6.0).judge_each(&h);
        assert_eq!(j.faults, 1, "{j:?}");
        assert_eq!(j.first.map(|f| f.fault), Some(Fault::Throttled));
        let h = [
            said(0.1, 200, Some(1)),
            said(0.3, 200, Some(0)),
            said(0.4, 429, Some(0)),
        ];
        assert_eq!(History::new(u64::MAX, 6.0).judge_each(&h).faults, 0);
    }
}
