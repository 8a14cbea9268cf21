//! The Rhai engine one `evaluate` call runs in: standard library only, limits set, output
//! captured, stopped at its deadline, when the request is cancelled, or when it holds too
//! much memory.
//!
//! Rhai checks its limits between operations and in some of its own functions only, so
//! every limit here is also held where Rhai alone would not:
//! - the deadline, the cancellation and the operation limit are checked on a count of
//!   operations of our own: Rhai restarts its count in each call of a function pointer by a
//!   native function (`a.map(|x| ...)`), and a check on that count was never reached;
//! - `sleep` is replaced by one that wakes up for the deadline and the cancellation (Rhai's
//!   blocks its thread, unchecked, for as long as asked);
//! - `replace` on strings checks the length of its result before building it;
//! - the size limits of strings, arrays and maps are checked on the variables every few
//!   milliseconds ([`SIZES_EVERY`]): after `m[key] = value` Rhai checks only `value`, so a
//!   loop adding keys to a map was bounded by time alone;
//! - the memory held by the script's thread, counted by the process's allocator
//!   ([`Counting`]), is checked after every operation against [`MAX_MEMORY_BYTES`]: the size
//!   limits bound each value, not what a script builds (many values, map keys, which Rhai
//!   does not count, or the results a native function collects from a callback).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rhai::{
    Dynamic, Engine, EvalAltResult, EvalContext, FLOAT, INT, ImmutableString, Module,
    NativeCallContext, Position, Shared,
};

use super::{
    MAX_ARRAY_LEN, MAX_CALL_LEVELS, MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH, MAX_FUNCTIONS,
    MAX_MAP_LEN, MAX_MEMORY_BYTES, MAX_OPERATIONS, MAX_OUTPUT_BYTES, MAX_STRING_BYTES,
    MAX_VARIABLES,
};

