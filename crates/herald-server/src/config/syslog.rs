//! `[syslog]`: syslog listeners (RFC 5424 and RFC 3164, over UDP and over TCP with octet
//! counting or newline framing, RFC 6587). Off unless the section names a listener.

use std::net::SocketAddr;

use serde::Deserialize;

use super::{bytes, invalid, resolve, ConfigError, Quantity};

/// Every key of the section, as written.
pub const SYSLOG_KEYS: [&str; 4] = ["udp", "tcp", "subject", "max_message_bytes"];
/// The subject of a syslog record unless the section says otherwise.
pub const DEFAULT_SUBJECT: &str = "syslog.{host}.{app}";
/// Longest message taken (a longer one is bad input) unless the section says otherwise.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The placeholders a subject template may use.
pub const PLACEHOLDERS: [&str; 6] = ["host", "app", "facility", "severity", "procid", "msgid"];

/// The section as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSyslogConfig {
    /// UDP address to listen on, `host:port`.
    pub udp: Option<String>,
    /// TCP address to listen on, `host:port`.
    pub tcp: Option<String>,
    /// The records' subject, with `{host}`, `{app}`, `{facility}`, `{severity}`, `{procid}`
    /// and `{msgid}` filled in from each message.
    pub subject: Option<String>,
    /// Longest message taken: bytes, or a size with a unit (`64KiB`).
    pub max_message_bytes: Option<Quantity>,
}

/// The syslog listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyslogConfig {
    /// UDP address, if any.
    pub udp: Option<SocketAddr>,
    /// TCP address, if any.
    pub tcp: Option<SocketAddr>,
    /// The subject template.
    pub subject: String,
    /// Longest message taken.
    pub max_message_bytes: usize,
}

/// Checks the section: `None` when there is none or it names no listener.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the key and what is wrong.
pub(super) fn from_raw(raw: Option<RawSyslogConfig>) -> Result<Option<SyslogConfig>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let udp = raw
        .udp
        .map(|a| resolve("syslog.udp", &a, "0.0.0.0:514"))
        .transpose()?;
    let tcp = raw
        .tcp
        .map(|a| resolve("syslog.tcp", &a, "0.0.0.0:514"))
        .transpose()?;
    let subject = raw.subject.unwrap_or_else(|| DEFAULT_SUBJECT.to_string());
    check_template(&subject).map_err(|why| invalid("syslog.subject", why))?;
    let max = bytes(
        "syslog.max_message_bytes",
        raw.max_message_bytes,
        DEFAULT_MAX_MESSAGE_BYTES as u64,
    )?;
    if !(480..=16 << 20).contains(&max) {
        return Err(invalid(
            "syslog.max_message_bytes",
            format!("{max} is outside 480..=16MiB (RFC 5424 asks receivers to take at least 480)"),
        ));
    }
    if udp.is_none() && tcp.is_none() {
        return Ok(None);
    }
    Ok(Some(SyslogConfig {
        udp,
        tcp,
        subject,
        max_message_bytes: max as usize,
    }))
}

/// Checks that every `{…}` in `template` is a known placeholder and the text around them
/// makes a subject.
fn check_template(template: &str) -> Result<(), String> {
    let mut rest = template;
    let mut literal = String::new();
    while let Some(open) = rest.find('{') {
        literal.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("`{template}` has a `{{` without its `}}`"))?;
        let name = &rest[open + 1..open + close];
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "`{template}` names `{{{name}}}`; the placeholders are {}",
                PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
            ));
        }
        literal.push('x');
        rest = &rest[open + close + 1..];
    }
    literal.push_str(rest);
    herald_proto::record::check_subject(&literal).map_err(|why| format!("`{template}`: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(udp: Option<&str>, subject: Option<&str>) -> RawSyslogConfig {
        RawSyslogConfig {
            udp: udp.map(String::from),
            subject: subject.map(String::from),
            ..RawSyslogConfig::default()
        }
    }

    #[test]
    fn a_section_without_listeners_is_off() {
        assert_eq!(from_raw(None).unwrap(), None);
        assert_eq!(from_raw(Some(raw(None, None))).unwrap(), None);
        let on = from_raw(Some(raw(Some("127.0.0.1:5514"), None)))
            .unwrap()
            .unwrap();
        assert_eq!(on.subject, DEFAULT_SUBJECT);
        assert_eq!(on.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
    }

    #[test]
    fn the_longest_message_is_a_size_with_or_without_a_unit() {
        let with = |size: Quantity| RawSyslogConfig {
            max_message_bytes: Some(size),
            ..raw(Some("127.0.0.1:0"), None)
        };
        let taken = |size| {
            from_raw(Some(with(size)))
                .unwrap()
                .unwrap()
                .max_message_bytes
        };
        assert_eq!(taken(Quantity::Text("16MiB".into())), 16 << 20);
        assert_eq!(taken(Quantity::Number(480)), 480);
        let err = from_raw(Some(with(Quantity::Text("17MiB".into()))))
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside 480..=16MiB"), "{err}");
    }

    #[test]
    fn templates_name_known_placeholders() {
        let err = from_raw(Some(raw(Some("127.0.0.1:0"), Some("log.{hostname}"))))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("{hostname}") && err.contains("{host}"),
            "{err}"
        );
        let err = from_raw(Some(raw(Some("127.0.0.1:0"), Some("log.{host"))))
            .unwrap_err()
            .to_string();
        assert!(err.contains("without its"), "{err}");
        let err = from_raw(Some(raw(Some("127.0.0.1:0"), Some("log.*.{host}"))))
            .unwrap_err()
            .to_string();
        assert!(err.contains("wildcards"), "{err}");
    }
}
