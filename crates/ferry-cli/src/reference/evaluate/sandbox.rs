//! The Rhai engine one `evaluate` call runs in: standard library only, limits set, output
//! captured, stopped at its deadline or when the request is cancelled.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rhai::{Dynamic, Engine, Module, Shared};

use super::{
    MAX_ARRAY_LEN, MAX_CALL_LEVELS, MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH, MAX_FUNCTIONS,
    MAX_MAP_LEN, MAX_OPERATIONS, MAX_OUTPUT_BYTES, MAX_STRING_BYTES, MAX_VARIABLES,
};

/// The termination token of a script that ran out of time.
pub(super) const TIMEOUT: &str = "TIMEOUT";
/// The termination token of a script whose request was cancelled.
pub(super) const CANCELLED: &str = "CANCELLED";
/// How often (in operations) the deadline and the cancellation are checked.
const CHECK_EVERY: u64 = 256;

/// What a script printed, shared with the engine's `print` and `debug` callbacks.
#[derive(Clone, Default)]
pub(super) struct Output(Arc<Mutex<Captured>>);

/// The captured text and whether some was dropped.
#[derive(Default)]
struct Captured {
    /// One line per `print` or `debug`, each ending in `\n`.
    text: String,
    /// Output beyond [`MAX_OUTPUT_BYTES`] was dropped.
    truncated: bool,
}

impl Output {
    /// Record one printed line, unless the output is full.
    fn push_line(&self, line: &str) {
        let mut captured = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if captured.truncated {
            return;
        }
        if captured.text.len() + line.len() + 1 > MAX_OUTPUT_BYTES {
            captured.truncated = true;
            return;
        }
        captured.text.push_str(line);
        captured.text.push('\n');
    }

    /// Everything printed so far (with a note if some was dropped), emptying the output.
    pub(super) fn take(&self) -> String {
        let mut captured = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut text = std::mem::take(&mut captured.text);
        if std::mem::take(&mut captured.truncated) {
            text.push_str(&format!(
                "[output truncated: more than {MAX_OUTPUT_BYTES} bytes]\n"
            ));
        }
        text
    }
}

/// An engine with the standard `package`, every limit, `eval` removed (`import` is
/// compiled out by the `no_module` feature), output captured into the returned
/// [`Output`], and a progress check that terminates the script with [`TIMEOUT`] after
/// `deadline` or [`CANCELLED`] once `is_cancelled` says so.
pub(super) fn engine(
    package: Shared<Module>,
    deadline: Instant,
    is_cancelled: impl Fn() -> bool + Send + Sync + 'static,
) -> (Engine, Output) {
    let mut engine = Engine::new_raw();
    engine.register_global_module(package);
    // `eval` would compile code at run time, outside the checks made on `code`.
    engine.disable_symbol("eval");
    engine
        .set_max_operations(MAX_OPERATIONS)
        .set_max_call_levels(MAX_CALL_LEVELS)
        .set_max_expr_depths(MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH)
        .set_max_string_size(MAX_STRING_BYTES)
        .set_max_array_size(MAX_ARRAY_LEN)
        .set_max_map_size(MAX_MAP_LEN)
        .set_max_variables(MAX_VARIABLES)
        .set_max_functions(MAX_FUNCTIONS);
    engine.on_progress(move |operations| {
        if operations % CHECK_EVERY != 0 {
            None
        } else if is_cancelled() {
            Some(Dynamic::from(CANCELLED))
        } else if Instant::now() >= deadline {
            Some(Dynamic::from(TIMEOUT))
        } else {
            None
        }
    });
    let output = Output::default();
    let print = output.clone();
    engine.on_print(move |text| print.push_line(text));
    let debug = output.clone();
    engine.on_debug(move |text, _source, _position| debug.push_line(text));
    (engine, output)
}
