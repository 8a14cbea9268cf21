//! The tool of seed 000 (`evaluate-lisp` there): `evaluate`, code run in a persistent
//! session, here in [Rhai](https://rhai.rs) rather than Common Lisp.
//!
//! - **Persistence**: variables (a [`rhai::Scope`]) and functions (the accumulated
//!   function definitions, merged into each new script) survive from one call to the next
//!   of the same client session, keyed by [`ferry::server::Context::session_key`]; other
//!   sessions never see them. At most [`MAX_SESSIONS`] sessions are kept, the least
//!   recently used forgotten first ([`sessions`]).
//! - **Several instances** (Streamable HTTP over Redis): the session's state is also saved
//!   in its session data ([`ferry::server::SessionData`], [`shared`]) with a generation
//!   number; an instance whose copy is older reads it again before a script runs, and a
//!   script whose save loses to another instance's runs again on the newer state (up to
//!   [`MAX_SHARED_ATTEMPTS`] times), so a variable set through one instance is read
//!   through every other.
//! - **Transactions**: a script runs on a copy of its session's variables and functions,
//!   committed only when it succeeds; a failed, timed-out or cancelled script leaves the
//!   session as it was.
//! - **Sandbox** ([`sandbox`]): Rhai has no file, network or process access; `import`
//!   (the `no_module` feature) and `eval` are removed; operations, call depth, expression
//!   depth, string, array and map sizes, variables, functions, wall time and the memory
//!   the script's thread holds are limited (the constants below), and the request's
//!   cancellation stops a running script. The limits hold while a script loops, calls back
//!   from a native function or sleeps, so its thread ends with it.
//! - **Server-wide bounds**: at most [`MAX_RUNNING_SCRIPTS`] scripts run at once across all
//!   sessions, so together they hold at most [`MEMORY_BUDGET_BYTES`] (each one's
//!   [`MAX_MEMORY_BYTES`]); a call that finds them all taken waits up to [`QUEUE_WAIT`] for
//!   one, then gets a `SERVER-BUSY` tool error. A slot is held until the script's thread
//!   ends, not until its client stops waiting: a client that hangs up cancels its script,
//!   which ends at its next check and frees the slot.
//! - **Responsiveness**: each script runs on a thread of its own, so the server keeps
//!   answering other requests while one runs. Not `spawn_blocking`: the blocking pool's
//!   threads have tokio's default 2 MiB stack, and Rhai clones, prints and drops nested
//!   arrays recursively, so `let a = [1]; for i in 0..2000 { a = [a]; }` overflowed it
//!   and aborted the whole server. The thread has a [`STACK_BYTES`] stack, and what a
//!   session keeps is bounded in depth ([`MAX_KEPT_DEPTH`]) and size ([`MAX_KEPT_BYTES`])
//!   so that it is safe on any thread ([`measure`]).
//!
//! Results read as in seed 000: `=> 6`, preceded by what the script printed (`print`,
//! `debug`), one line each. Values are written as Rhai source would spell them (strings
//! quoted, `[1, 2]`, `#{"a": 1}`); a script whose value is unit (a statement such as
//! `let x = 1;` or a function definition) answers `=> ()`. Failures are `isError` results
//! in seed 000's layout, `[ERROR] KIND\nmessage\n\n[Position]\nline L, position P`
//! ([`report`]).

mod measure;
mod report;
mod sandbox;
mod sessions;
mod shared;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use ferry::protocol::types::CallToolResult;
use ferry::server::{ServerBuilder, ToolContext};
use rhai::packages::{Package, StandardPackage};
use schemars::JsonSchema;
use serde::Deserialize;

use sessions::Sessions;
use tokio::sync::Semaphore;

