//! Development certificates (`herald cert dev DIR`, and the TLS tests): a certificate
//! authority and certificates signed by it — the server's pair (valid for localhost,
//! 127.0.0.1, ::1, this host's name and any other name asked for) and one pair per client
//! identity (its common name is the identity it acts as). Files already in the directory
//! are kept, never overwritten: asking again for another client signs it with the same CA.
//! A facility's own CA should sign the certificates of a production server.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// The common name of the CA made here, followed by a tag of its key: two development
/// CAs never share a name, so a client that trusts the wrong one is told "unknown issuer".
const CA_NAME: &str = "Herald development CA";

/// What [`make`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Made {
    /// Files written.
    pub made: Vec<PathBuf>,
    /// Certificates that were there already, kept.
    pub kept: Vec<PathBuf>,
    /// The names the server certificate is valid for.
    pub server_names: Vec<String>,
}

/// Why the certificates could not be made; the message names the file or the name.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DevError(String);

impl From<rcgen::Error> for DevError {
    fn from(err: rcgen::Error) -> Self {
        DevError(err.to_string())
    }
}

/// The files of a directory [`make`] filled.
pub mod files {
    /// The CA's certificate: clients trust it (`?ca=`), the server checks client
    /// certificates with it (`tls_client_ca`).
    pub const CA: &str = "ca.pem";
    /// The CA's private key.
    pub const CA_KEY: &str = "ca-key.pem";
    /// The server's certificate (`tls_cert`).
    pub const SERVER: &str = "server.pem";
    /// The server's private key (`tls_key`).
    pub const SERVER_KEY: &str = "server-key.pem";

    /// The certificate of client `name` (`?cert=`).
    pub fn client(name: &str) -> String {
        format!("client-{name}.pem")
    }

    /// The private key of client `name` (`?key=`).
    pub fn client_key(name: &str) -> String {
        format!("client-{name}-key.pem")
    }
}

/// Makes, in `dir`, what is not there yet: the CA, the server's pair (valid for the local
/// names and `names`) and a pair for each of `clients`.
///
/// # Errors
/// [`DevError`]: the directory or a file cannot be written, a name is not a host name or
/// IP address, or `dir` holds only half of the CA.
pub fn make(dir: &Path, names: &[String], clients: &[String]) -> Result<Made, DevError> {
    std::fs::create_dir_all(dir)
        .map_err(|err| DevError(format!("cannot make {}: {err}", dir.display())))?;
    let mut done = Made::default();
    let (ca_path, ca_key_path) = (dir.join(files::CA), dir.join(files::CA_KEY));
    let (ca, ca_key) = match (ca_path.exists(), ca_key_path.exists()) {
        (true, true) => {
            done.kept.push(ca_path.clone());
            load_ca(&ca_key_path)?
        }
        (false, false) => {
            let key = KeyPair::generate()?;
            let ca = ca_params(&key).self_signed(&key)?;
            write(&ca_key_path, &key.serialize_pem(), &mut done.made)?;
            write(&ca_path, &ca.pem(), &mut done.made)?;
            (ca, key)
        }
        _ => {
            return Err(DevError(format!(
                "{} has only one of {} and {}: remove it, or give another directory",
                dir.display(),
                files::CA,
                files::CA_KEY
            )))
        }
    };
    let server = (dir.join(files::SERVER), dir.join(files::SERVER_KEY));
    let mut all = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    all.extend(host_name());
    for name in names {
        if !all.contains(name) {
            all.push(name.clone());
        }
    }
    if server.0.exists() {
        done.kept.push(server.0.clone());
    } else {
        let mut params = CertificateParams::new(all.clone())
            .map_err(|err| DevError(format!("a server name among {all:?}: {err}")))?;
        params.distinguished_name = common_name(&all[0]);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        issue(params, &ca, &ca_key, &server, &mut done.made)?;
    }
    for client in clients {
        let pair = (
            dir.join(files::client(client)),
            dir.join(files::client_key(client)),
        );
        if pair.0.exists() {
            done.kept.push(pair.0);
            continue;
        }
        let mut params = CertificateParams::default();
        params.distinguished_name = common_name(client);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        issue(params, &ca, &ca_key, &pair, &mut done.made)?;
    }
    done.server_names = all;
    Ok(done)
}

fn ca_params(key: &KeyPair) -> CertificateParams {
    let mut params = CertificateParams::default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &key.public_key_der());
    let tag: String = digest.as_ref()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    params.distinguished_name = common_name(&format!("{CA_NAME} {tag}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

/// The CA of an earlier run, from its key: a certificate with the same name and key signs
/// certificates that chain to the `ca.pem` written then.
fn load_ca(key_path: &Path) -> Result<(rcgen::Certificate, KeyPair), DevError> {
    let pem = std::fs::read_to_string(key_path)
        .map_err(|err| DevError(format!("cannot read {}: {err}", key_path.display())))?;
    let key = KeyPair::from_pem(&pem).map_err(|err| {
        DevError(format!(
            "{} is not a private key in PEM: {err}",
            key_path.display()
        ))
    })?;
    Ok((ca_params(&key).self_signed(&key)?, key))
}

fn common_name(name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, name);
    dn
}

fn issue(
    mut params: CertificateParams,
    ca: &rcgen::Certificate,
    ca_key: &KeyPair,
    (cert_path, key_path): &(PathBuf, PathBuf),
    made: &mut Vec<PathBuf>,
) -> Result<(), DevError> {
    // An authority key identifier: strict verifiers (OpenSSL 3 as Python 3.13 sets it up)
    // refuse a certificate without one.
    params.use_authority_key_identifier_extension = true;
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, ca, ca_key)?;
    write(key_path, &key.serialize_pem(), made)?;
    write(cert_path, &cert.pem(), made)
}

/// Writes a new file (readable by its owner only, as keys must be); never replaces one.
fn write(path: &Path, text: &str, made: &mut Vec<PathBuf>) -> Result<(), DevError> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let cannot = |err: std::io::Error| DevError(format!("cannot write {}: {err}", path.display()));
    let mut file = options.open(path).map_err(cannot)?;
    file.write_all(text.as_bytes()).map_err(cannot)?;
    made.push(path.to_path_buf());
    Ok(())
}

/// This machine's host name, if it has one.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty() && name != "localhost").then(|| name.to_string())
}
