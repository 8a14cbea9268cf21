//! How an `evaluate` call reads: `=> value` after the printed output, or seed 000's error
//! layout `[ERROR] KIND\nmessage\n\n[Position]\nline L, position P` (the position is the
//! place in the submitted code; a failure inside a function names the function calls and
//! the place inside the function's own definition in the message).

use ferry::protocol::types::{CallToolResult, ContentBlock};
use rhai::{Dynamic, EvalAltResult, Position};

use super::measure::{self, Excess};
use super::sandbox::{CANCELLED, MEMORY, OPERATIONS};
use super::sessions::Failure;
use super::{
    MAX_CALL_LEVELS, MAX_FUNCTIONS, MAX_KEPT_BYTES, MAX_KEPT_DEPTH, MAX_MEMORY_BYTES,
    MAX_OPERATIONS, MAX_VALUE_BYTES, MAX_VARIABLES, TIME_LIMIT,
};

/// The outcome of one script.
pub(super) struct Evaluation {
    /// What it printed, one line per `print` or `debug`, each ending in `\n`.
    pub(super) output: String,
    /// Its value, or why it has none.
    pub(super) result: Result<Dynamic, Failure>,
}

/// The tool result of `evaluation`: one text block `output=> value`; on failure an
/// `isError` result whose first block is the error and, if the script printed anything
/// before failing, a second block `[Output]\n...`.
pub(super) fn result(evaluation: Evaluation) -> CallToolResult {
    let Evaluation { output, result } = evaluation;
    match result {
        Ok(value) => CallToolResult::success(vec![ContentBlock::text(format!(
            "{output}=> {}",
            write_value(&value)
        ))]),
        Err(failure) => {
            let (kind, message, position) = describe(failure);
            let mut text = format!("[ERROR] {kind}\n{message}");
            match (position.line(), position.position()) {
                (Some(line), Some(column)) => {
                    text.push_str(&format!("\n\n[Position]\nline {line}, position {column}"));
                }
                (Some(line), None) => text.push_str(&format!("\n\n[Position]\nline {line}")),
                _ => {}
            }
            let mut content = vec![ContentBlock::text(text)];
            if !output.is_empty() {
                content.push(ContentBlock::text(format!("[Output]\n{output}")));
            }
            CallToolResult {
                content,
                is_error: Some(true),
                ..Default::default()
            }
        }
    }
}

/// An `isError` result for a call refused before any script ran.
pub(super) fn refused(kind: &str, message: &str) -> CallToolResult {
    CallToolResult::error(format!("[ERROR] {kind}\n{message}"))
}

/// `value` as Rhai source spells it (strings quoted), cut at [`MAX_VALUE_BYTES`]; a
/// value nested deeper than [`MAX_KEPT_DEPTH`] is described rather than written.
fn write_value(value: &Dynamic) -> String {
    if measure::too_deep(value, MAX_KEPT_DEPTH) {
        return format!(
            "<{} nested more than {MAX_KEPT_DEPTH} levels deep>",
            value.type_name()
        );
    }
    cut(format!("{value:?}"))
}

/// `text` cut at [`MAX_VALUE_BYTES`] (on a character boundary), with a note.
fn cut(mut text: String) -> String {
    if text.len() > MAX_VALUE_BYTES {
        let mut end = MAX_VALUE_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let total = text.len();
        text.truncate(end);
        text.push_str(&format!(" ... [truncated: {total} bytes in all]"));
    }
    text
}

/// The kind, message and position (in the submitted code) of `failure`.
fn describe(failure: Failure) -> (String, String, Position) {
    match failure {
        Failure::TooManyFunctions(defined) => (
            "TOO-MANY-FUNCTIONS".into(),
            format!("the session would define {defined} functions; the limit is {MAX_FUNCTIONS}"),
            Position::NONE,
        ),
        Failure::NotKept(Excess::TooDeep) => (
            "VALUE-TOO-DEEP".into(),
            format!(
                "the script ran, but its variables nest arrays or maps more than \
                 {MAX_KEPT_DEPTH} levels deep and cannot be kept; nothing was changed"
            ),
            Position::NONE,
        ),
        Failure::NotKept(Excess::TooLarge(bytes)) => (
            "SESSION-TOO-LARGE".into(),
            format!(
                "the script ran, but its variables would take over {bytes} bytes (the limit \
                 is {MAX_KEPT_BYTES}) and cannot be kept; nothing was changed"
            ),
            Position::NONE,
        ),
        Failure::NotShared(name, kind) => (
            "NOT-SHAREABLE".into(),
            format!(
                "the script ran, but `{name}` holds a {kind}, which a session shared between \
                 server instances cannot keep; nothing was changed"
            ),
            Position::NONE,
        ),
        Failure::Unreadable(why) => (
            "SESSION-UNREADABLE".into(),
            format!("the session's state saved by another server instance cannot be read: {why}"),
            Position::NONE,
        ),
        Failure::Script(mut error) => {
            let position = error.take_position();
            let kind = kind(error.unwrap_inner());
            let message = message(&error, &kind);
            (kind, message, position)
        }
    }
}