/// Sessions kept at once; beyond it the least recently used session is forgotten.
pub(crate) const MAX_SESSIONS: usize = 1024;
/// Wall-clock time one script may run.
pub(crate) const TIME_LIMIT: Duration = Duration::from_secs(5);
/// Rhai operations (roughly: expressions and statements evaluated) one script may run.
pub(crate) const MAX_OPERATIONS: u64 = 50_000_000;
/// Nested function calls (recursion depth).
pub(crate) const MAX_CALL_LEVELS: usize = 32;
/// Nesting of expressions at the top level of a script.
pub(crate) const MAX_EXPR_DEPTH: usize = 64;
/// Nesting of expressions inside function bodies.
pub(crate) const MAX_FUNCTION_EXPR_DEPTH: usize = 32;
/// Length of one string, in bytes.
pub(crate) const MAX_STRING_BYTES: usize = 1 << 20;
/// Elements of one array.
pub(crate) const MAX_ARRAY_LEN: usize = 100_000;
/// Properties of one object map.
pub(crate) const MAX_MAP_LEN: usize = 10_000;
/// Variables alive at once, the session's included.
pub(crate) const MAX_VARIABLES: usize = 256;
/// Functions a session may define (across all its calls).
pub(crate) const MAX_FUNCTIONS: usize = 1_000;
/// Nesting of arrays and maps in the variables a session keeps ([`measure`]).
pub(crate) const MAX_KEPT_DEPTH: usize = 128;
/// Estimated memory of the variables a session keeps ([`measure`]).
pub(crate) const MAX_KEPT_BYTES: usize = 16 << 20;
/// Heap memory one script's thread may hold at once ([`sandbox`]): the copy of its
/// session's variables (up to [`MAX_KEPT_BYTES`] as estimated, more in fact) and everything
/// the script makes. Rhai has no allocation limit of its own.
pub(crate) const MAX_MEMORY_BYTES: usize = 64 << 20;
/// Stack of the thread a script runs on (reserved, used as needed): Rhai recurses over
/// nested values, which the size limits allow to nest about [`MAX_ARRAY_LEN`] +
/// [`MAX_MAP_LEN`] levels within one script.
pub(crate) const STACK_BYTES: usize = 256 << 20;
/// Scripts running at once across all sessions ([`MEMORY_BUDGET_BYTES`] over
/// [`MAX_MEMORY_BYTES`]).
pub(crate) const MAX_RUNNING_SCRIPTS: usize = MEMORY_BUDGET_BYTES / MAX_MEMORY_BYTES;
/// Memory the running scripts may hold together.
pub(crate) const MEMORY_BUDGET_BYTES: usize = 384 << 20;
/// How long a call waits for one of the [`MAX_RUNNING_SCRIPTS`] before it is refused as
/// busy: one script's [`TIME_LIMIT`], within which every running script ends.
pub(crate) const QUEUE_WAIT: Duration = TIME_LIMIT;
/// The session data a shared session may keep (as JSON): its variables as estimated are
/// at most [`MAX_KEPT_BYTES`], and JSON spells some of them longer (a float, an escaped
/// character), plus the scripts that define its functions.
pub(crate) const MAX_SHARED_BYTES: usize = 32 << 20;
/// Length of the `code` argument, in bytes.
pub(crate) const MAX_CODE_BYTES: usize = 100_000;
/// Printed output kept per call, in bytes; the rest is dropped with a note.
pub(crate) const MAX_OUTPUT_BYTES: usize = 64 << 10;
/// Length of the written value, in bytes; the rest is cut with a note.
pub(crate) const MAX_VALUE_BYTES: usize = 64 << 10;

/// The arguments of `evaluate`.
#[derive(Deserialize, JsonSchema)]
struct EvaluateArgs {
    /// The Rhai code to evaluate (https://rhai.rs/book/). Variables and functions it
    /// defines stay available to later calls of the same session.
    code: String,
}

/// Register `evaluate`, with its own session store and its own [`MAX_RUNNING_SCRIPTS`].
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    let sessions = Arc::new(Sessions::new(MAX_SESSIONS));
    let running = Arc::new(Semaphore::new(MAX_RUNNING_SCRIPTS));
    // Made by the first evaluation: building it (and dropping it at exit) is a large part
    // of the start-up, which a server whose clients never evaluate should not pay.
    let package = Arc::new(OnceLock::new());
    builder.session_data_limit(MAX_SHARED_BYTES).tool(
        "evaluate",
        "Evaluate Rhai code in a persistent session: variables (`let x = 40;`) and functions \
         (`fn f(a) { a + 2 }`) defined in one call stay available to the next calls of the \
         same session. Answers `=> value`, after anything the code printed. Sandboxed: no \
         file, network or system access; time, operations, recursion and data sizes are \
         limited.",
        move |args: EvaluateArgs, cx: ToolContext| {
            let sessions = Arc::clone(&sessions);
            let package = Arc::clone(&package);
            let running = Arc::clone(&running);
            async move { evaluate(&sessions, &running, package, args.code, cx).await }
        },
    )
}

