//! An answer as read: status, headers and a body read up to a cap.

use std::time::Duration;

use serde_json::Value;

#[derive(Clone, Debug)]
pub struct Resp {
    pub status: u16,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub truncated: bool,
    pub elapsed: Duration,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// A header as a non-negative integer, if it is one.
    pub fn header_u64(&self, name: &str) -> Option<u64> {
        self.header(name)?.trim().parse().ok()
    }
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
    /// The media type, lower-cased, without parameters.
    pub fn media_type(&self) -> Option<String> {
        let ct = self.header("content-type")?;
        Some(
            ct.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase(),
        )
    }
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// A body read up to a cap.
#[derive(Clone, Debug, Default)]
pub struct Capped {
    pub bytes: Vec<u8>,
    /// There was more than the cap; the rest was not read.
    pub truncated: bool,
}

impl Capped {
    /// Takes the next chunk of a body read up to `cap` bytes; false once the cap is reached
    /// (the rest is left unread). One rule for every client of ours.
    pub fn push(&mut self, chunk: &[u8], cap: usize) -> bool {
        let room = cap.saturating_sub(self.bytes.len());
        if chunk.len() > room {
            self.bytes.extend_from_slice(&chunk[..room]);
            self.truncated = true;
            return false;
        }
        self.bytes.extend_from_slice(chunk);
        true
    }
}

/// Reads `r`'s body up to `cap` bytes and leaves the rest unread.
pub async fn read_capped(r: &mut reqwest::Response, cap: usize) -> Result<Capped, reqwest::Error> {
    let mut body = Capped::default();
    while let Some(chunk) = r.chunk().await? {
        if !body.push(&chunk, cap) {
            break;
        }
    }
    Ok(body)
}
