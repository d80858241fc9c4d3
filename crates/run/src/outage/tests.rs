//! The watch: streaks, outages, broken targets, and the probe's readings.

use super::*;
use linkcert_http::FailureKind;

/// A failure of `kind`, in `words`.
fn fail(kind: FailureKind, words: &str) -> Failure {
    Failure::new(kind, words)
}

#[test]
fn a_streak_after_answers_is_suspected_and_confirmed_or_cleared() {
    let w = Watch::new();
    // Never answered: failures are the target's, never an outage.
    assert!(!w.failed(&fail(
        FailureKind::Refused,
        "could not connect: Connection refused"
    )));
    assert!(!w.failed(&fail(
        FailureKind::Refused,
        "could not connect: Connection refused"
    )));
    assert_eq!(w.open_streak(), None);
    assert!(!w.answered());
    assert!(!w.failed(&fail(
        FailureKind::Reset,
        "request failed: connection reset by peer"
    )));
    assert!(w.open_streak().is_some());
    assert!(
        w.failed(&fail(FailureKind::Timeout, "timed out")),
        "a timeout is asked about at once"
    );
    w.confirmed(&Diagnosis::Answered);
    assert_eq!(w.open_streak(), None, "alive: the streak is over");
    assert!(!w.failed(&fail(
        FailureKind::Reset,
        "request failed: connection reset by peer"
    )));
    assert!(w.failed(&fail(FailureKind::Timeout, "timed out")));
    w.confirmed(&Diagnosis::Refused("Connection refused".into()));
    let (_, o) = w.outage().unwrap();
    assert_eq!(
        o.kind,
        TransportKind::Refused,
        "how it is now, not how it began"
    );
    assert_eq!(o.first_error, "request failed: connection reset by peer");
    assert_eq!(o.failures_in_a_row, 3);
    assert!(w.gone());
    assert_eq!(w.broken(), None);
    // A later plain request (one under way when the outage tripped) changes nothing of it.
    w.confirmed(&Diagnosis::Reset("Connection reset by peer".into()));
    let again = w.outage().unwrap().1;
    assert_eq!(
        again.kind,
        TransportKind::Refused,
        "the outage as first confirmed"
    );
    assert_eq!(again.detected_secs, o.detected_secs);
}

#[test]
fn an_answer_sent_before_the_streak_began_does_not_end_it() {
    let w = Watch::new();
    assert!(!w.answered());
    let before = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(!w.failed(&fail(
        FailureKind::Reset,
        "request failed: connection reset by peer"
    )));
    let streak = w.open_streak();
    assert!(streak.is_some());
    // In flight when the target went away: the streak goes on, and nothing is asked.
    assert!(!w.answered_to(before));
    assert_eq!(w.open_streak(), streak);
    // Sent after the failure and answered, perhaps on a connection opened before the target
    // went away: the target is asked on a fresh one, and the streak waits for that.
    assert!(w.answered_to(Instant::now()), "asked at once");
    assert!(w.confirming());
    assert!(!w.answered_to(Instant::now()), "asked once at a time");
    assert_eq!(w.open_streak(), streak);
    // A fresh connection answered: the target is there, the streak is over.
    w.confirmed(&Diagnosis::Answered);
    assert_eq!(w.open_streak(), None);
    assert!(w.outage().is_none());
}

/// An answer to a request sent well after the first failure came on a connection still open
/// then: the target is there, and the streak ends without asking. One asked about ends it
/// too when the plain request could not be made here (nothing more is known).
#[test]
fn a_late_answer_or_an_inconclusive_question_ends_the_streak() {
    let w = Watch::new();
    assert!(!w.answered());
    assert!(!w.failed(&fail(FailureKind::Reset, "connection reset by peer")));
    let late = Instant::now() + IN_FLIGHT + Duration::from_millis(500);
    assert!(!w.answered_to(late), "not asked");
    assert_eq!(w.open_streak(), None);
    assert!(!w.failed(&fail(FailureKind::Reset, "connection reset by peer")));
    assert!(w.answered(), "asked");
    let emfile = fail(FailureKind::LocalLimit, "Too many open files (os error 24)");
    w.confirmed(&Diagnosis::Other(emfile));
    assert_eq!(w.open_streak(), None, "the answer stands");
    assert!(!w.found_here());
    assert!(w.outage().is_none() && w.broken().is_none());
}

/// The race a pool makes: a connection the target has not cut yet brings an answer after the
/// first reset of an outage. The fresh connection is reset too: the streak was the outage, and
/// its failure is not the target's.
#[test]
fn an_answer_on_a_connection_not_yet_cut_does_not_make_an_outage_a_failure() {
    let w = Watch::new();
    assert!(!w.answered());
    assert!(!w.failed(&fail(
        FailureKind::Reset,
        "request failed: connection reset by peer"
    )));
    let streak = w.open_streak();
    assert!(w.answered(), "asked on a fresh connection");
    w.confirmed(&Diagnosis::Reset("Connection reset by peer".into()));
    let (n, o) = w.outage().expect("an outage");
    assert_eq!(Some(n), streak, "the streak of the held failure");
    assert_eq!(o.kind, TransportKind::Reset);
    assert_eq!(o.first_error, "request failed: connection reset by peer");
}

