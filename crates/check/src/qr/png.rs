//! `qr.png-datastream`: every 200 image/png answer, whichever family sent it, is a whole PNG
//! datastream as the PNG specification defines it (`linkcert_qr_read::datastream`). Called from
//! `conformance`; each distinct body is judged once (by its hash), so a burst of the same image
//! costs one inflation. Whether to inflate off the reactor is decided by what IHDR implies
//! (a small deflate bomb may claim hundreds of MiB), and a run inflates at most
//! `datastream::RUN_BUDGET` bytes in all: past it, further images are observed as not judged.

use std::hash::BuildHasher;

use crate::Ctx;
use crate::probe::Exchange;
use linkcert_http::Resp;
use linkcert_qr_read::datastream::{self, Fault};
use linkcert_registry::check_id;

/// Verdicts remembered at most; past it the memo starts again (a run sees a few hundred
/// distinct images).
const REMEMBERED: usize = 4096;
/// Bodies at least this long are walked off the reactor.
const OFF_REACTOR: usize = 256 * 1024;
/// Image data implied at least this large is inflated off the reactor.
const OFF_REACTOR_INFLATED: u64 = 1024 * 1024;

impl Ctx {
    /// Judge one 200 image/png answer's body as a PNG datastream.
    pub(crate) fn png_datastream(&self, label: &str, x: &Exchange, r: &Resp) {
        let id = check_id!("qr.png-datastream");
        // A body cut at the runner's cap is not the target's whole answer: `qr.png` says so.
        if !self.enabled(id) || r.truncated {
            return;
        }
        let key = self.memo().png_keys.hash_one(&r.body);
        let known = self.memo().pngs.get(&key).cloned();
        let verdict = known.unwrap_or_else(|| {
            let v = self.judge_png(&r.body);
            let mut memo = self.memo();
            if memo.pngs.len() >= REMEMBERED {
                memo.pngs.clear();
            }
            memo.pngs.insert(key, v.clone());
            v
        });
        match verdict {
            Ok(()) => self.rec.pass(id, label),
            Err(f) if f.beyond_cap() => {
                self.rec
                    .observe(id, label, format!("image data not inflated: {f}"), Some(x))
            }
            Err(f) => self.rec.violation(
                id,
                label,
                "a whole PNG datastream (PNG 3rd edition, ISO/IEC 15948)",
                f.to_string(),
                Some(x),
            ),
        }
    }

    /// Walks the chunks, pays for the image data from the run's budget, inflates it: off the
    /// reactor for a long body or a large image.
    fn judge_png(&self, body: &[u8]) -> Result<(), Fault> {
        let walked = off_reactor(body.len() >= OFF_REACTOR, || datastream::walk(body))?;
        self.memo().png_budget.charge(&walked)?;
        let large = walked.implied_bytes() >= OFF_REACTOR_INFLATED;
        off_reactor(large, || walked.inflate().map(drop))
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, crate::conformance::Memo> {
        self.schemas.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs `run`, off the reactor when `heavy` and the runtime allows it.
fn off_reactor<T>(heavy: bool, run: impl FnOnce() -> T) -> T {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi && heavy {
        tokio::task::block_in_place(run)
    } else {
        run()
    }
}
