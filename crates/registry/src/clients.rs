//! The real clients `check` sends as (`http.clients`): one file each under `clients/` at the
//! root, with the headers the client sends exactly, read from its own source and captured on
//! the wire (`clients/README.md` says how). A new client is its file and one line in
//! `BUILTIN`. `linkcert catalogue` lists them.

use std::sync::OnceLock;

use serde::Deserialize;

/// Each client by name, its TOML embedded from `clients/NAME.toml`.
macro_rules! builtin {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../clients/", $name, ".toml")))),*]
    };
}

/// The clients every run sends as, in this order.
pub const BUILTIN: &[(&str, &str)] = builtin![
    "curl",
    "chromium-navigate",
    "chromium-image",
    "undici",
    "axios",
    "python-requests",
    "httpx",
    "go-net-http",
    "dub-python",
    "dub-typescript",
];

/// One real client: the headers it sends, as captured from it and read in its source.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    /// The client and the version captured: what reports list.
    pub client: String,
    /// Where the headers come from: the client's source files, the capture.
    pub source: String,
    /// The methods it sends this way (a browser navigates and loads images with GET only).
    pub methods: Vec<String>,
    /// Every request's, in the order sent.
    pub headers: Vec<(String, String)>,
    /// Sent instead of the same-named ones to an operation that answers an image (the SDKs'
    /// `Accept: image/png`).
    #[serde(default)]
    pub image: Vec<(String, String)>,
    /// Added to a request with a JSON body.
    #[serde(default)]
    pub body: Vec<(String, String)>,
    /// From this many bytes of body, the client adds `large` on its own.
    #[serde(default)]
    pub large_from: Option<usize>,
    #[serde(default)]
    pub large: Vec<(String, String)>,
}

/// Why a client's file does not read.
#[derive(Debug, thiserror::Error)]
#[error("clients/{name}.toml: {reason}")]
pub struct ProfileError {
    name: String,
    reason: String,
}

impl Profile {
    pub fn from_toml(text: &str, name: &str) -> Result<Profile, ProfileError> {
        let err = |reason: String| ProfileError {
            name: name.to_string(),
            reason,
        };
        let p: Profile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if p.name != name {
            return Err(err(format!("names itself {:?}", p.name)));
        }
        let runners = ["host", "authorization", "content-length"];
        if let Some((k, _)) = p
            .headers
            .iter()
            .chain(&p.image)
            .chain(&p.body)
            .chain(&p.large)
            .find(|(k, _)| runners.contains(&k.to_ascii_lowercase().as_str()))
        {
            return Err(err(format!("sets {k}, which the runner sends")));
        }
        if p.large_from.is_some() == p.large.is_empty() {
            return Err(err("large_from and large go together".into()));
        }
        Ok(p)
    }

    /// Whether it sends `method` requests.
    pub fn sends(&self, method: &str) -> bool {
        self.methods.iter().any(|m| m.eq_ignore_ascii_case(method))
    }
}

/// Every built-in client, read once. A file that does not read is a build of ours that is
/// broken (a unit test reads them all), so it is left out rather than stopping a run.
pub fn profiles() -> &'static [Profile] {
    static ALL: OnceLock<Vec<Profile>> = OnceLock::new();
    ALL.get_or_init(|| {
        BUILTIN
            .iter()
            .filter_map(|(name, text)| Profile::from_toml(text, name).ok())
            .collect()
    })
}

/// The clients a run that ran `http.clients` tried, as reports list them.
pub fn tried() -> Vec<String> {
    profiles().iter().map(|p| p.client.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_client_reads_and_names_its_source() {
        for (name, text) in BUILTIN {
            let p = Profile::from_toml(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!p.headers.is_empty(), "{name}: no headers");
            assert!(p.source.len() > 20, "{name}: a source that says where");
            assert!(!p.methods.is_empty(), "{name}: no methods");
        }
        assert_eq!(profiles().len(), BUILTIN.len());
    }

    #[test]
    fn a_client_may_not_set_what_the_runner_sends() {
        for bad in ["host", "Authorization", "content-length"] {
            let t = format!(
                "name = \"t\"\nclient = \"t\"\nsource = \"s\"\nmethods = [\"GET\"]\nheaders = [[\"{bad}\", \"x\"]]\n"
            );
            assert!(Profile::from_toml(&t, "t").is_err(), "{bad}");
        }
    }
}