#[test]
fn bad_answers_in_a_row_make_a_broken_target_and_a_good_one_resets_them() {
    let w = Watch::new();
    for _ in 1..BAD_ANSWERS_IN_A_ROW {
        w.bad_answer("the body was still arriving after 4 MB");
    }
    assert!(!w.answered());
    for _ in 1..BAD_ANSWERS_IN_A_ROW {
        w.bad_answer("the body was still arriving after 4 MB");
    }
    assert!(!w.gone(), "a good answer between");
    w.bad_answer("the body was still arriving after 4 MB");
    assert!(w.gone() && w.outage().is_none());
    assert!(w.broken().unwrap().contains("still arriving after 4 MB"));
}

#[test]
fn a_target_that_trickles_or_never_answered_is_broken_not_gone() {
    let w = Watch::new();
    assert!(
        w.failed(&fail(FailureKind::Timeout, "timed out")),
        "never answered, but a timeout cost time"
    );
    assert!(w.confirming());
    w.confirmed(&Diagnosis::Silent { secs: 5.0 });
    assert!(w.gone() && w.outage().is_none());
    assert!(w.broken().unwrap().contains("never answered"));
    let w = Watch::new();
    assert!(!w.answered());
    assert!(w.failed(&fail(
        FailureKind::Stalled,
        "the body trickled: 30 bytes in 30 s"
    )));
    w.confirmed(&Diagnosis::Trickled {
        bytes: 5,
        secs: 5.0,
    });
    assert!(w.outage().is_none());
    assert!(
        w.gone(),
        "a trickling target is broken: nothing more is sent"
    );
    assert!(w.broken().unwrap().contains("trickled"), "{:?}", w.broken());
    let words = w.found().unwrap();
    assert!(
        words.contains("trickled: 5 bytes in 5 s (about 1 byte a second)"),
        "{words}"
    );
}

fn reading(bytes: &[u8], closed: bool, secs: f64, silent: f64) -> RawReading {
    RawReading {
        bytes: bytes.to_vec(),
        received: bytes.len() as u64,
        closed,
        secs,
        silent_secs: silent,
        complete: false,
    }
}

#[test]
fn the_raw_bytes_say_what_the_target_did() {
    let b = PROBE_BUDGET;
    let of = |r| Diagnosis::of(Ok(r), b);
    assert_eq!(
        of(reading(b"HTTP/1.1 404 Not Found\r\n\r\n", true, 0.1, 0.0)),
        Diagnosis::Answered
    );
    assert_eq!(
        of(reading(b"HTTP/", false, 5.0, 0.4)),
        Diagnosis::Trickled {
            bytes: 5,
            secs: 5.0
        }
    );
    let short = of(reading(
        b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n0123456789",
        false,
        5.0,
        4.9,
    ));
    assert!(
        short
            .to_string()
            .starts_with("got a Content-Length of 5000 with 10 bytes sent"),
        "{short}"
    );
    // A large page on a slow link, still coming at the end of the budget: an answer.
    let mut page = b"HTTP/1.1 200 OK\r\ncontent-length: 300000\r\n\r\n".to_vec();
    page.resize(40_000, b'x');
    assert_eq!(of(reading(&page, false, 5.0, 0.1)), Diagnosis::Answered);
    let garbage = of(reading(b"\x00\xffSPDY/9", true, 0.0, 0.0));
    assert!(garbage.to_string().contains("not HTTP"), "{garbage}");
    assert_eq!(
        of(reading(b"", false, 5.0, 5.0)),
        Diagnosis::Silent { secs: 5.0 }
    );
}

#[test]
fn an_outage_names_how_its_failures_happened() {
    for (f, k) in [
        (FailureKind::Refused, TransportKind::Refused),
        (FailureKind::Reset, TransportKind::Reset),
        (FailureKind::WriteFailed, TransportKind::Reset),
        (FailureKind::Timeout, TransportKind::Timeout),
        (FailureKind::Stalled, TransportKind::Other),
        (
            FailureKind::BadAnswer(linkcert_http::BadAnswer::NotHttp),
            TransportKind::Other,
        ),
    ] {
        assert_eq!(TransportKind::of(f), k, "{f:?}");
    }
}

/// A plain request this machine could not make (out of files) says the streak is this
/// machine's, and says so only for that streak.
#[test]
fn a_streak_whose_plain_request_could_not_be_made_here_is_this_machines() {
    let w = Watch::new();
    assert!(!w.answered());
    assert!(w.failed(&fail(FailureKind::Timeout, "timed out")));
    let emfile = fail(
        FailureKind::LocalLimit,
        "could not connect: Too many open files (os error 24)",
    );
    w.confirmed(&Diagnosis::Other(emfile));
    assert!(w.found_here());
    assert!(w.answered(), "asked again");
    w.confirmed(&Diagnosis::Answered);
    assert!(!w.found_here(), "the streak is over");
    assert!(w.failed(&fail(FailureKind::Timeout, "timed out")));
    w.confirmed(&Diagnosis::Refused("Connection refused".into()));
    assert!(!w.found_here(), "a refusal is the target's");
}
