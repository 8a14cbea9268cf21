//! Byte searches on the message path (newlines in frames, quotes, escapes and brackets in
//! tool calls' params, the progress token's key).
//!
//! Not memchr's generic entry points: on first use they detect AVX2 with `cpuid`, which in
//! a virtual machine traps to the hypervisor, a visible part of a server's cold start.
//! SSE2 is part of x86_64, so memchr's SSE2 searchers need no detection, and for messages
//! of a few hundred bytes they are as fast. Other targets use
//! memchr's portable entry points.

/// The position of the first `needle` in `haystack`.
///
/// ```
/// assert_eq!(ferry_protocol::read::scan::find(b'\n', b"{}\n{}"), Some(2));
/// ```
#[inline]
pub fn find(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
            return searcher.find(haystack);
        }
    }
    memchr::memchr(needle, haystack)
}

/// The position of the first `a` or `b` in `haystack`.
///
/// ```
/// assert_eq!(ferry_protocol::read::scan::find_either(b'"', b'\\', br#"ab\"c"#), Some(2));
/// ```
#[inline]
pub fn find_either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b) {
            return searcher.find(haystack);
        }
    }
    memchr::memchr2(a, b, haystack)
}

/// How many bytes of `haystack` are `a` or `b`, counting no further than `limit + 1`.
///
/// ```
/// use ferry_protocol::read::scan::count_either;
///
/// assert_eq!(count_either(b'{', b'[', b"[[{}]]", 10), 3);
/// assert_eq!(count_either(b'{', b'[', b"[[{}]]", 1), 2);
/// ```
#[inline]
pub fn count_either(a: u8, b: u8, haystack: &[u8], limit: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b) {
            return searcher.iter(haystack).take(limit + 1).count();
        }
    }
    memchr::memchr2_iter(a, b, haystack).take(limit + 1).count()
}

/// Whether `json` may hold the text `before` + `T` + `after` (a key such as
/// `progressToken`, split at its one capital `T`), literally or spelled with an escape:
/// `true` at the first backslash. One pass for both, where two `str::contains` took
/// several times the work on every request.
///
/// ```
/// use ferry_protocol::read::scan::may_hold;
///
/// assert!(may_hold(br#"{"_meta":{"progressToken":1}}"#, b"progress", b"oken"));
/// assert!(!may_hold(br#"{"name":"echo"}"#, b"progress", b"oken"));
/// ```
#[inline]
pub fn may_hold(json: &[u8], before: &[u8], after: &[u8]) -> bool {
    let at = |i: usize| {
        json[i] == b'\\' || (json[..i].ends_with(before) && json[i + 1..].starts_with(after))
    };
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(b'T', b'\\') {
            return searcher.iter(json).any(at);
        }
    }
    memchr::memchr2_iter(b'T', b'\\', json).any(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_counts() {
        let text = b"{\"a\":[1,{\"b\":2}]}\nrest";
        assert_eq!(find(b'\n', text), Some(17));
        assert_eq!(find(b'\n', b"no newline"), None);
        assert_eq!(find_either(b'"', b'\\', br#"ab\"c"d"#), Some(2));
        assert_eq!(find_either(b'"', b'\\', b"plain"), None);
        assert_eq!(count_either(b'{', b'[', text, 100), 3);
        assert_eq!(count_either(b'{', b'[', text, 1), 2);
        let long = vec![b'['; 1000];
        assert_eq!(find(b'[', &long[10..]), Some(0));
        assert_eq!(count_either(b'{', b'[', &long, 100), 101);
    }

    #[test]
    fn may_hold_a_key_or_an_escape() {
        let holds = |json: &str| may_hold(json.as_bytes(), b"progress", b"oken");
        assert!(holds(r#"{"_meta":{"progressToken":1}}"#));
        assert!(holds(r#"{"a":"\u0041"}"#));
        assert!(holds("progressToken"));
        assert!(!holds(
            r#"{"name":"echo","arguments":{"text":"The Tokens"}}"#
        ));
        assert!(!holds(r#"{"progress":1,"Token":2}"#));
        assert!(!holds(""));
        assert!(!holds("T"));
    }
}
