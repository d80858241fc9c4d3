//! A request body too long for a command line (the runner's oversized bodies, megabytes of
//! one repeated byte between a short head and tail), taken apart so a curl line can make it
//! with a pipeline instead of carrying it.

/// Bodies longer than this are not written into a curl line.
pub const INLINE_BODY: usize = 64 * 1024;

/// A long body as a short head, one printable byte repeated, and a short tail.
#[derive(Debug, PartialEq, Eq)]
pub struct Repeated<'a> {
    pub head: &'a str,
    pub byte: char,
    pub len: usize,
    pub tail: &'a str,
}

impl Repeated<'_> {
    /// The body taken apart, if it is long and made so.
    pub fn of(b: &[u8]) -> Option<Repeated<'_>> {
        if b.len() <= INLINE_BODY {
            return None;
        }
        let (mut start, mut len, mut best) = (0, 0, (0, 0));
        for (i, c) in b.iter().enumerate() {
            if i > 0 && *c == b[i - 1] {
                len += 1;
            } else {
                (start, len) = (i, 1);
            }
            if len > best.1 {
                best = (start, len);
            }
        }
        let (start, len) = best;
        let byte = b[start];
        let (head, tail) = (&b[..start], &b[start + len..]);
        if head.len() + tail.len() > INLINE_BODY || !byte.is_ascii_alphanumeric() {
            return None;
        }
        Some(Repeated {
            head: std::str::from_utf8(head).ok()?,
            byte: byte as char,
            len,
            tail: std::str::from_utf8(tail).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_bodies_of_one_repeated_byte_are_taken_apart() {
        let mut body = br#"{"a":""#.to_vec();
        body.resize(body.len() + 100_000, b'x');
        body.extend_from_slice(br#""}"#);
        assert_eq!(
            Repeated::of(&body),
            Some(Repeated {
                head: r#"{"a":""#,
                byte: 'x',
                len: 100_000,
                tail: r#""}"#
            })
        );
        assert_eq!(Repeated::of(b"short"), None);
        let noise: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(Repeated::of(&noise), None);
    }
}