/// `scripts` run one after another in one new session, each as [`evaluate`] runs a call
/// (on a thread of its own with [`STACK_BYTES`], every limit, never cancelled) in a session
/// shared between instances, its state written and read back after each: the entry
/// point of the fuzz target that includes this file (`fuzz/checks/evaluate.rs`) and of
/// its corpus replay (`tests/fuzz_corpora.rs`); unused by the command itself.
#[cfg(any(test, feature = "fuzzing"))]
#[cfg_attr(test, allow(dead_code))]
pub(crate) fn fuzz_evaluate(scripts: Vec<String>) -> Vec<CallToolResult> {
    static PACKAGE: OnceLock<rhai::Shared<rhai::Module>> = OnceLock::new();
    let session = Sessions::new(1).get("fuzz");
    scripts
        .into_iter()
        .map(|code| {
            if code.len() > MAX_CODE_BYTES {
                return report::refused("CODE-TOO-LARGE", "the code is too large");
            }
            let session = Arc::clone(&session);
            std::thread::Builder::new()
                .name("ferry-evaluate".into())
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    let mut session = session.blocking_lock_owned();
                    let package = PACKAGE
                        .get_or_init(|| StandardPackage::new().as_shared_module())
                        .clone();
                    let deadline = Instant::now() + TIME_LIMIT;
                    let (engine, output) = sandbox::engine(package, deadline, || false);
                    // As a shared session whose every call runs on another instance:
                    // what a script keeps is written and read back before the next.
                    let result = session
                        .attempt(&engine, &code, true)
                        .and_then(|(value, next)| {
                            let text = next.text.as_ref().map(|(text, _)| text.clone());
                            let generation = session.generation() + 1;
                            session.commit(next, generation);
                            match text {
                                Some(text) => {
                                    session.adopt(&engine, generation, &text).map(|()| value)
                                }
                                None => Ok(value),
                            }
                        });
                    report::result(report::Evaluation {
                        output: output.take(),
                        result,
                    })
                })
                .expect("a thread")
                .join()
                .expect("the evaluation does not panic")
        })
        .collect()
}

/// Run `code` in the caller's session on a thread of its own, once one of the `running`
/// slots is free; in a session shared between instances, with the state the last call
/// saved, wherever it ran ([`shared`]).
async fn evaluate(
    sessions: &Sessions,
    running: &Arc<Semaphore>,
    package: Arc<OnceLock<rhai::Shared<rhai::Module>>>,
    code: String,
    cx: ToolContext,
) -> CallToolResult {
    if code.len() > MAX_CODE_BYTES {
        return report::refused(
            "CODE-TOO-LARGE",
            &format!(
                "the code is {} bytes; the limit is {MAX_CODE_BYTES}",
                code.len()
            ),
        );
    }
    let session = sessions.get(cx.session_key());
    // Calls of one session run one after another: each sees the last one's definitions.
    let mut session = session.lock_owned().await;
    let slot = tokio::select! {
        slot = tokio::time::timeout(QUEUE_WAIT, Arc::clone(running).acquire_owned()) => slot,
        () = cx.cancel.cancelled() => {
            return report::refused("CANCELLED", "the request was cancelled");
        }
    };
    let Ok(Ok(slot)) = slot else {
        return report::refused(
            "SERVER-BUSY",
            &format!(
                "{MAX_RUNNING_SCRIPTS} scripts are running, the most the server runs at once, \
                 and none ended within {} s; try again",
                QUEUE_WAIT.as_secs()
            ),
        );
    };
    let code = Arc::new(code);
    let data = cx.session_data();
    if !data.is_shared() {
        return match run(session, slot, package, code, cx, None).await {
            Ok(ran) => ran.report,
            Err(report) => report,
        };
    }
    let mut slot = slot;
    for attempt in 0..MAX_SHARED_ATTEMPTS {
        let store_failed = |e: ferry::server::DataError| {
            report::refused(
                "SESSION-STORE",
                &format!("the session's state could not be read or saved: {e}"),
            )
        };
        // The generation is small and read on every call; the state only when another
        // instance saved a newer one.
        let latest: u64 = match data.get(GENERATION_KEY).await {
            Ok(latest) => latest,
            Err(e) => return store_failed(e),
        };
        let saved = if latest == session.generation() {
            None
        } else {
            match data.get::<Saved>(STATE_KEY).await {
                Ok(saved) => Some(saved),
                Err(e) => return store_failed(e),
            }
        };
        let ran = run(
            session,
            slot,
            Arc::clone(&package),
            Arc::clone(&code),
            cx.clone(),
            saved,
        )
        .await;
        let Ran {
            report,
            next,
            session: back,
            slot: back_slot,
        } = match ran {
            Ok(ran) => ran,
            Err(report) => return report,
        };
        (session, slot) = (back, back_slot);
        let Some(next) = next else {
            return report;
        };
        let Some((text, _)) = &next.text else {
            let generation = session.generation();
            session.commit(next, generation);
            return report;
        };
        let base = session.generation();
        let generation = base + 1;
        // The generation first: an instance that reads it before the state is saved
        // reloads the state, and never keeps a copy older than what it read.
        if let Err(e) = data
            .update(GENERATION_KEY, |latest: &mut u64| {
                *latest = (*latest).max(generation);
            })
            .await
        {
            return store_failed(e);
        }
        let won = data
            .update(STATE_KEY, |saved: &mut Saved| {
                if saved.generation != base {
                    return false;
                }
                saved.generation = generation;
                saved.state.clone_from(text);
                true
            })
            .await;
        match won {
            Ok(true) => {
                session.commit(next, generation);
                return report;
            }
            // Another instance saved first: run again on what it saved, after a pause
            // that spreads the contenders out.
            Ok(false) => {
                drop(next);
                tokio::time::sleep(backoff(attempt)).await;
            }
            Err(ferry::server::DataError::TooLarge { limit }) => {
                return report::refused(
                    "SESSION-TOO-LARGE",
                    &format!(
                        "the script ran, but the session's state would take more than the \
                         {limit} bytes a shared session keeps; nothing was changed"
                    ),
                );
            }
            Err(e) => return store_failed(e),
        }
    }
    report::refused(
        "SESSION-CONTENDED",
        &format!(
            "calls of this session on other instances changed its state {MAX_SHARED_ATTEMPTS} \
             times while this one ran; nothing was changed, try again"
        ),
    )
}

