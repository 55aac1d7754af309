//! Where a MessagePack value's bytes end, read from its markers and lengths alone: what a
//! `PUBLISH` goes on from after a refused record ([`CheckedPublish`](crate::request::CheckedPublish)).
//!
//! A record can be refused for what its bytes hold — a string that is not UTF-8, values
//! nested deeper than [`MAX_DEPTH`](crate::msgpack::MAX_DEPTH), an extension Herald does not
//! define — and still show where it ends. Only bytes that end too soon, or a marker that
//! starts no value (`0xc1`), lose the place of the records after it.

/// Returns the position just after the value that starts at `start` in `bytes`, without
/// checking what it holds; `None` if the bytes end first or hold `0xc1`. Every step reads
/// at least one byte, so the work is bounded by the bytes, whatever counts they announce.
pub fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut pos = start;
    // Values still to step over: one, then each array's elements and each map's pairs.
    let mut pending: u64 = 1;
    let be = |pos: usize, count: usize| -> Option<u64> {
        let field = bytes.get(pos..pos.checked_add(count)?)?;
        Some(field.iter().fold(0, |value, &b| value << 8 | u64::from(b)))
    };
    while pending > 0 {
        pending -= 1;
        let marker = *bytes.get(pos)?;
        pos += 1;
        // Bytes that follow the marker: (length field's size, fixed size after it).
        let (length_bytes, fixed) = match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0x80..=0x8f => {
                pending = pending.saturating_add(2 * u64::from(marker & 0x0f));
                (0, 0)
            }
            0x90..=0x9f => {
                pending = pending.saturating_add(u64::from(marker & 0x0f));
                (0, 0)
            }
            0xa0..=0xbf => (0, usize::from(marker & 0x1f)),
            0xc1 => return None,
            0xc4 | 0xd9 => (1, 0),
            0xc5 | 0xda => (2, 0),
            0xc6 | 0xdb => (4, 0),
            // Extensions: the length, then the type byte and the data.
            0xc7 => (1, 1),
            0xc8 => (2, 1),
            0xc9 => (4, 1),
            0xca => (0, 4),
            0xcb => (0, 8),
            0xcc | 0xd0 => (0, 1),
            0xcd | 0xd1 => (0, 2),
            0xce | 0xd2 => (0, 4),
            0xcf | 0xd3 => (0, 8),
            0xd4 => (0, 2),
            0xd5 => (0, 3),
            0xd6 => (0, 5),
            0xd7 => (0, 9),
            0xd8 => (0, 17),
            0xdc..=0xdf => {
                let size = if marker & 1 == 0 { 2 } else { 4 };
                let count = be(pos, size)?;
                pos += size;
                pending = pending.saturating_add(if marker >= 0xde { 2 * count } else { count });
                (0, 0)
            }
        };
        let length = usize::try_from(be(pos, length_bytes)?).ok()?;
        pos = pos
            .checked_add(length_bytes)?
            .checked_add(length)?
            .checked_add(fixed)?;
        if pos > bytes.len() {
            return None;
        }
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack::Reader;

    /// Values of every marker family, each with a byte after it.
    fn samples() -> Vec<Vec<u8>> {
        let mut nested = vec![0x91; 40];
        nested.push(0x01);
        vec![
            vec![0x05],
            vec![0xe0],
            vec![0xc0],
            vec![0xc3],
            vec![0xcc, 0xff],
            vec![0xd3, 0, 0, 0, 0, 0, 0, 0, 1],
            vec![0xcb, 0, 0, 0, 0, 0, 0, 0, 0],
            vec![0xa3, b'a', b'b', b'c'],
            vec![0xd9, 2, 0xff, 0xfe],
            vec![0xda, 0, 1, b'x'],
            vec![0xc4, 2, 1, 2],
            vec![0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 0],
            vec![0xc7, 2, 5, 1, 2],
            vec![0x92, 0x01, 0xa1, b'x'],
            vec![0x81, 0x01, 0x91, 0x02],
            vec![0xdc, 0, 2, 0x01, 0x02],
            vec![0xde, 0, 1, 0x01, 0xc0],
            nested,
        ]
    }

    #[test]
    fn ends_where_the_value_ends() {
        for value in samples() {
            let mut bytes = vec![0xaa];
            bytes.extend_from_slice(&value);
            bytes.push(0x07);
            assert_eq!(value_end(&bytes, 1), Some(1 + value.len()), "{value:02x?}");
        }
    }

    #[test]
    fn agrees_with_the_checked_skip_on_what_it_passes() {
        for value in samples() {
            let mut reader = Reader::new(&value);
            if reader.skip_value(0).is_ok() {
                assert_eq!(value_end(&value, 0), Some(reader.position()));
            }
        }
    }

    #[test]
    fn is_none_when_the_bytes_end_first_or_hold_no_value() {
        for value in samples() {
            for cut in 0..value.len() {
                assert_eq!(
                    value_end(&value[..cut], 0),
                    None,
                    "{value:02x?} cut at {cut}"
                );
            }
        }
        assert_eq!(value_end(&[0x92, 0x01, 0xc1], 0), None);
        // A count far beyond the bytes: stops when they run out.
        assert_eq!(value_end(&[0xdd, 0xff, 0xff, 0xff, 0xff, 0x01], 0), None);
    }
}
