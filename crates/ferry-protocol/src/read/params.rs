//! What the layers above the classification need of a request's `params`, found in one
//! scan of the validated text and handed up as byte ranges: the transports read `_meta`'s
//! protocol version, progress token and log level, the server the tool's name, its
//! arguments and the rarer members, none of them reading the text again.

use std::num::NonZeroU32;

use super::members::{Span, each_member};

/// Where a member's value is in the params text, and whether it is plain (see
/// [`Span::plain`]). Eight bytes, `None` included: the landmarks travel with every request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// The value's first byte, with [`Member::PLAIN`] set when it is plain.
    start: u32,
    /// The byte after the value's last (a value is never empty).
    end: NonZeroU32,
}

impl Member {
    const PLAIN: u32 = 1 << 31;

    fn of(params: &str, span: Span<'_>) -> Option<Member> {
        let start = span.text.as_ptr() as usize - params.as_ptr() as usize;
        let end = u32::try_from(start + span.text.len()).ok()?;
        let start = u32::try_from(start).ok().filter(|s| s & Self::PLAIN == 0)?;
        Some(Member {
            start: if span.plain {
                start | Self::PLAIN
            } else {
                start
            },
            end: NonZeroU32::new(end)?,
        })
    }

    /// The value's text in `params`, the text the member was found in.
    pub fn text(self, params: &str) -> &str {
        let start = (self.start & !Self::PLAIN) as usize;
        params.get(start..self.end.get() as usize).unwrap_or("")
    }

    /// The value as a [`Span`] of `params`, the text the member was found in.
    pub fn span(self, params: &str) -> Span<'_> {
        Span {
            text: self.text(params),
            plain: self.start & Self::PLAIN != 0,
        }
    }

    /// The value is JSON `null`, which serde reads as an absent `Option`.
    pub fn is_null(self, params: &str) -> bool {
        self.text(params) == "null"
    }
}

/// The members of a request's params the layers above the classification read, each
/// `None` when absent. Found by [`landmarks`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Landmarks {
    /// `name`: a tool's or a prompt's.
    pub name: Option<Member>,
    /// `uri`: a resource's.
    pub uri: Option<Member>,
    /// `arguments`.
    pub arguments: Option<Member>,
    /// `task`: the call is to run as a task.
    pub task: Option<Member>,
    /// `inputResponses` (2026-07-28).
    pub input_responses: Option<Member>,
    /// `requestState` (2026-07-28).
    pub request_state: Option<Member>,
    /// `requestId` (`notifications/cancelled`).
    pub request_id: Option<Member>,
    /// `_meta`, whatever its value.
    pub meta: Option<Member>,
    /// `_meta.progressToken`.
    pub progress_token: Option<Member>,
    /// `_meta["io.modelcontextprotocol/protocolVersion"]`: a stateless-era request.
    pub protocol_version: Option<Member>,
    /// `_meta["io.modelcontextprotocol/logLevel"]`.
    pub log_level: Option<Member>,
}

/// The [`Landmarks`] of `params`, the text of a request's params as the classification
/// validated them; all absent for no params or an array. `None` where a scan would not
/// read the members as serde does (a key with an escape, one of these members given
/// twice, in params or in an object `_meta`): the caller then parses with serde.
///
/// ```
/// use ferry_protocol::read::landmarks;
///
/// let params = r#"{"name":"echo","arguments":{"m":"hi"},"_meta":{"progressToken":7}}"#;
/// let found = landmarks(Some(params)).unwrap();
/// assert_eq!(found.name.unwrap().text(params), r#""echo""#);
/// assert_eq!(found.progress_token.unwrap().text(params), "7");
/// assert!(found.uri.is_none() && found.protocol_version.is_none());
/// assert!(landmarks(Some(r#"{"name":1,"name":2}"#)).is_none());
/// ```
#[inline]
pub fn landmarks(params: Option<&str>) -> Option<Landmarks> {
    let Some(params) = params.filter(|p| p.trim_ascii_start().starts_with('{')) else {
        return Some(Landmarks::default());
    };
    let mut found = Landmarks::default();
    let mut meta = None;
    each_member(params, |key, value| {
        let slot = match key {
            "name" => &mut found.name,
            "arguments" => &mut found.arguments,
            "_meta" => {
                meta = Some(value);
                &mut found.meta
            }
            "uri" => &mut found.uri,
            "task" => &mut found.task,
            "inputResponses" => &mut found.input_responses,
            "requestState" => &mut found.request_state,
            "requestId" => &mut found.request_id,
            _ => return Some(()),
        };
        fill(slot, params, value)
    })?;
    if let Some(meta) = meta.filter(|m| m.text.starts_with('{')) {
        each_member(meta.text, |key, value| {
            let slot = match key {
                "progressToken" => &mut found.progress_token,
                "io.modelcontextprotocol/protocolVersion" => &mut found.protocol_version,
                "io.modelcontextprotocol/logLevel" => &mut found.log_level,
                _ => return Some(()),
            };
            fill(slot, params, value)
        })?;
    }
    Some(found)
}

