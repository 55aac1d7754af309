//! Status codes, the thread's last error and the guard every C function runs in.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ::herald_client::{ClientError, ConnectError};

/// Success.
pub const HERALD_OK: c_int = 0;
/// A NULL pointer, a string that is not UTF-8, a subject, glob or priority that does not
/// parse, a closed handle: the message names the argument and what is wrong with it.
pub const HERALD_E_INVALID: c_int = -1;
/// No server in the URL could be reached, or one refused the connection.
pub const HERALD_E_CONNECT: c_int = -2;
/// The connection is closed (by `herald_close`, or after failover gave up).
pub const HERALD_E_CLOSED: c_int = -3;
/// No answer (or no event, no reply) within the time allowed.
pub const HERALD_E_TIMEOUT: c_int = -4;
/// The send buffer is full (only from the calls that do not wait).
pub const HERALD_E_FULL: c_int = -5;
/// The server refused the request; the message carries its code (`bad_info`, `denied` …).
pub const HERALD_E_SERVER: c_int = -6;
/// No such object (information objects).
pub const HERALD_E_NOT_FOUND: c_int = -7;
/// The record is larger than the server accepts.
pub const HERALD_E_TOO_LARGE: c_int = -8;
/// A bug in the library (a panic caught at the boundary); please report the message.
pub const HERALD_E_INTERNAL: c_int = -99;

/// A failed call: its status code and message.
#[derive(Debug)]
pub struct Failure {
    /// One of the `HERALD_E_*` codes.
    pub code: c_int,
    /// What went wrong, for people.
    pub message: String,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: c_int, message: impl Display) -> Failure {
        Failure {
            code,
            message: message.to_string(),
        }
    }

    /// An invalid argument.
    pub fn invalid(message: impl Display) -> Failure {
        Failure::new(HERALD_E_INVALID, message)
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Failure {
        let code = match &error {
            // The server ended the connection (shutting down, heartbeat, …): the client is
            // closed, as after a failover that gave up; the message names the server's why.
            ClientError::Server { code, .. } if code.closes_connection() => HERALD_E_CLOSED,
            ClientError::Server { .. } => HERALD_E_SERVER,
            ClientError::Timeout(_) | ClientError::NoReply { .. } => HERALD_E_TIMEOUT,
            ClientError::InvalidRecord(_) => HERALD_E_INVALID,
            ClientError::TooLarge { .. } | ClientError::RequestTooLarge { .. } => {
                HERALD_E_TOO_LARGE
            }
            ClientError::BufferFull(_) => HERALD_E_FULL,
            _ => HERALD_E_CLOSED,
        };
        Failure::new(code, error)
    }
}

impl From<ConnectError> for Failure {
    fn from(error: ConnectError) -> Failure {
        let code = match &error {
            ConnectError::Url(_) | ConnectError::Tls(_) => HERALD_E_INVALID,
            _ => HERALD_E_CONNECT,
        };
        Failure::new(code, error)
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `failure`'s message as this thread's last error and returns its code.
pub fn report(failure: Failure) -> c_int {
    let message = CString::new(failure.message.replace('\0', "\\0")).unwrap_or_default();
    // During thread teardown the slot may be gone: the code still tells what happened.
    let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = message);
    failure.code
}

/// Runs the body of a C function: its `Ok` is `HERALD_OK`, its failure is reported, and a
/// panic becomes `HERALD_E_INTERNAL` instead of unwinding into C (which would abort).
pub fn guard(body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => HERALD_OK,
        Ok(Err(failure)) => report(failure),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            report(Failure::new(
                HERALD_E_INTERNAL,
                format!("internal error in the Herald library: {what}"),
            ))
        }
    }
}

/// Returns the message of the last call on this thread that failed (an empty string if
/// none has). The pointer stays valid until the next failing call on this thread; copy the
/// text to keep it. Calls that succeed leave it as it was.
#[no_mangle]
pub extern "C" fn herald_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|last| last.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// Returns the name of a status code: `"HERALD_E_TIMEOUT"` for -4, `"unknown status"` for a
/// number that is none. The string is static.
#[no_mangle]
pub extern "C" fn herald_status_name(status: c_int) -> *const c_char {
    let name = match status {
        HERALD_OK => c"HERALD_OK",
        HERALD_E_INVALID => c"HERALD_E_INVALID",
        HERALD_E_CONNECT => c"HERALD_E_CONNECT",
        HERALD_E_CLOSED => c"HERALD_E_CLOSED",
        HERALD_E_TIMEOUT => c"HERALD_E_TIMEOUT",
        HERALD_E_FULL => c"HERALD_E_FULL",
        HERALD_E_SERVER => c"HERALD_E_SERVER",
        HERALD_E_NOT_FOUND => c"HERALD_E_NOT_FOUND",
        HERALD_E_TOO_LARGE => c"HERALD_E_TOO_LARGE",
        HERALD_E_INTERNAL => c"HERALD_E_INTERNAL",
        _ => c"unknown status",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::ErrorCode;

    fn code_of(code: ErrorCode) -> c_int {
        let message = "server shutting down".to_string();
        Failure::from(ClientError::Server { code, message }).code
    }

    #[test]
    fn a_connection_the_server_closed_is_closed_and_a_refused_request_is_the_server_s() {
        // What every call returns once the server ended the connection: closed, as after a
        // failover that gave up, the message still naming the server's code.
        for code in [
            ErrorCode::ShuttingDown,
            ErrorCode::HeartbeatTimeout,
            ErrorCode::SlowConsumer,
            ErrorCode::Unauthorized,
        ] {
            assert_eq!(code_of(code), HERALD_E_CLOSED, "{code:?}");
        }
        for code in [
            ErrorCode::Denied,
            ErrorCode::BadInfo,
            ErrorCode::Archive,
            ErrorCode::Limit,
        ] {
            assert_eq!(code_of(code), HERALD_E_SERVER, "{code:?}");
        }
    }
}
