//! `qr.png-datastream`: every 200 image/png answer, whichever family sent it, is a whole PNG
//! datastream as the PNG specification defines it (`crate::qr::datastream`). Called from
//! `conformance`; each distinct body is judged once (by its hash), so a burst of the same image
//! costs one inflation.

use std::hash::BuildHasher;

use crate::check::Ctx;
use crate::check::probe::Exchange;
use crate::http::Resp;
use crate::qr::datastream::{self, Fault};
use crate::registry::check_id;

/// Verdicts remembered at most; past it the memo starts again (a run sees a few hundred
/// distinct images).
const REMEMBERED: usize = 4096;
/// Bodies at least this long are judged off the reactor.
const OFF_REACTOR: usize = 256 * 1024;

impl Ctx {
    /// Judge one 200 image/png answer's body as a PNG datastream.
    pub(in crate::check) fn png_datastream(&self, label: &str, x: &Exchange, r: &Resp) {
        let id = check_id!("qr.png-datastream");
        // A body cut at the runner's cap is not the target's whole answer: `qr.png` says so.
        if !self.enabled(id) || r.truncated {
            return;
        }
        let key = self.memo().png_keys.hash_one(&r.body);
        let known = self.memo().pngs.get(&key).cloned();
        let verdict = known.unwrap_or_else(|| {
            let v = off_reactor(&r.body);
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

    fn memo(&self) -> std::sync::MutexGuard<'_, crate::check::conformance::Memo> {
        self.schemas.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Validate, off the reactor for a large body when the runtime allows it.
fn off_reactor(body: &[u8]) -> Result<(), Fault> {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    let run = || datastream::validate(body).map(drop);
    if multi && body.len() >= OFF_REACTOR {
        tokio::task::block_in_place(run)
    } else {
        run()
    }
}
