//! Pagination of list results with opaque, stateless cursors.
//!
//! A cursor encodes the offset of the next page and a fingerprint of the list it belongs
//! to, base64url-encoded: the server keeps no per-client state, and a cursor from a list
//! that has since changed, from another list, or made up, is refused with `-32602`.

use std::ops::Range;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::Cursor;

/// One page of a list: the range of its items, and the cursor of the next page.
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) range: Range<usize>,
    pub(crate) next: Option<Cursor>,
}

/// The page `cursor` points at in a list of `len` items. `list` names the list (e.g.
/// `"tools"`) and `generation` changes whenever it does, so stale cursors are detected.
pub(crate) fn page(
    len: usize,
    cursor: Option<&str>,
    page_size: usize,
    list: &str,
    generation: u64,
) -> Result<Page, ErrorObject> {
    let fingerprint = fingerprint(list, generation);
    let start = match cursor {
        None => 0,
        Some(cursor) => decode(cursor, fingerprint)
            .filter(|&offset| offset <= len)
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "invalid cursor {cursor:?}: not one this server issued for the current {list} list"
                ))
            })?,
    };
    let end = start.saturating_add(page_size.max(1)).min(len);
    let next = (end < len).then(|| encode(end, fingerprint));
    Ok(Page {
        range: start..end,
        next,
    })
}

fn fingerprint(list: &str, generation: u64) -> u32 {
    // FNV-1a: a stable, dependency-free hash; this is a consistency check, not security.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in list.bytes().chain(generation.to_le_bytes()) {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

fn encode(offset: usize, fingerprint: u32) -> Cursor {
    let mut bytes = [0u8; 12];
    bytes[..8].copy_from_slice(&(offset as u64).to_le_bytes());
    bytes[8..].copy_from_slice(&fingerprint.to_le_bytes());
    URL_SAFE_NO_PAD.encode(bytes)
}

fn decode(cursor: &str, fingerprint: u32) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let bytes: [u8; 12] = bytes.try_into().ok()?;
    let (offset, check) = bytes.split_at(8);
    (check == fingerprint.to_le_bytes())
        .then(|| usize::try_from(u64::from_le_bytes(offset.try_into().ok()?)).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_each_other_and_end() {
        let first = page(5, None, 2, "tools", 1).unwrap();
        assert_eq!(first.range, 0..2);
        let second = page(5, first.next.as_deref(), 2, "tools", 1).unwrap();
        assert_eq!(second.range, 2..4);
        let last = page(5, second.next.as_deref(), 2, "tools", 1).unwrap();
        assert_eq!((last.range, last.next), (4..5, None));
    }

    #[test]
    fn foreign_stale_and_garbage_cursors_are_refused() {
        let next = page(5, None, 2, "tools", 1).unwrap().next.unwrap();
        for (cursor, list, generation) in [
            (next.as_str(), "prompts", 1),
            (next.as_str(), "tools", 2),
            ("garbage!", "tools", 1),
            ("", "tools", 1),
        ] {
            let error = page(5, Some(cursor), 2, list, generation).unwrap_err();
            assert_eq!(error.code, -32602);
        }
    }
}
