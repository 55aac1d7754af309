//! `herald archive migrate`: moves an archive an earlier version kept in the SQLite store
//! (`<data_dir>/archive`) into the block store (`<data_dir>/segments`), the embedded
//! default. The server must be stopped; the data directory is found as `herald serve`
//! finds it (configuration file, `HERALD_*` variables, `--data-dir`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use herald_archive::migrate::{self, DayDone};
use herald_archive::BlockStore;
use herald_server::config::ArchiveConfig;
use serde_json::json;

/// Work on the server's archive files (with the server stopped).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Move an SQLite archive (versions before the block store) into the block store; the
    /// old files are then renamed to `archive-sqlite-migrated` in the data directory.
    Migrate(MigrateArgs),
}

#[derive(Debug, clap::Args)]
struct MigrateArgs {
    /// The server's configuration file (TOML); `HERALD_CONFIG` names one too.
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// The server's data directory (default ./herald-data).
    #[arg(long)]
    data_dir: Option<String>,
    /// Leave the SQLite files where they are (the server then keeps warning about them).
    #[arg(long)]
    keep_sqlite: bool,
    /// Print JSON (progress still goes to stderr).
    #[arg(long)]
    json: bool,
}

/// Runs `herald archive …`.
///
/// # Errors
/// A configuration that does not load, a store that cannot be opened (the server still
/// running), or a day file that cannot be read.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Migrate(args) => migrate(&args),
    }
}

fn migrate(args: &MigrateArgs) -> anyhow::Result<ExitCode> {
    let data_dir =
        super::server_config(args.config.as_deref(), &[("data_dir", &args.data_dir)])?.data_dir;
    let old = ArchiveConfig::sqlite_dir(&data_dir);
    let days = herald_archive::embedded::layout::list_slots(&old)
        .with_context(|| format!("reading {}", old.display()))?;
    if days.is_empty() {
        anyhow::bail!(
            "no SQLite archive in {} (nothing to migrate)",
            old.display()
        );
    }
    let new = ArchiveConfig::embedded_dir(&data_dir);
    let blocks = BlockStore::open(&new)
        .with_context(|| format!("opening the block store in {}", new.display()))?;
    eprintln!(
        "moving {} day files from {} into {}",
        days.len(),
        old.display(),
        new.display()
    );
    let started = Instant::now();
    let mut progress = |day: &DayDone| {
        eprintln!(
            "  [{}/{}] {}: {} records",
            day.done, day.total, day.day, day.records
        );
    };
    let moved = migrate::migrate(&old, &blocks, &mut progress)
        .with_context(|| format!("migrating {}", old.display()))?;
    drop(blocks);
    let seconds = started.elapsed().as_secs_f64();
    let renamed = if args.keep_sqlite {
        None
    } else {
        let to = data_dir.join("archive-sqlite-migrated");
        std::fs::rename(&old, &to)
            .with_context(|| format!("renaming {} to {}", old.display(), to.display()))?;
        Some(to)
    };
    if args.json {
        println!(
            "{}",
            json!({
                "days": moved.days, "records": moved.records, "unreadable": moved.unreadable,
                "seconds": seconds, "sqlite_renamed_to": renamed.as_ref().map(|p| p.display().to_string()),
            })
        );
    } else {
        println!(
            "moved {} records of {} day files in {seconds:.1} s",
            moved.records, moved.days
        );
        if moved.unreadable > 0 {
            println!(
                "{} stored records that do not decode (every query skipped them) were left behind",
                moved.unreadable
            );
        }
        match renamed {
            Some(to) => println!(
                "the SQLite files are now in {} (remove them once satisfied)",
                to.display()
            ),
            None => println!("the SQLite files stay in {}", old.display()),
        }
    }
    Ok(ExitCode::SUCCESS)
}
