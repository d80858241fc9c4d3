//! A target's base URL, parsed once where it is given (`--target`, a profile's `base_url`, the
//! reference's own address) and read everywhere after: every request's URL is `join`ed to it.

use std::fmt;

/// Why a URL given as a target's base is not one.
#[derive(Debug, thiserror::Error)]
#[error("the target URL {0:?} is not an http(s) URL")]
pub struct BaseUrlError(pub String);

/// An http or https URL with a host, kept without a trailing slash (a path of its own,
/// `https://host/v1`, is kept: every operation's path goes after it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl {
    text: String,
    url: url::Url,
}

impl BaseUrl {
    pub fn parse(s: &str) -> Result<BaseUrl, BaseUrlError> {
        let text = s.trim().trim_end_matches('/').to_string();
        let url = url::Url::parse(&text).map_err(|_| BaseUrlError(s.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(BaseUrlError(s.to_string()));
        }
        Ok(BaseUrl { text, url })
    }

    /// As given, without the trailing slash.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed form: scheme, host, port, path.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    pub fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }

    /// An operation's path (and query) after the base: `https://host/v1` + `/tags`.
    pub fn join(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.text)
    }

    /// The host to connect to (an IPv6 address without its brackets) and the port.
    pub fn host_port(&self) -> (String, u16) {
        let host = match self.url.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(h) => h.to_string(),
            None => String::new(),
        };
        (host, self.url.port_or_known_default().unwrap_or(443))
    }
}

/// A placeholder for a target put together field by field; a real one parses its URL.
impl Default for BaseUrl {
    fn default() -> BaseUrl {
        BaseUrl::parse("https://localhost").expect("a literal https URL")
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for BaseUrl {
    type Err = BaseUrlError;
    fn from_str(s: &str) -> Result<BaseUrl, BaseUrlError> {
        BaseUrl::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_keeps_its_path_and_drops_its_trailing_slash() {
        let b = BaseUrl::parse("https://host:8443/v1/").unwrap();
        assert_eq!(b.as_str(), "https://host:8443/v1");
        assert_eq!(b.join("/tags?page=1"), "https://host:8443/v1/tags?page=1");
        assert_eq!(b.host_port(), ("host".to_string(), 8443));
        let v6 = BaseUrl::parse("http://[::1]").unwrap();
        assert_eq!(v6.host_port(), ("::1".to_string(), 80));
        assert!(!v6.is_https());
    }

    #[test]
    fn only_http_and_https_with_a_host_are_base_urls() {
        for bad in ["ftp://host", "host:80", "https://", "", "mailto:a@b"] {
            assert!(BaseUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
