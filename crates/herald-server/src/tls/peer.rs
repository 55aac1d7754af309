//! Who a client certificate names: its subject's common name (CN), or else its first DNS
//! name. With mutual TLS that name is the identity the connection acts as (an identity of
//! the same name must exist). The certificate has been verified against the client CA by
//! rustls before it gets here; this only reads the name out of it.

use rustls::pki_types::CertificateDer;

/// DER tag of a SET.
const SET: u8 = 0x31;
/// DER tag of a SEQUENCE.
const SEQUENCE: u8 = 0x30;
/// DER tag of an OBJECT IDENTIFIER.
const OID: u8 = 0x06;
/// The attribute type commonName, 2.5.4.3, as DER contents.
const COMMON_NAME: [u8; 3] = [0x55, 0x04, 0x03];
/// String types a name may be written in that are text as they stand: UTF8String,
/// PrintableString and IA5String.
const TEXT_TAGS: [u8; 3] = [0x0c, 0x13, 0x16];

/// The name `certificate` (the client's end-entity certificate) presents, if any.
pub fn certificate_name(certificate: &CertificateDer<'_>) -> Option<String> {
    let parsed = webpki::EndEntityCert::try_from(certificate).ok()?;
    common_name(parsed.subject())
        .or_else(|| parsed.valid_dns_names().next().map(str::to_string))
        .filter(|name| !name.is_empty())
}

/// The first common name of a DER `Name`'s contents (a sequence of sets of
/// attribute-type-and-value sequences).
fn common_name(mut name: &[u8]) -> Option<String> {
    while !name.is_empty() {
        let (set, rest) = element(name, SET)?;
        name = rest;
        let mut attributes = set;
        while !attributes.is_empty() {
            let (attribute, rest) = element(attributes, SEQUENCE)?;
            attributes = rest;
            let (oid, value) = element(attribute, OID)?;
            if oid != COMMON_NAME {
                continue;
            }
            let (&tag, _) = value.split_first()?;
            if !TEXT_TAGS.contains(&tag) {
                return None;
            }
            let (text, _) = element(value, tag)?;
            return std::str::from_utf8(text).ok().map(str::to_string);
        }
    }
    None
}

/// Splits one DER element with tag `tag` off `input`: its contents and what follows.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&found, rest) = input.split_first()?;
    if found != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = match first {
        0..=0x7f => (usize::from(first), rest),
        0x81..=0x83 => {
            let count = usize::from(first & 0x7f);
            let bytes = rest.get(..count)?;
            let length = bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b));
            (length, &rest[count..])
        }
        _ => return None,
    };
    let contents = rest.get(..length)?;
    Some((contents, &rest[length..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Name`'s contents with attributes (OID contents, string tag, text), one per set.
    fn name(attributes: &[(&[u8], u8, &str)]) -> Vec<u8> {
        let der = |tag: u8, contents: &[u8]| {
            let mut out = vec![tag, contents.len() as u8];
            out.extend_from_slice(contents);
            out
        };
        let mut out = Vec::new();
        for (oid, tag, text) in attributes {
            let attribute = [der(OID, oid), der(*tag, text.as_bytes())].concat();
            out.extend(der(SET, &der(SEQUENCE, &attribute)));
        }
        out
    }

    #[test]
    fn finds_the_common_name_among_other_attributes() {
        let organization: &[u8] = &[0x55, 0x04, 0x0a];
        let subject = name(&[
            (organization, 0x0c, "Observatory"),
            (&COMMON_NAME, 0x0c, "daq-01"),
        ]);
        assert_eq!(common_name(&subject).as_deref(), Some("daq-01"));
        let printable = name(&[(&COMMON_NAME, 0x13, "ops")]);
        assert_eq!(common_name(&printable).as_deref(), Some("ops"));
        assert_eq!(common_name(&name(&[(organization, 0x0c, "x")])), None);
    }

    #[test]
    fn refuses_what_is_not_a_name_without_panicking() {
        let subject = name(&[(&COMMON_NAME, 0x1e, "bmp")]);
        assert_eq!(common_name(&subject), None);
        for cut in 0..subject.len() {
            let _ = common_name(&subject[..cut]);
        }
        assert_eq!(common_name(&[SET, 0x84, 0, 0, 0, 1]), None);
        assert_eq!(common_name(&[SET, 0x82, 0xff]), None);
    }
}
