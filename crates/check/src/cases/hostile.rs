//! Strings whose characters mean something to the layers behind an API (SQL quotes and
//! comments, LIKE wildcards, shell substitution, URL delimiters, control characters,
//! right-to-left and combining marks, 4-byte characters, length): drawn now and then for
//! every free-text parameter and body field, and sent one by one by `http.chars`. The spec
//! makes them valid strings; what the layers behind make of them it does not say, so a case
//! that draws one only asks for a clean answer.

use super::*;

/// Each string with what it is. No NUL: it is refused before any layer of interest.
pub fn hostile_strings() -> Vec<(&'static str, String)> {
    vec![
        (
            "SQL quotes and a comment",
            r#"it's "quoted" \ -- x /* y"#.into(),
        ),
        ("LIKE wildcards and a percent", "100%_off;%25%zz".into()),
        ("shell substitution", "$(id)`uname`&&echo;|cat".into()),
        ("URL delimiters", "a#frag?x=1+2&y=a b/../c".into()),
        (
            "control characters",
            "tab\there\u{1}\u{1f}\u{7f}\r\nnext".into(),
        ),
        (
            "right-to-left, combining and 4-byte characters",
            "\u{202e}cba\u{202c} e\u{301} 😀 𝄞 漢字".into(),
        ),
        ("a long string", "a'%#".repeat(150)),
    ]
}

/// One of the hostile strings, with what it is.
pub(super) fn hostile() -> BoxedStrategy<(&'static str, String)> {
    prop::sample::select(hostile_strings()).boxed()
}

/// A value of `name` made of `prefix` and a hostile string: valid, and open (a clean
/// rejection holds).
pub(super) fn hostile_val(name: &str, prefix: &'static str) -> BoxedStrategy<Val> {
    let name = name.to_string();
    hostile()
        .prop_map(move |(what, s)| {
            Val::open(
                format!("{prefix}{s}"),
                format!("{name} with {what}: what the layers behind the target make of them is not shown"),
            )
        })
        .boxed()
}