/// A wanted member's value into its slot: `None` when it was there already (serde's derive
/// refuses a repeated field where a `Value` keeps the last: the caller's serde decides).
#[inline(always)]
fn fill(slot: &mut Option<Member>, params: &str, value: Span<'_>) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(Member::of(params, value)?);
            Some(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What a `Value` of `params` holds at each landmark.
    fn by_value(params: &str) -> Vec<Option<Value>> {
        let v: Value = serde_json::from_str(params).unwrap();
        let meta = v.get("_meta").filter(|m| m.is_object());
        let top = [
            "name",
            "uri",
            "arguments",
            "task",
            "inputResponses",
            "requestState",
            "requestId",
            "_meta",
        ];
        let mut out: Vec<_> = top.iter().map(|k| v.get(*k).cloned()).collect();
        for key in [
            "progressToken",
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/logLevel",
        ] {
            out.push(meta.and_then(|m| m.get(key)).cloned());
        }
        out
    }

    fn by_scan(params: &str) -> Vec<Option<Value>> {
        let l = landmarks(Some(params)).expect("read");
        [
            l.name,
            l.uri,
            l.arguments,
            l.task,
            l.input_responses,
            l.request_state,
            l.request_id,
            l.meta,
            l.progress_token,
            l.protocol_version,
            l.log_level,
        ]
        .iter()
        .map(|m| m.map(|m| serde_json::from_str(m.text(params)).unwrap()))
        .collect()
    }

    #[test]
    fn finds_what_a_value_holds() {
        for params in [
            r#"{}"#,
            r#"{"name":"echo","arguments":{"m":"hi","_meta":{"progressToken":1}}}"#,
            r#"{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug"},"name":"a"}"#,
            r#"{"uri":"file:///x","_meta":null}"#,
            r#"{"_meta":[1,2],"task":{"ttl":5},"requestState":"s","inputResponses":{}}"#,
            r#" { "requestId" : 3 , "name" : "x\"y" } "#,
        ] {
            assert_eq!(by_scan(params), by_value(params), "{params}");
        }
    }

    #[test]
    fn the_meta_keys_are_the_protocols() {
        assert_eq!(
            crate::types::keys::PROTOCOL_VERSION,
            "io.modelcontextprotocol/protocolVersion"
        );
        assert_eq!(
            crate::types::keys::LOG_LEVEL,
            "io.modelcontextprotocol/logLevel"
        );
    }

    #[test]
    fn a_member_takes_eight_bytes_and_keeps_its_plainness() {
        assert_eq!(std::mem::size_of::<Option<Member>>(), 8);
        let params = r#"{"name":"a\"b","arguments":{"x":1e5},"uri":"u"}"#;
        let found = landmarks(Some(params)).unwrap();
        assert!(!found.name.unwrap().span(params).plain);
        assert!(!found.arguments.unwrap().span(params).plain);
        assert!(found.uri.unwrap().span(params).plain);
    }

    #[test]
    fn declines_what_a_scan_cannot_read_as_serde() {
        for params in [
            r#"{"name":"a","name":"b"}"#,
            r#"{"n\u0061me":"a"}"#,
            r#"{"_meta":{"progressToken":1,"progressToken":2}}"#,
            r#"{"_meta":{"progress\u0054oken":1}}"#,
        ] {
            assert_eq!(landmarks(Some(params)), None, "{params}");
        }
        assert_eq!(landmarks(None), Some(Landmarks::default()));
        assert_eq!(landmarks(Some("[1,2]")), Some(Landmarks::default()));
    }
}