/// The termination token of a script that ran out of time.
pub(super) const TIMEOUT: &str = "TIMEOUT";
/// The termination token of a script whose request was cancelled.
pub(super) const CANCELLED: &str = "CANCELLED";
/// The termination token of a script that ran more than [`MAX_OPERATIONS`] operations.
pub(super) const OPERATIONS: &str = "OPERATIONS";
/// The termination token of a script that held more than [`MAX_MEMORY_BYTES`].
pub(super) const MEMORY: &str = "MEMORY";
/// How often (in operations) the deadline and the cancellation are checked, and whether
/// the sizes are due ([`SIZES_EVERY`]).
const CHECK_EVERY: u64 = 256;
/// The least time between two checks of the variables' sizes; a check that takes longer
/// waits four times its own duration, so that checking costs at most a fifth of the time.
const SIZES_EVERY: Duration = Duration::from_millis(1);
/// The longest `sleep` goes without looking at the cancellation.
const SLEEP_SLICE: Duration = Duration::from_millis(10);

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
/// [`Output`], and checks that terminate the script with [`TIMEOUT`] after `deadline`,
/// [`CANCELLED`] once `is_cancelled` says so, [`OPERATIONS`] or [`MEMORY`].
///
/// The engine must run scripts on the thread that made it: the memory it checks is that
/// thread's, counted from now.
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
    let watch = Arc::new(Watch {
        deadline,
        is_cancelled: Box::new(is_cancelled),
        operations: AtomicU64::new(0),
        memory_base: thread_held(),
        sizes_due: AtomicBool::new(false),
        next_sizes: Mutex::new(Instant::now() + SIZES_EVERY),
    });
    let progress = Arc::clone(&watch);
    engine.on_progress(move |_| progress.progress());
    let sizes = Arc::clone(&watch);
    // `on_var` is marked volatile, not deprecated.
    #[allow(deprecated)]
    engine.on_var(move |_, _, context| sizes.check_sizes(&context).map(|()| None));
    // Registered functions are found before the package's.
    let sleep = Arc::clone(&watch);
    engine.register_fn("sleep", move |seconds: INT| {
        sleep.sleep(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
    });
    let sleep = watch;
    engine.register_fn("sleep", move |seconds: FLOAT| {
        // Like Rhai's: no sleep for a negative, zero, subnormal, infinite or NaN time.
        if seconds.is_normal() && seconds > 0.0 {
            sleep.sleep(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
        } else {
            Ok(())
        }
    });
    engine.register_fn(
        "replace",
        |context: NativeCallContext<'_>,
         string: &mut ImmutableString,
         find: &str,
         substitute: &str| { replace(&context, string, find, substitute) },
    );
    engine.register_fn(
        "replace",
        |context: NativeCallContext<'_>,
         string: &mut ImmutableString,
         find: char,
         substitute: &str| {
            replace(&context, string, find.encode_utf8(&mut [0; 4]), substitute)
        },
    );
    let output = Output::default();
    let print = output.clone();
    engine.on_print(move |text| print.push_line(text));
    let debug = output.clone();
    engine.on_debug(move |text, _source, _position| debug.push_line(text));
    (engine, output)
}

/// The limits of one script and what its checks remember, shared by the engine's callbacks.
struct Watch {
    /// When the script runs out of time.
    deadline: Instant,
    /// Whether the request was cancelled.
    is_cancelled: Box<dyn Fn() -> bool + Send + Sync>,
    /// Operations run so far.
    operations: AtomicU64,
    /// What the thread held ([`thread_held`]) before the script.
    memory_base: isize,
    /// The variables' sizes are to be checked at the next access to a variable.
    sizes_due: AtomicBool,
    /// When they are due next.
    next_sizes: Mutex<Instant>,
}

impl Watch {
    /// After each operation: the termination token of a script past a limit, if it is.
    fn progress(&self) -> Option<Dynamic> {
        // Only the script's thread counts: a load and a store, cheaper than `fetch_add`.
        let operations = self.operations.load(Ordering::Relaxed) + 1;
        self.operations.store(operations, Ordering::Relaxed);
        if thread_held().wrapping_sub(self.memory_base) > MAX_MEMORY_BYTES.cast_signed() {
            return Some(Dynamic::from(MEMORY));
        }
        if operations > MAX_OPERATIONS {
            return Some(Dynamic::from(OPERATIONS));
        }
        if !operations.is_multiple_of(CHECK_EVERY) {
            return None;
        }
        if (self.is_cancelled)() {
            return Some(Dynamic::from(CANCELLED));
        }
        let now = Instant::now();
        if now >= self.deadline {
            return Some(Dynamic::from(TIMEOUT));
        }
        let next_sizes = *self
            .next_sizes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if now >= next_sizes {
            self.sizes_due.store(true, Ordering::Relaxed);
        }
        None
    }

    /// At an access to a variable: if due, check that the variables in `context` (and
    /// `this`) are within the size limits of strings, arrays and maps.
    fn check_sizes(
        &self,
        context: &EvalContext<'_, '_, '_, '_, '_, '_>,
    ) -> Result<(), Box<EvalAltResult>> {
        // Called at every access to a variable: a load, not a `swap`, when nothing is due.
        if !self.sizes_due.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.sizes_due.store(false, Ordering::Relaxed);
        let started = Instant::now();
        let engine = context.engine();
        let checked = context
            .scope()
            .iter_raw()
            .map(|(_, _, value)| value)
            .chain(context.this_ptr())
            .try_for_each(|value| engine.ensure_data_size_within_limits(value));
        let now = Instant::now();
        *self
            .next_sizes
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = now + SIZES_EVERY.max((now - started) * 4);
        checked
    }

    /// Rhai's `sleep`, cut short with an error at the deadline or the cancellation.
    fn sleep(&self, duration: Duration) -> Result<(), Box<EvalAltResult>> {
        let end = Instant::now().checked_add(duration);
        loop {
            if (self.is_cancelled)() {
                return Err(terminated(CANCELLED));
            }
            let now = Instant::now();
            if end.is_some_and(|end| now >= end) {
                return Ok(());
            }
            if now >= self.deadline {
                return Err(terminated(TIMEOUT));
            }
            let wake = end.map_or(self.deadline, |end| end.min(self.deadline));
            std::thread::sleep((wake - now).min(SLEEP_SLICE));
        }
    }
}

/// The error that stops a script with `token`.
fn terminated(token: &'static str) -> Box<EvalAltResult> {
    EvalAltResult::ErrorTerminated(Dynamic::from(token), Position::NONE).into()
}

/// Rhai's `replace` of `find` by `substitute` in `string`, refused before it is built if
/// the result would be longer than [`MAX_STRING_BYTES`] (Rhai checks the string after,
/// when up to a million times that length may have been allocated).
fn replace(
    context: &NativeCallContext<'_>,
    string: &mut ImmutableString,
    find: &str,
    substitute: &str,
) -> Result<(), Box<EvalAltResult>> {
    // Like Rhai's: an empty string stays empty (even when `find` is empty too).
    if string.is_empty() {
        return Ok(());
    }
    let found = string.matches(find).count();
    let length =
        (string.len() - found * find.len()).saturating_add(found.saturating_mul(substitute.len()));
    if length > MAX_STRING_BYTES {
        return Err(EvalAltResult::ErrorDataTooLarge(
            "Length of string".into(),
            context.call_position(),
        )
        .into());
    }
    *string = string.replace(find, substitute).into();
    Ok(())
}

/// The process's allocator: the system's, counting for each thread the bytes it allocated
/// less those it freed ([`thread_held`]), so that a script's memory can be checked.
#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// [`System`], with a count of the bytes each thread holds.
struct Counting;

thread_local! {
    /// Bytes allocated by this thread less bytes it freed (a thread may free what another
    /// allocated, so only differences on one thread mean something).
    static HELD: Cell<isize> = const { Cell::new(0) };
}

/// The bytes the current thread holds, by [`HELD`].
fn thread_held() -> isize {
    HELD.try_with(Cell::get).unwrap_or(0)
}

/// Add `bytes` to [`HELD`]. Never panics (an allocator must not): a constant thread-local
/// without destructor is always accessible, and the sum wraps.
fn count(bytes: isize) {
    let _ = HELD.try_with(|held| held.set(held.get().wrapping_add(bytes)));
}

// The one use of `unsafe` in the command: `GlobalAlloc` is an unsafe trait. Every call is
// passed to `System` unchanged, with the caller's guarantees.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are `System::alloc`'s.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size().cast_signed());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size().cast_signed());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation is).
        unsafe { System.dealloc(ptr, layout) };
        count(-layout.size().cast_signed());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and the caller's guarantees for `new_size`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(
                new_size
                    .cast_signed()
                    .wrapping_sub(layout.size().cast_signed()),
            );
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use rhai::packages::{Package, StandardPackage};

    use super::*;

    /// A sandboxed engine whose deadline is `time` from now.
    fn engine_for(time: Duration, cancelled: bool) -> Engine {
        let package = StandardPackage::new().as_shared_module();
        engine(package, Instant::now() + time, move || cancelled).0
    }

    /// How `code` failed: its termination token, or its error message.
    fn failure(engine: &Engine, code: &str) -> String {
        let error = engine.eval::<Dynamic>(code).expect_err(code);
        match error.unwrap_inner() {
            EvalAltResult::ErrorTerminated(token, _) => token.to_string(),
            inner => inner.to_string(),
        }
    }

    #[test]
    fn sleep_ends_at_the_deadline_or_the_cancellation() {
        let short = engine_for(Duration::from_secs(5), false);
        assert_eq!(
            short
                .eval::<INT>("sleep(0.01); sleep(0); sleep(-1); 1")
                .unwrap(),
            1
        );
        for code in [
            "sleep(100000)",
            "sleep(1e300)",
            "Fn(\"sleep\").call(100000)",
        ] {
            let started = Instant::now();
            let engine = engine_for(Duration::from_millis(100), false);
            assert_eq!(failure(&engine, code), TIMEOUT);
            assert!(started.elapsed() < Duration::from_secs(2), "{code}");
            let started = Instant::now();
            let engine = engine_for(Duration::from_secs(5), true);
            assert_eq!(failure(&engine, code), CANCELLED);
            assert!(started.elapsed() < Duration::from_secs(2), "{code}");
        }
    }

    #[test]
    fn callbacks_of_native_functions_are_checked() {
        // Rhai restarts its count of operations in each callback of `map`.
        let nested = "let a = []; a.pad(10000, 0); \
            a.map(|x| { let b = []; b.pad(10000, 0); b.map(|y| y + 1); x }).len()";
        let started = Instant::now();
        let engine = engine_for(Duration::from_millis(100), false);
        assert_eq!(failure(&engine, nested), TIMEOUT);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(
            failure(&engine_for(Duration::from_secs(5), true), nested),
            CANCELLED
        );
    }

    #[test]
    fn sizes_and_memory_are_checked_while_a_script_loops() {
        let engine = engine_for(Duration::from_secs(5), false);
        let map = "let m = #{}; let i = 0; loop { m[`${i}`] = i; i += 1; }";
        assert!(failure(&engine, map).starts_with("Size of object map too large"));
        let keys = "let k = \"k\"; k.pad(100000, \"k\"); let m = #{}; let i = 0; \
            loop { m[k + i] = i; i += 1; }";
        assert_eq!(failure(&engine, keys), MEMORY);
    }

    #[test]
    fn replace_is_rhai_s_within_the_string_limit() {
        let sandboxed = engine_for(Duration::from_secs(5), false);
        let plain = Engine::new();
        for code in [
            r#"let s = "hello, world"; s.replace("o", "00"); s"#,
            r#"let s = "hello"; s.replace("", "-"); s"#,
            r#"let s = "hello"; s.replace('l', "LL"); s"#,
            r#"let s = "héllo"; s.replace("é", ""); s"#,
            r#"let s = ""; s.replace("", "x"); s"#,
        ] {
            assert_eq!(
                sandboxed.eval::<String>(code).unwrap(),
                plain.eval::<String>(code).unwrap(),
                "{code}"
            );
        }
        let long = r#"let s = "a"; s.pad(2000, "a"); s.replace("a", s); s"#;
        assert!(failure(&sandboxed, long).starts_with("Length of string too large"));
        let long = r#"let s = "a"; s.pad(2000, "a"); s.replace('a', s); s"#;
        assert!(failure(&sandboxed, long).starts_with("Length of string too large"));
    }
}