/// The upper-case kind of `error` (an innermost error, not a function-call wrapper).
fn kind(error: &EvalAltResult) -> String {
    use EvalAltResult as E;
    let kind = match error {
        E::ErrorParsing(..) => "PARSE-ERROR",
        E::ErrorVariableExists(..) => "VARIABLE-EXISTS",
        E::ErrorForbiddenVariable(..) => "FORBIDDEN-VARIABLE",
        E::ErrorVariableNotFound(..) => "VARIABLE-NOT-FOUND",
        E::ErrorPropertyNotFound(..) => "PROPERTY-NOT-FOUND",
        E::ErrorIndexNotFound(..) => "INDEX-NOT-FOUND",
        E::ErrorFunctionNotFound(..) => "FUNCTION-NOT-FOUND",
        E::ErrorModuleNotFound(..) => "MODULE-NOT-FOUND",
        E::ErrorUnboundThis(..) => "UNBOUND-THIS",
        E::ErrorMismatchDataType(..) | E::ErrorMismatchOutputType(..) => "TYPE-ERROR",
        E::ErrorIndexingType(..) => "NOT-INDEXABLE",
        E::ErrorArrayBounds(..) | E::ErrorStringBounds(..) | E::ErrorBitFieldBounds(..) => {
            "INDEX-OUT-OF-BOUNDS"
        }
        E::ErrorFor(..) => "NOT-ITERABLE",
        E::ErrorNonPureMethodCallOnConstant(..) | E::ErrorAssignmentToConstant(..) => {
            "ASSIGNMENT-TO-CONSTANT"
        }
        E::ErrorDotExpr(..) => "PROPERTY-ERROR",
        E::ErrorArithmetic(message, ..) if message.contains("by zero") => "DIVISION-BY-ZERO",
        E::ErrorArithmetic(..) => "ARITHMETIC-ERROR",
        E::ErrorTooManyOperations(..) => "TOO-MANY-OPERATIONS",
        E::ErrorTooManyVariables(..) => "TOO-MANY-VARIABLES",
        E::ErrorStackOverflow(..) => "STACK-OVERFLOW",
        E::ErrorDataTooLarge(..) => "DATA-TOO-LARGE",
        E::ErrorTerminated(token, ..) => match token.to_string().as_str() {
            CANCELLED => "CANCELLED",
            OPERATIONS => "TOO-MANY-OPERATIONS",
            MEMORY => "MEMORY-LIMIT",
            _ => "TIMEOUT",
        },
        E::ErrorRuntime(..) => "RUNTIME-ERROR",
        E::LoopBreak(..) => "BREAK-OUTSIDE-LOOP",
        _ => "EVALUATION-ERROR",
    };
    kind.into()
}

/// The message of `error` (its outermost position already taken): the innermost error,
/// then the function calls it happened in, innermost first, repeated calls counted.
fn message(error: &EvalAltResult, kind: &str) -> String {
    match kind {
        "TOO-MANY-OPERATIONS" => {
            return format!("the script ran more than {MAX_OPERATIONS} operations");
        }
        "TIMEOUT" => {
            return format!(
                "the script ran longer than the time limit of {} s",
                TIME_LIMIT.as_secs_f64()
            );
        }
        "CANCELLED" => return "the client cancelled the request".into(),
        "MEMORY-LIMIT" => {
            return format!(
                "the script held more than {} MiB of memory at once",
                MAX_MEMORY_BYTES >> 20
            );
        }
        "STACK-OVERFLOW" => {
            return format!("function calls nested deeper than {MAX_CALL_LEVELS} levels");
        }
        "TOO-MANY-VARIABLES" => {
            return format!("more than {MAX_VARIABLES} variables are defined at once");
        }
        _ => {}
    }
    let mut calls: Vec<(String, usize)> = Vec::new();
    let mut inner = error;
    while let EvalAltResult::ErrorInFunctionCall(name, _source, next, _) = inner {
        let name = if name.starts_with("anon$") {
            "an anonymous function".to_owned()
        } else {
            format!("function '{name}'")
        };
        match calls.last_mut() {
            Some((last, count)) if *last == name => *count += 1,
            _ => calls.push((name, 1)),
        }
        inner = next;
    }
    let mut text = cut(inner.to_string());
    for (name, count) in calls.iter().rev() {
        text.push_str(&format!("\nin call to {name}"));
        if *count > 1 {
            text.push_str(&format!(" ({count} nested calls)"));
        }
    }
    text
}
