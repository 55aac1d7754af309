//! [`Source`]: where the configuration came from — the file, the `HERALD_*` variables and
//! the command line's flags — kept so that a reload reads the file again and merges it with
//! the same variables and flags (flags still win).

use std::path::PathBuf;

use super::{Config, ConfigError, Loaded};

/// Where the configuration came from.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The configuration file, if there is one.
    pub path: Option<PathBuf>,
    /// The `HERALD_*` variables the server started with.
    pub env: Vec<(String, String)>,
    /// The settings given on the command line, keyed like the file.
    pub flags: toml::Table,
}

impl Source {
    /// Reads the configuration (again).
    ///
    /// # Errors
    /// [`ConfigError`] naming the file, key or variable and what is wrong with it.
    pub fn load(&self) -> Result<Loaded, ConfigError> {
        Config::load(self.path.as_deref(), self.env.clone(), self.flags.clone())
    }
}