/// What a session shared between instances keeps under [`STATE_KEY`].
#[derive(Default, serde::Serialize, Deserialize)]
struct Saved {
    /// Counts the saves; the same number is kept under [`GENERATION_KEY`].
    generation: u64,
    /// The variables and function scripts ([`shared::write`]); empty before the first.
    state: String,
}

/// The session-data key of the generation of a shared session's saved state.
const GENERATION_KEY: &str = "evaluate.generation";
/// The session-data key of a shared session's saved state.
const STATE_KEY: &str = "evaluate.state";
/// Runs of one call when other instances keep saving the session's state first.
const MAX_SHARED_ATTEMPTS: u32 = 20;

/// The pause before run `attempt + 2` of a call that lost to another instance: up to 1 ms
/// doubling to 32 ms, at random.
fn backoff(attempt: u32) -> Duration {
    let ceiling_us = 1_000u64 << attempt.min(5);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    Duration::from_micros(nanos % ceiling_us)
}

/// A finished run.
struct Ran {
    /// The call's result.
    report: CallToolResult,
    /// In a shared session, on success: what the session would become.
    next: Option<sessions::Next>,
    /// The session, back.
    session: tokio::sync::OwnedMutexGuard<sessions::Session>,
    /// The running slot, back: held by the thread while it runs, so that a call whose
    /// client hung up frees it only when its script ends.
    slot: tokio::sync::OwnedSemaphorePermit,
}

/// Run `code` in `session` on a thread of its own (after adopting `saved`, another
/// instance's state, when given); a local session commits on success.
async fn run(
    mut session: tokio::sync::OwnedMutexGuard<sessions::Session>,
    slot: tokio::sync::OwnedSemaphorePermit,
    package: Arc<OnceLock<rhai::Shared<rhai::Module>>>,
    code: Arc<String>,
    cx: ToolContext,
    saved: Option<Saved>,
) -> Result<Ran, CallToolResult> {
    let shared = cx.session_data().is_shared();
    let cancel = cx.cancel.clone();
    let (done, result) = tokio::sync::oneshot::channel();
    // Every Rhai value of the call is made, shown and dropped on this thread.
    let spawned = std::thread::Builder::new()
        .name("ferry-evaluate".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let package = package
                .get_or_init(|| StandardPackage::new().as_shared_module())
                .clone();
            let deadline = Instant::now() + TIME_LIMIT;
            let (engine, output) =
                sandbox::engine(package, deadline, move || cancel.is_cancelled());
            let adopted = match saved {
                Some(saved) => session.adopt(&engine, saved.generation, &saved.state),
                None => Ok(()),
            };
            let (result, next) =
                match adopted.and_then(|()| session.attempt(&engine, &code, shared)) {
                    Ok((value, next)) if shared => (Ok(value), Some(next)),
                    Ok((value, next)) => {
                        let generation = session.generation();
                        session.commit(next, generation);
                        (Ok(value), None)
                    }
                    Err(failure) => (Err(failure), None),
                };
            let report = report::result(report::Evaluation {
                output: output.take(),
                result,
            });
            // The script's values are gone with the engine (what `next` holds is bounded
            // in depth, safe to drop anywhere).
            drop(engine);
            // The receiver is gone if the request was cancelled: nobody to tell.
            let _ = done.send(Ran {
                report,
                next,
                session,
                slot,
            });
        });
    if let Err(e) = spawned {
        return Err(report::refused(
            "INTERNAL-ERROR",
            &format!("cannot start the evaluation: {e}"),
        ));
    }
    result
        .await
        .map_err(|_| report::refused("INTERNAL-ERROR", "the evaluation ended without a result"))
}
