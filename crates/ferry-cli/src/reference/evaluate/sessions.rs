//! Per-session state of `evaluate`: the variables and functions a client has defined, kept
//! in a bounded map that forgets the least recently used session first.
//!
//! There is no signal when a connection ends, so a session's state lives until
//! [`MAX_SESSIONS`](super::MAX_SESSIONS) newer sessions have been used since (with
//! stdio, one connection per process, that is the process's lifetime). A session
//! forgotten while one of its scripts runs finishes that script on its own copy; its
//! next call starts afresh.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rhai::{AST, Dynamic, Engine, EvalAltResult, Scope};

use super::measure::{self, Excess};
use super::{MAX_FUNCTIONS, MAX_KEPT_BYTES, MAX_KEPT_DEPTH};

/// Why a script produced no value.
#[derive(Debug)]
pub(super) enum Failure {
    /// Rhai refused or stopped it (parse error, run-time error, a limit).
    Script(Box<EvalAltResult>),
    /// The session would have more than [`MAX_FUNCTIONS`] functions (their number).
    TooManyFunctions(usize),
    /// The script succeeded but its variables cannot be kept ([`measure`]).
    NotKept(Excess),
}

impl From<Box<EvalAltResult>> for Failure {
    fn from(error: Box<EvalAltResult>) -> Self {
        Failure::Script(error)
    }
}

impl From<rhai::ParseError> for Failure {
    fn from(error: rhai::ParseError) -> Self {
        Failure::Script(error.into())
    }
}

/// What one session has defined.
#[derive(Default)]
pub(super) struct Session {
    /// Its variables and constants.
    scope: Scope<'static>,
    /// Its functions: an AST with function definitions and no statements.
    functions: AST,
}

impl Session {
    /// Run `code` with this session's definitions; commit the variables and functions it
    /// leaves only if it succeeds and they can be kept, so a failure changes nothing.
    pub(super) fn run(&mut self, engine: &Engine, code: &str) -> Result<Dynamic, Failure> {
        let mut scope = self.scope.clone();
        let ast = engine.compile_with_scope(&scope, code)?;
        // Functions of this script replace earlier ones of the same name and arity.
        let program = self.functions.merge(&ast);
        let defined = program.iter_functions().count();
        if defined > MAX_FUNCTIONS {
            return Err(Failure::TooManyFunctions(defined));
        }
        let value = engine.eval_ast_with_scope::<Dynamic>(&mut scope, &program)?;
        // The sizes are checked during the run only every few milliseconds (after
        // `m[key] = value` Rhai checks `value` alone): a script ending just after its last
        // growth fails here, whatever the timing.
        for value in scope.iter_raw().map(|(_, _, value)| value).chain([&value]) {
            engine.ensure_data_size_within_limits(value)?;
        }
        measure::check_scope(&scope, MAX_KEPT_DEPTH, MAX_KEPT_BYTES).map_err(Failure::NotKept)?;
        self.scope = scope;
        self.functions = program.clone_functions_only();
        Ok(value)
    }
}

/// The sessions, by session key, at most `capacity` of them.
pub(super) struct Sessions {
    /// The map and its clock.
    inner: Mutex<Lru>,
    /// The most sessions kept.
    capacity: usize,
}

/// A map whose entries remember when they were last used.
#[derive(Default)]
struct Lru {
    /// Sessions by key, each with the tick of its last use.
    entries: HashMap<String, (Arc<tokio::sync::Mutex<Session>>, u64)>,
    /// Counts uses; the smallest tick is the least recently used entry.
    tick: u64,
}

impl Sessions {
    /// An empty store keeping at most `capacity` sessions (at least one).
    pub(super) fn new(capacity: usize) -> Self {
        Sessions {
            inner: Mutex::default(),
            capacity: capacity.max(1),
        }
    }

    /// The session of `key`, created empty if it is new (forgetting the least recently
    /// used session when the store is full).
    pub(super) fn get(&self, key: &str) -> Arc<tokio::sync::Mutex<Session>> {
        let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        lru.tick += 1;
        let tick = lru.tick;
        if let Some((session, used)) = lru.entries.get_mut(key) {
            *used = tick;
            return Arc::clone(session);
        }
        if lru.entries.len() >= self.capacity {
            // O(capacity), only when a new session arrives at a full store.
            let oldest = lru
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                lru.entries.remove(&oldest);
            }
        }
        let session = Arc::new(tokio::sync::Mutex::new(Session::default()));
        lru.entries
            .insert(key.to_owned(), (Arc::clone(&session), tick));
        session
    }

    /// How many sessions are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use rhai::packages::{Package, StandardPackage};

    use super::super::sandbox;
    use super::*;

    /// A sandboxed engine with a distant deadline, never cancelled.
    fn engine() -> Engine {
        let package = StandardPackage::new().as_shared_module();
        sandbox::engine(package, Instant::now() + Duration::from_secs(5), || false).0
    }

    #[test]
    fn definitions_persist_and_failures_change_nothing() {
        let engine = engine();
        let mut session = Session::default();
        assert!(
            session
                .run(&engine, "let x = 40; fn f(a) { a + 2 }")
                .is_ok()
        );
        assert_eq!(session.run(&engine, "f(x)").unwrap().as_int(), Ok(42));
        // A failing script's assignments and definitions are rolled back.
        let failed = session.run(&engine, "x = 1; let y = 2; fn f(a) { 0 } throw \"no\"");
        assert!(failed.is_err());
        assert_eq!(session.run(&engine, "f(x)").unwrap().as_int(), Ok(42));
        assert!(session.run(&engine, "y").is_err(), "y was not committed");
        // Values too deep to keep are refused, and leave nothing behind either.
        let deep = session.run(&engine, "let d = [1]; for i in 0..200 { d = [d]; } x = 0;");
        assert!(
            matches!(deep, Err(Failure::NotKept(Excess::TooDeep))),
            "{deep:?}"
        );
        assert!(session.run(&engine, "d").is_err());
        // A parse error too.
        assert!(session.run(&engine, "x = ").is_err());
        assert_eq!(session.run(&engine, "x").unwrap().as_int(), Ok(40));
    }

    #[test]
    fn later_definitions_replace_earlier_ones() {
        let engine = engine();
        let mut session = Session::default();
        assert!(session.run(&engine, "fn f(a) { a }  fn g() { 1 }").is_ok());
        assert!(session.run(&engine, "fn f(a) { a * 2 }").is_ok());
        assert_eq!(session.run(&engine, "f(4) + g()").unwrap().as_int(), Ok(9));
    }

    #[test]
    fn the_least_recently_used_session_is_forgotten() {
        let sessions = Sessions::new(2);
        let a = sessions.get("a");
        let _b = sessions.get("b");
        assert!(
            Arc::ptr_eq(&a, &sessions.get("a")),
            "a is now the most recent"
        );
        let _c = sessions.get("c"); // evicts b
        assert_eq!(sessions.len(), 2);
        assert!(Arc::ptr_eq(&a, &sessions.get("a")));
        assert!(!Arc::ptr_eq(&_b, &sessions.get("b")), "b was forgotten");
    }
}
