//! The malformed-input table: every row an input and its exact outcome. Shared by the
//! classifier test (`malformed.rs`) and the stdio test of `ferry serve` (ferry-mcp-cli).

#![allow(dead_code, unreachable_pub)]

use std::fmt;

use ferry_protocol::error_codes::{INVALID_REQUEST, PARSE_ERROR};
use ferry_protocol::jsonrpc::{ClassifyLimits, RequestId};

/// The expected (or observed) outcome of classifying one row.
#[derive(Clone, PartialEq)]
pub enum Outcome {
    /// A valid request; `params` is the raw JSON text of the params, if present.
    Request {
        id: RequestId,
        method: String,
        params: Option<String>,
    },
    /// A valid notification.
    Notification {
        method: String,
        params: Option<String>,
    },
    /// A valid result response.
    Result { id: RequestId },
    /// A valid error response (`id` is `None` for `"id": null`).
    ErrorResp { id: Option<RequestId>, code: i64 },
    /// Rejected input, with the error response it deserves.
    Rejected {
        code: i64,
        id: Option<RequestId>,
        reply: bool,
    },
    /// A batch: one outcome per entry.
    Batch(Vec<Outcome>),
}

/// Cuts long strings (8 MiB params, 100k-deep nesting) down to something printable.
pub fn shorten(s: &str) -> String {
    const MAX: usize = 120;
    if s.len() <= MAX {
        return format!("{s:?}");
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}...({} bytes in all)", &s[..end], s.len())
}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Request { id, method, params } => write!(
                f,
                "Request {{ id: {id:?}, method: {}, params: {} }}",
                shorten(method),
                params.as_deref().map_or("None".to_owned(), shorten)
            ),
            Outcome::Notification { method, params } => write!(
                f,
                "Notification {{ method: {}, params: {} }}",
                shorten(method),
                params.as_deref().map_or("None".to_owned(), shorten)
            ),
            Outcome::Result { id } => write!(f, "Result {{ id: {id:?} }}"),
            Outcome::ErrorResp { id, code } => {
                write!(f, "ErrorResp {{ id: {id:?}, code: {code} }}")
            }
            Outcome::Rejected { code, id, reply } => {
                write!(f, "Rejected {{ code: {code}, id: {id:?}, reply: {reply} }}")
            }
            Outcome::Batch(entries) => f.debug_list().entries(entries).finish(),
        }
    }
}

/// One row of the table.
pub struct Row {
    pub name: &'static str,
    pub input: Vec<u8>,
    pub limits: ClassifyLimits,
    pub expect: Outcome,
    /// A substring that some rejection message of the row must contain.
    pub mentions: Option<&'static str>,
}

impl Row {
    pub fn limits(mut self, limits: ClassifyLimits) -> Self {
        self.limits = limits;
        self
    }

    pub fn mentions(mut self, needle: &'static str) -> Self {
        self.mentions = Some(needle);
        self
    }
}

pub fn row(name: &'static str, input: impl Into<Vec<u8>>, expect: Outcome) -> Row {
    Row {
        name,
        input: input.into(),
        limits: ClassifyLimits::default(),
        expect,
        mentions: None,
    }
}

pub fn num(n: i64) -> Option<RequestId> {
    Some(RequestId::Number(n))
}

pub fn st(s: &str) -> Option<RequestId> {
    Some(RequestId::String(s.to_owned()))
}

pub fn req(id: impl Into<RequestId>, method: &str) -> Outcome {
    Outcome::Request {
        id: id.into(),
        method: method.to_owned(),
        params: None,
    }
}

pub fn req_p(id: impl Into<RequestId>, method: &str, params: impl Into<String>) -> Outcome {
    Outcome::Request {
        id: id.into(),
        method: method.to_owned(),
        params: Some(params.into()),
    }
}

pub fn notif(method: &str) -> Outcome {
    Outcome::Notification {
        method: method.to_owned(),
        params: None,
    }
}

pub fn notif_p(method: &str, params: &str) -> Outcome {
    Outcome::Notification {
        method: method.to_owned(),
        params: Some(params.to_owned()),
    }
}

pub fn result(id: impl Into<RequestId>) -> Outcome {
    Outcome::Result { id: id.into() }
}

pub fn error_resp(id: Option<RequestId>, code: i64) -> Outcome {
    Outcome::ErrorResp { id, code }
}

/// `-32700`, id `null`, answered.
pub fn parse_error() -> Outcome {
    Outcome::Rejected {
        code: PARSE_ERROR,
        id: None,
        reply: true,
    }
}

