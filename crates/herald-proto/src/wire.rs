//! MessagePack shapes the frame bodies share: a string or `nil`, an array of a known
//! length. Below every body module (`archive`, `info`, `route`, `frame_body`), which use
//! them; it uses only `msgpack` and `error`.

use crate::error::DecodeError;
use crate::msgpack::{self, Reader};

/// Writes a string, or `nil` for none.
pub fn write_opt_str(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => msgpack::write_str(out, text),
        None => msgpack::write_nil(out),
    }
}

/// Reads what [`write_opt_str`] wrote.
pub fn read_opt_str(reader: &mut Reader<'_>) -> Result<Option<String>, DecodeError> {
    if reader.read_nil()? {
        return Ok(None);
    }
    Ok(Some(reader.read_str()?.to_string()))
}

/// Reads an array header and checks it has `expected` elements.
pub fn expect_array(
    reader: &mut Reader<'_>,
    message: &'static str,
    expected: u32,
) -> Result<(), DecodeError> {
    let found = reader.read_array_len()?;
    if found != expected {
        return Err(DecodeError::WrongLength {
            message,
            expected,
            found,
        });
    }
    Ok(())
}
