//! How deep and how large a session's variables are, checked before they are kept.
//!
//! Rhai clones, compares, prints and drops arrays and maps recursively, so a value nested
//! thousands of levels deep (`loop { a = [a]; }` stays within the size limits) overflows
//! an ordinary thread's stack. Scripts run on a thread with a large stack
//! ([`STACK_BYTES`](super::STACK_BYTES)); what a session keeps beyond one call must be
//! safe to clone and drop anywhere, and its memory bounded, hence
//! [`MAX_KEPT_DEPTH`](super::MAX_KEPT_DEPTH) and
//! [`MAX_KEPT_BYTES`](super::MAX_KEPT_BYTES).

use rhai::{Dynamic, Scope};

/// Why values cannot be kept.
#[derive(Debug, PartialEq)]
pub(super) enum Excess {
    /// Arrays and maps nest deeper than the limit.
    TooDeep,
    /// The values take more than the limit (estimated bytes).
    TooLarge(usize),
}

/// Check that every variable of `scope` nests at most `max_depth` levels and that they
/// take at most `max_bytes` together (an estimate: each array element or map entry
/// counts as the size of a `Dynamic`, plus the bytes of strings, keys and blobs). Stops
/// as soon as either limit is passed, so it never recurses more than `max_depth` levels.
pub(super) fn check_scope(
    scope: &Scope<'_>,
    max_depth: usize,
    max_bytes: usize,
) -> Result<(), Excess> {
    let mut bytes = 0;
    for (_, _, value) in scope.iter_raw() {
        walk(value, max_depth, max_bytes, &mut bytes)?;
    }
    Ok(())
}

/// Whether `value` nests more than `max_depth` levels of arrays and maps.
pub(super) fn too_deep(value: &Dynamic, max_depth: usize) -> bool {
    let mut bytes = 0;
    walk(value, max_depth, usize::MAX, &mut bytes) == Err(Excess::TooDeep)
}

/// Add `value`'s size to `bytes`, with `depth_left` levels of nesting still allowed.
fn walk(
    value: &Dynamic,
    depth_left: usize,
    max_bytes: usize,
    bytes: &mut usize,
) -> Result<(), Excess> {
    const SLOT: usize = size_of::<Dynamic>();
    if let Ok(array) = value.as_array_ref() {
        let depth_left = depth_left.checked_sub(1).ok_or(Excess::TooDeep)?;
        add(bytes, array.len().saturating_mul(SLOT), max_bytes)?;
        for item in array.iter() {
            walk(item, depth_left, max_bytes, bytes)?;
        }
    } else if let Ok(map) = value.as_map_ref() {
        let depth_left = depth_left.checked_sub(1).ok_or(Excess::TooDeep)?;
        for (key, item) in map.iter() {
            add(bytes, SLOT + key.len(), max_bytes)?;
            walk(item, depth_left, max_bytes, bytes)?;
        }
    } else if let Ok(string) = value.as_immutable_string_ref() {
        add(bytes, string.len(), max_bytes)?;
    } else if let Ok(blob) = value.as_blob_ref() {
        add(bytes, blob.len(), max_bytes)?;
    } else {
        add(bytes, SLOT, max_bytes)?;
    }
    Ok(())
}

/// `bytes += more`, failing beyond `max_bytes`.
fn add(bytes: &mut usize, more: usize, max_bytes: usize) -> Result<(), Excess> {
    *bytes = bytes.saturating_add(more);
    if *bytes > max_bytes {
        Err(Excess::TooLarge(*bytes))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rhai::{Array, Engine};

    use super::*;

    /// `1` inside `depth` arrays.
    fn nested(depth: usize) -> Dynamic {
        let mut value = Dynamic::from(1_i64);
        for _ in 0..depth {
            value = Dynamic::from_array(vec![value]);
        }
        value
    }

    #[test]
    fn depth_counts_levels_of_arrays_and_maps() {
        assert!(!too_deep(&Dynamic::from(1_i64), 0));
        assert!(!too_deep(&nested(3), 3));
        assert!(too_deep(&nested(4), 3));
        let map = Engine::new().eval::<Dynamic>("#{a: #{b: [1]}}").unwrap();
        assert!(!too_deep(&map, 3));
        assert!(too_deep(&map, 2));
    }

    #[test]
    fn scopes_are_measured() {
        let mut scope = Scope::new();
        scope.push("s", "x".repeat(100));
        scope.push("a", Array::from(vec![Dynamic::UNIT; 10]));
        assert_eq!(check_scope(&scope, 8, 1_000), Ok(()));
        assert!(matches!(
            check_scope(&scope, 8, 150),
            Err(Excess::TooLarge(_))
        ));
        scope.push("deep", nested(9));
        assert_eq!(check_scope(&scope, 8, 1_000), Err(Excess::TooDeep));
    }
}
