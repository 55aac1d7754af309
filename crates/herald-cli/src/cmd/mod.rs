//! One module per subcommand, plus options they share.

pub mod admin;
pub mod archive;
pub mod bench;
pub mod cert;
pub mod demo;
pub mod import;
pub mod info;
pub mod log;
pub mod monitor;
pub mod publish;
pub mod query;
pub mod serve;
pub mod tail;
pub mod threshold;
pub mod token;

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use herald_client::{Client, ClientOptions};
use herald_proto::value::Field;
use herald_proto::{AckLevel, Record, Value};
use herald_server::config::ENV_CONFIG_FILE;
use herald_server::Config;

/// Loads the server's configuration as `herald serve` would, for the commands that work on
/// its files: from `file` (else `HERALD_CONFIG`), the `HERALD_*` variables, and the given
/// top-level keys where set (`("data_dir", &args.data_dir)`).
///
/// # Errors
/// A configuration that does not load, with the reason.
pub fn server_config(
    file: Option<&std::path::Path>,
    keys: &[(&str, &Option<String>)],
) -> anyhow::Result<Config> {
    let file = file
        .map(std::path::Path::to_path_buf)
        .or_else(|| std::env::var_os(ENV_CONFIG_FILE).map(std::path::PathBuf::from));
    let mut flags = toml::Table::new();
    for (key, value) in keys {
        if let Some(value) = value {
            flags.insert((*key).to_string(), toml::Value::String(value.clone()));
        }
    }
    Ok(Config::load(file.as_deref(), std::env::vars(), flags)?.config)
}

/// How long one-shot commands wait for the server to take their record.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// The `--server` option every client command takes.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Server URL: `herald://host:port[,host2:port2][?name=…&token=…]`; over TLS
    /// `herald+tls://host:port[?ca=CA.pem][&cert=CERT.pem&key=KEY.pem]`
    #[arg(long, env = "HERALD_SERVER", default_value = herald_client::url::DEFAULT_URL)]
    pub server: String,
}

impl ServerArgs {
    /// Connects as client `name`.
    pub async fn connect(&self, name: &str) -> anyhow::Result<Client> {
        let options = ClientOptions {
            name: name.to_string(),
            ..ClientOptions::default()
        };
        Client::connect_with(&self.server, options)
            .await
            .with_context(|| format!("connecting to {}", self.server))
    }

    /// Connects as `name`, sends `record`, waits for the server's acknowledgement, closes.
    pub async fn send_one(&self, name: &str, record: &Record) -> anyhow::Result<()> {
        let client = self.connect(name).await?;
        client
            .sync_send(record, AckLevel::Received, SEND_TIMEOUT)
            .await?;
        client.close(SEND_TIMEOUT).await?;
        Ok(())
    }
}

/// Runs a client command on a small runtime.
pub fn client_runtime(
    future: impl Future<Output = anyhow::Result<ExitCode>>,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting runtime")?;
    runtime.block_on(future)
}

/// Parses `--field name=value` options; values become bool, int, float or string.
pub fn parse_fields(pairs: &[String]) -> anyhow::Result<Vec<Field>> {
    let mut fields: Vec<Field> = Vec::new();
    for pair in pairs {
        let Some((name, value)) = pair.split_once('=') else {
            anyhow::bail!("bad field `{pair}` (expected name=value)");
        };
        if name.is_empty() {
            anyhow::bail!("bad field `{pair}`: the name is empty");
        }
        if fields.iter().any(|(existing, _)| existing == name) {
            anyhow::bail!("field `{name}` given twice");
        }
        fields.push((name.to_string(), Value::parse_text(value)));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_parse_typed_values_and_refuse_bad_ones() {
        let fields = parse_fields(&["axis=az".into(), "speed=2.5".into(), "n=3".into()]).unwrap();
        assert_eq!(fields[1], ("speed".to_string(), Value::Float(2.5)));
        assert_eq!(
            parse_fields(&["nope".into()]).unwrap_err().to_string(),
            "bad field `nope` (expected name=value)"
        );
        assert!(parse_fields(&["a=1".into(), "a=2".into()]).is_err());
    }
}