/// `-32600`, answered.
pub fn invalid(id: Option<RequestId>) -> Outcome {
    Outcome::Rejected {
        code: INVALID_REQUEST,
        id,
        reply: true,
    }
}

/// `-32600`, not answered (the input was shaped like a response).
pub fn silent(id: Option<RequestId>) -> Outcome {
    Outcome::Rejected {
        code: INVALID_REQUEST,
        id,
        reply: false,
    }
}

pub const DEPTH: usize = 100_000;

pub fn deep_array(depth: usize, closed: bool) -> Vec<u8> {
    let mut v = "[".repeat(depth);
    if closed {
        v.push_str(&"]".repeat(depth));
    }
    v.into_bytes()
}

pub fn deep_params_text(depth: usize) -> String {
    format!("{{\"a\":{}{}}}", "[".repeat(depth), "]".repeat(depth))
}

pub fn huge_request() -> (Vec<u8>, String) {
    let params = format!(
        "{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{}\"}}}}",
        "x".repeat(8 * 1024 * 1024)
    );
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
    (line.into_bytes(), params)
}

pub fn rows() -> Vec<Row> {
    let (huge, huge_params) = huge_request();
    let big_limits = ClassifyLimits {
        max_message_bytes: 16 * 1024 * 1024,
    };
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let tiny = |n| ClassifyLimits {
        max_message_bytes: n,
    };

    vec![
        // ---- valid messages -------------------------------------------------------------
        row("valid request", &ping[..], req(1, "ping")),
        row(
            "valid request, params object",
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c"}}"#,
            req_p(2, "tools/list", r#"{"cursor":"c"}"#),
        ),
        row(
            "valid request, params array",
            br#"{"jsonrpc":"2.0","id":3,"method":"sum","params":[1, 2]}"#,
            req_p(3, "sum", "[1, 2]"),
        ),
        row(
            "valid request, members in unusual order",
            br#"{"params":{},"method":"ping","id":4,"jsonrpc":"2.0"}"#,
            req_p(4, "ping", "{}"),
        ),
        row(
            "valid notification",
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            notif("notifications/initialized"),
        ),
        row(
            "valid notification, params",
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            notif_p("notifications/progress", r#"{"progress":1}"#),
        ),
        row(
            "valid result response",
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            result(1),
        ),
        row(
            "valid result response, result null",
            br#"{"jsonrpc":"2.0","id":"r","result":null}"#,
            result("r"),
        ),
        row(
            "valid error response, null id",
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            error_resp(None, PARSE_ERROR),
        ),
        row(
            "valid error response, id and data",
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope","data":[1]}}"#,
            error_resp(num(7), -32601),
        ),
        row(
            "string id",
            br#"{"jsonrpc":"2.0","id":"abc-123","method":"ping"}"#,
            req("abc-123", "ping"),
        ),
        row(
            "empty string id",
            br#"{"jsonrpc":"2.0","id":"","method":"ping"}"#,
            req("", "ping"),
        ),
        row(
            "negative id",
            br#"{"jsonrpc":"2.0","id":-5,"method":"ping"}"#,
            req(-5, "ping"),
        ),
        row(
            "zero id",
            br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#,
            req(0, "ping"),
        ),
        row(
            "id i64::MAX",
            br#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}"#,
            req(i64::MAX, "ping"),
        ),
        row(
            "id i64::MIN",
            br#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
            req(i64::MIN, "ping"),
        ),
        row(
            "extra unknown members are ignored",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[1,{"x":null}]},"_meta":null,"n":1e400}"#,
            req(1, "ping"),
        ),
        row(
            "leading and trailing whitespace",
            b" \t\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \t\n".to_vec(),
            req(1, "ping"),
        ),
        row(
            "trailing \\r (CRLF line ending)",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r".to_vec(),
            req(1, "ping"),
        ),
        row(
            "escaped NUL in method is valid",
            br#"{"jsonrpc":"2.0","id":1,"method":"a\u0000b"}"#,
            req(1, "a\0b"),
        ),
        row(
            "escaped NUL in string id is valid",
            br#"{"jsonrpc":"2.0","id":"\u0000","method":"ping"}"#,
            req("\0", "ping"),
        ),
        row(
            "escaped surrogate pair in method is valid",
            br#"{"jsonrpc":"2.0","id":1,"method":"\ud83d\ude00"}"#,
            req(1, "\u{1F600}"),
        ),
        row(
            "raw multi-byte UTF-8 in method",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"caf\u{e9}/\u{1F600}\"}",
            req(1, "caf\u{e9}/\u{1F600}"),
        ),
        row(
            "duplicate unknown members are ignored",
            br#"{"x":1,"x":2,"jsonrpc":"2.0","method":"ping"}"#,
            notif("ping"),
        ),
        // ---- invalid JSON -> -32700, id null --------------------------------------------
        row("empty input", &b""[..], parse_error()),
        row("whitespace only", &b" \t\r\n  "[..], parse_error()),
        row("lone open brace", &b"{"[..], parse_error()),
        row(
            "truncated object",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            parse_error(),
        ),
        row(
            "truncated after colon",
            br#"{"jsonrpc":"2.0","id":"#,
            parse_error(),
        ),
        row(
            "truncated string",
            br#"{"jsonrpc":"2.0","id":1,"method":"pi"#,
            parse_error(),
        ),
        row(
            "trailing comma",
            br#"{"jsonrpc":"2.0","method":"ping",}"#,
            parse_error(),
        ),
        row(
            "single quotes",
            br#"{'jsonrpc':'2.0','method':'ping'}"#,
            parse_error(),
        ),
        row(
            "unquoted keys",
            br#"{jsonrpc:"2.0",method:"ping"}"#,
            parse_error(),
        ),
        row(
            "NaN as id",
            br#"{"jsonrpc":"2.0","id":NaN,"method":"ping"}"#,
            parse_error(),
        ),
        row(
            "comment before object",
            b"// hi\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}".to_vec(),
            parse_error(),
        ),
        row(
            "trailing garbage after object",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            parse_error(),
        ),
        row(
            "two objects on one line",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            parse_error(),
        ),
        row("bare word", &b"hello"[..], parse_error()),
        row(
            "invalid escape in string",
            br#"{"jsonrpc":"2.0","id":1,"method":"a\xb"}"#,
            parse_error(),
        ),
        row(
            "raw NUL byte inside a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\0b\"}".to_vec(),
            parse_error(),
        ),
        row(
            "raw newline inside a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\nb\"}".to_vec(),
            parse_error(),
        ),
        row(
            "raw NUL byte inside params",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"s\":\"\0\"}}".to_vec(),
            parse_error(),
        ),
        // RFC 8259 lets a parser ignore a BOM; serde_json does not.
        row(
            "UTF-8 byte order mark",
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".to_vec(),
            parse_error(),
        ),
        // ---- invalid UTF-8 -> -32700, id null -------------------------------------------
        row("byte 0xff alone", &b"\xff"[..], parse_error()).mentions("UTF-8"),
        row(
            "overlong encoding of '/' in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xC0\xAF\"}".to_vec(),
            parse_error(),
        )
        .mentions("UTF-8"),
        row("lone continuation byte", &b"\x80"[..], parse_error()).mentions("UTF-8"),
        row(
            "0xff inside a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}".to_vec(),
            parse_error(),
        )
        .mentions("UTF-8"),
        row(
            "truncated multi-byte sequence at end",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\xE2\x82".to_vec(),
            parse_error(),
        )
        .mentions("UTF-8"),
        row(
            "UTF-8-encoded surrogate (CESU-8)",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xED\xA0\x80\"}".to_vec(),
            parse_error(),
        )
        .mentions("UTF-8"),
        // ---- valid JSON, not an object -> -32600, id null -------------------------------
        row("top-level number", &b"1"[..], invalid(None)).mentions("must be a JSON object"),
        row("top-level string", &b"\"ping\""[..], invalid(None))
            .mentions("must be a JSON object"),
        row("top-level true", &b"true"[..], invalid(None)).mentions("must be a JSON object"),
        row("top-level null", &b" null "[..], invalid(None)).mentions("must be a JSON object"),
        // ---- envelope errors -> -32600 ---------------------------------------------------
        row(
            "jsonrpc missing",
            br#"{"id":1,"method":"ping"}"#,
            invalid(num(1)),
        )
        .mentions("jsonrpc"),
        row(
            "jsonrpc 1.0",
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            invalid(num(1)),
        )
        .mentions("2.0"),
        row(
            "jsonrpc 2.0 as a number",
            br#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#,
            invalid(num(1)),
        )
        .mentions("2.0"),
        row(
            "jsonrpc null",
            br#"{"jsonrpc":null,"id":"a","method":"ping"}"#,
            invalid(st("a")),
        ),
        row(
            "jsonrpc missing in a notification",
            br#"{"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "method missing",
            br#"{"jsonrpc":"2.0","id":1}"#,
            invalid(num(1)),
        )
        .mentions("method"),
        row(
            "method missing, no id",
            br#"{"jsonrpc":"2.0"}"#,
            invalid(None),
        ),
        row(
            "empty object",
            &b"{}"[..],
            invalid(None),
        ),
        row(
            "method a number",
            br#"{"jsonrpc":"2.0","id":1,"method":42}"#,
            invalid(num(1)),
        )
        .mentions("method"),
        row(
            "method null",
            br#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            invalid(num(1)),
        ),
        row(
            "method an object",
            br#"{"jsonrpc":"2.0","id":"o","method":{"name":"ping"}}"#,
            invalid(st("o")),
        ),
        row(
            "request carrying result",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            invalid(num(1)),
        ),
        row(
            "id null in a request",
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            invalid(None),
        )
        .mentions("null"),
        row(
            "id float 1.5",
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            invalid(None),
        ),
        // 1.0 is read as a float, not an integer: rejected rather than echoed back as 1.
        row(
            "id float 1.0",
            br#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "id with exponent 1e2",
            br#"{"jsonrpc":"2.0","id":1e2,"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "id object",
            br#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "id array",
            br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "id bool",
            br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "id i64::MAX + 1",
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            invalid(None),
        )
        .mentions("64"),
        row(
            "id i64::MIN - 1",
            br#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "id 1e400",
            br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
            invalid(None),
        ),
        row(
            "params a string",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
            invalid(num(1)),
        )
        .mentions("params"),
        row(
            "params a number",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#,
            invalid(num(1)),
        ),
        row(
            "params null",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            invalid(num(1)),
        ),
        row(
            "params true",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":true}"#,
            invalid(num(1)),
        ),
        row(
            "params a string in a notification",
            br#"{"jsonrpc":"2.0","method":"ping","params":"x"}"#,
            invalid(None),
        ),
        row(
            "duplicate id members",
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            invalid(None),
        )
        .mentions("duplicate"),
        row(
            "duplicate method members",
            br#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            invalid(None),
        )
        .mentions("duplicate"),
        // ---- lone surrogates ----------------------------------------------------------
        // A lone surrogate escape is allowed by RFC 8259's grammar but is not Unicode, and
        // serde_json reports it as a syntax error; like invalid UTF-8 it is expected to be
        // a parse error. The classifier currently answers -32600 with the id and the
        // misleading message "\"method\" must be a string" (or, for the id, "must be a
        // string or an integer"): these two rows fail until that changes.
        row(
            "lone surrogate in method",
            br#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#,
            parse_error(),
        ),
        // Params stay raw until their method is known, so this is accepted as is.
        row(
            "lone surrogate in params stays raw",
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\ud800"}}"#,
            req_p(1, "x", r#"{"s":"\ud800"}"#),
        ),
        row(
            "lone surrogate in string id",
            br#"{"jsonrpc":"2.0","id":"\udc00","method":"ping"}"#,
            parse_error(),
        ),
        // ---- response-shaped garbage -> -32600, not answered ---------------------------
        row(
            "result and error both present",
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            silent(num(1)),
        )
        .mentions("both"),
        row(
            "error without code",
            br#"{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}"#,
            silent(num(1)),
        ),
        row(
            "error with a string code",
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":"-32600","message":"m"}}"#,
            silent(num(1)),
        ),
        row(
            "error with a float code",
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600.5,"message":"m"}}"#,
            silent(num(1)),
        ),
        row(
            "error without message",
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600}}"#,
            silent(num(1)),
        ),
        row(
            "error a string",
            br#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
            silent(num(1)),
        ),
        row(
            "error null",
            br#"{"jsonrpc":"2.0","id":1,"error":null}"#,
            silent(num(1)),
        ),
        row(
            "result response with no id",
            br#"{"jsonrpc":"2.0","result":{}}"#,
            silent(None),
        ),
        row(
            "error response with no id",
            br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}"#,
            silent(None),
        ),
        row(
            "result response with null id",
            br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            silent(None),
        ),
        row(
            "result response with float id",
            br#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            silent(None),
        ),
        row(
            "error response with object id",
            br#"{"jsonrpc":"2.0","id":{},"error":{"code":-32600,"message":"m"}}"#,
            silent(None),
        ),
        row(
            "result response with id beyond i64",
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}"#,
            silent(None),
        ),
        row(
            "response without jsonrpc",
            br#"{"id":1,"result":{}}"#,
            silent(num(1)),
        ),
        row(
            "response with jsonrpc 1.0",
            br#"{"jsonrpc":"1.0","id":"q","result":{}}"#,
            silent(st("q")),
        ),
        // ---- deep nesting: must not overflow the stack ----------------------------------
        // Raw members (params, unknown members, batch entries) are skipped iteratively by
        // serde_json, with no depth limit: deep nesting there is accepted (or rejected as
        // -32600) rather than refused as -32700, and never overflows the stack.
        row(
            "100k unclosed brackets",
            deep_array(DEPTH, false),
            parse_error(),
        ),
        row(
            "100k unclosed objects",
            "{\"a\":".repeat(DEPTH),
            parse_error(),
        ),
        row(
            "100k balanced brackets",
            deep_array(DEPTH, true),
            Outcome::Batch(vec![invalid(None)]),
        ),
        row(
            "100k deep params",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}}}"#,
                deep_params_text(DEPTH)
            ),
            req_p(1, "x", deep_params_text(DEPTH)),
        ),
        row(
            "100k deep unknown member",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","junk":{}}}"#,
                deep_params_text(DEPTH)
            ),
            req(1, "x"),
        ),
        row(
            "100k deep id",
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"x"}}"#,
                String::from_utf8(deep_array(DEPTH, true)).expect("ascii")
            ),
            invalid(None),
        ),
        row(
            "100k deep method",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":{}}}"#,
                String::from_utf8(deep_array(DEPTH, true)).expect("ascii")
            ),
            invalid(num(1)),
        ),
        // ---- batches -------------------------------------------------------------------
        row("empty batch", &b"[]"[..], invalid(None)).mentions("empty batch"),
        row("empty batch with whitespace", &b" [ \n ] "[..], invalid(None)),
        row(
            "batch of garbage",
            &b"[1,2,3]"[..],
            Outcome::Batch(vec![invalid(None), invalid(None), invalid(None)]),
        )
        .mentions("must be a JSON object"),
        row(
            "batch containing initialize",
            br#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
            Outcome::Batch(vec![
                invalid(num(1)),
                req(2, "ping"),
                notif("notifications/initialized"),
            ]),
        )
        .mentions("initialize"),
        row(
            "mixed batch",
            br#" [ {"jsonrpc":"2.0","id":"a","method":"tools/list"} , {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"z"}}, {"jsonrpc":"2.0","id":5,"method":7}, "junk", {"jsonrpc":"2.0","id":9,"result":{}}, {"jsonrpc":"2.0","id":8,"result":1,"error":{"code":1,"message":"m"}} ] "#,
            Outcome::Batch(vec![
                req("a", "tools/list"),
                notif_p("notifications/cancelled", r#"{"requestId":"z"}"#),
                invalid(num(5)),
                invalid(None),
                result(9),
                silent(num(8)),
            ]),
        ),
        row(
            "batch of one null",
            &b"[null]"[..],
            Outcome::Batch(vec![invalid(None)]),
        )
        .mentions("must be a JSON object"),
        row(
            "nested batch",
            br#"[[{"jsonrpc":"2.0","id":1,"method":"ping"}]]"#,
            Outcome::Batch(vec![invalid(None)]),
        ),
        // A batch entry must be an object. The classifier's envelope is a serde-derived
        // struct, which also accepts the sequence form (`[jsonrpc, id, method, ...]`), so
        // this entry is currently accepted as a request and the next one (7 elements) is
        // rejected with -32700 although it is valid JSON: these two rows fail until the
        // envelope refuses arrays.
        row(
            "batch entry that is an array shaped like a request",
            br#"[["2.0",1,"ping"]]"#,
            Outcome::Batch(vec![invalid(None)]),
        ),
        row(
            "batch entry that is a 7-element array",
            br#"[["2.0",1,"ping",null,null,null,null]]"#,
            Outcome::Batch(vec![invalid(None)]),
        ),
        row(
            "initialize notification in a batch",
            br#"[{"jsonrpc":"2.0","method":"initialize","params":{}}]"#,
            Outcome::Batch(vec![notif_p("initialize", "{}")]),
        ),
        row(
            "truncated batch",
            br#"[{"jsonrpc":"2.0","method":"x"},"#,
            parse_error(),
        ),
        row(
            "batch with a syntax error inside an entry",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0",}]"#,
            parse_error(),
        ),
        row("batch with trailing garbage", &b"[1] x"[..], parse_error()),
        row(
            "batch with invalid UTF-8",
            b"[{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}]".to_vec(),
            parse_error(),
        ),
        // ---- size limits ---------------------------------------------------------------
        row("8 MiB line, default limit", huge.clone(), invalid(None)).mentions("exceeds"),
        row(
            "8 MiB line, 16 MiB limit",
            huge,
            req_p(1, "tools/call", huge_params),
        )
        .limits(big_limits),
        row("exactly at a small limit", &ping[..], req(1, "ping")).limits(tiny(ping.len())),
        row("one byte over a small limit", &ping[..], invalid(None))
            .limits(tiny(ping.len() - 1))
            .mentions("limit"),
    ]
}
