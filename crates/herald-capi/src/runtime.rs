//! The library's I/O threads: one tokio runtime per process, made on first connect, that
//! runs every client's connection tasks and loggers. The program's threads wait on it with
//! [`block`]; they never run its tasks.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Runtime};

use crate::status::Failure;

/// I/O threads: two are enough for a client's reader, writer and logger, and keep a C
/// program's thread count small.
const IO_THREADS: usize = 2;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Returns the runtime, making it on first use.
pub fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        Builder::new_multi_thread()
            .worker_threads(IO_THREADS)
            .thread_name("herald-io")
            .enable_all()
            .build()
            .expect("the Herald I/O threads could not be started")
    })
}

/// Runs `future` to completion on the calling thread, which waits.
///
/// # Errors
/// On one of the library's own threads (a callback that waits is on its own thread, never
/// on these), where waiting would stop the work it waits for.
pub fn block<F: Future>(future: F) -> Result<F::Output, Failure> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Failure::invalid(
            "a Herald call that waits was made on one of Herald's I/O threads",
        ));
    }
    Ok(runtime().block_on(future))
}
