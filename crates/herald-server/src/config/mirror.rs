//! `[[mirror]]`: a one-way mirror this server feeds. The source connects out to the mirror's
//! client port (so a mirror on a public network needs no way into the control network) and
//! streams the records of some subjects and the information objects of some names, which
//! the mirror then holds read-only (docs/cluster.md, "Mirrors").

use herald_proto::glob::Glob;
use serde::Deserialize;

use super::{invalid, ConfigError};

/// One `[[mirror]]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMirror {
    /// The mirror's client port: `herald://host:port`.
    pub to: Option<String>,
    /// Globs of the subjects whose records are streamed.
    pub subjects: Option<Vec<String>>,
    /// Globs of the information objects streamed.
    pub objects: Option<Vec<String>>,
    /// The token of this server's identity on the mirror, if it has identities.
    pub token: Option<String>,
}

/// A mirror this server feeds. Its `Debug` form (what `herald serve --check-config`
/// prints) hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct MirrorConfig {
    /// `host:port` of the mirror's client port.
    pub to: String,
    /// Subjects whose records are streamed.
    pub subjects: Vec<Glob>,
    /// Information objects streamed.
    pub objects: Vec<Glob>,
    /// The token presented to the mirror (`""`: none).
    pub token: String,
}

impl std::fmt::Debug for MirrorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let token = if self.token.is_empty() {
            "none"
        } else {
            "(set, not shown)"
        };
        f.debug_struct("MirrorConfig")
            .field("to", &self.to)
            .field("subjects", &self.subjects)
            .field("objects", &self.objects)
            .field("token", &format_args!("{token}"))
            .finish()
    }
}

/// Checks the `[[mirror]]` sections.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the mirror and what is wrong.
pub(super) fn from_raw(raw: Option<Vec<RawMirror>>) -> Result<Vec<MirrorConfig>, ConfigError> {
    let mut mirrors = Vec::new();
    for (index, raw) in raw.unwrap_or_default().into_iter().enumerate() {
        let at = |what: String| invalid("mirror", format!("mirror {}: {what}", index + 1));
        let to = raw.to.unwrap_or_default();
        let address = to
            .strip_prefix("herald://")
            .unwrap_or(&to)
            .trim_end_matches('/');
        let valid = address.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
        });
        if !valid || address.contains("://") {
            return Err(at(format!(
                "`to` = `{to}` is not herald://host:port (the mirror's client port)"
            )));
        }
        let globs = |key: &str, list: Option<Vec<String>>| -> Result<Vec<Glob>, ConfigError> {
            list.unwrap_or_default()
                .iter()
                .map(|g| Glob::new(g).map_err(|err| at(format!("`{key}` names `{g}`: {err}"))))
                .collect()
        };
        let subjects = globs("subjects", raw.subjects)?;
        let objects = globs("objects", raw.objects)?;
        if subjects.is_empty() && objects.is_empty() {
            return Err(at(
                "streams nothing: give `subjects` or `objects` (globs such as \"ANTENNA.*\")"
                    .to_string(),
            ));
        }
        mirrors.push(MirrorConfig {
            to: address.to_string(),
            subjects,
            objects,
            token: raw.token.unwrap_or_default(),
        });
    }
    Ok(mirrors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_configuration_hides_the_token() {
        let mirror = MirrorConfig {
            to: "127.0.0.1:7400".into(),
            subjects: Vec::new(),
            objects: Vec::new(),
            token: "hrd_secret".into(),
        };
        let printed = format!("{mirror:#?}");
        assert!(!printed.contains("hrd_secret"), "{printed}");
        assert!(printed.contains("(set, not shown)"), "{printed}");
    }
}
