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
        // The longest run of one byte, a run at a time: whole 64-byte blocks compared at once
        // (a memcmp), then the bytes left, so 16 MiB is not walked byte by byte.
        let (mut i, mut best) = (0, (0, 0));
        while i < b.len() {
            let (c, rest) = (b[i], &b[i..]);
            let block = [c; 64];
            let mut run = rest
                .chunks_exact(64)
                .take_while(|ch| *ch == block.as_slice())
                .count()
                * 64;
            run += rest[run..].iter().take_while(|&&x| x == c).count();
            if run > best.1 {
                best = (i, run);
            }
            i += run;
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
        // The longest run wins, wherever it starts and however long.
        let mut two = b"{".to_vec();
        two.resize(1 + 30_001, b'b');
        two.push(b'-');
        two.resize(two.len() + 90_003, b'c');
        two.push(b'}');
        let r = Repeated::of(&two).expect("taken apart");
        assert_eq!((r.byte, r.len, r.tail), ('c', 90_003, "}"));
        assert_eq!(r.head.len(), 30_003);
        let noise: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(Repeated::of(&noise), None);
    }
}
