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
use super::shared::{self, Source};
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
    /// The script succeeded but a variable (its name, then its type) cannot be kept in a
    /// session shared between instances ([`shared`]).
    NotShared(String, String),
    /// The state another instance saved for the session could not be read (why).
    Unreadable(String),
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
    /// In a shared session, the scripts that define [`Self::functions`].
    sources: Vec<Source>,
    /// In a shared session, the generation of the saved state this copy holds (0: none).
    generation: u64,
    /// In a shared session, a hash of that state's text: a script that changes nothing
    /// saves nothing.
    saved: u64,
}

/// The definitions a successful script leaves, not yet the session's.
pub(super) struct Next {
    scope: Scope<'static>,
    functions: AST,
    sources: Vec<Source>,
    /// In a shared session, the text to save and its hash, or `None` when it is the
    /// state already saved.
    pub(super) text: Option<(String, u64)>,
}

impl Session {
    /// Run `code` with this session's definitions; commit the variables and functions it
    /// leaves only if it succeeds and they can be kept, so a failure changes nothing.
    #[cfg(test)]
    fn run(&mut self, engine: &Engine, code: &str) -> Result<Dynamic, Failure> {
        let (value, next) = self.attempt(engine, code, false)?;
        self.commit(next, self.generation);
        Ok(value)
    }

    /// Run `code` on a copy of this session's definitions and return its value and what
    /// the session would become; with `shared`, also that state's text.
    pub(super) fn attempt(
        &self,
        engine: &Engine,
        code: &str,
        shared: bool,
    ) -> Result<(Dynamic, Next), Failure> {
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
        let mut next = Next {
            scope,
            functions: program.clone_functions_only(),
            sources: Vec::new(),
            text: None,
        };
        if shared {
            next.sources = self.sources.clone();
            let defines = shared::defined(&ast);
            if !defines.is_empty() {
                shared::add_source(&mut next.sources, code, defines);
            }
            let text = shared::write(&next.scope, &next.sources)
                .map_err(|(name, kind)| Failure::NotShared(name, kind))?;
            let hash = hash(&text);
            if hash != self.saved {
                next.text = Some((text, hash));
            }
        }
        Ok((value, next))
    }

    /// Make `next` this session's definitions, as of saved `generation`.
    pub(super) fn commit(&mut self, next: Next, generation: u64) {
        self.scope = next.scope;
        self.functions = next.functions;
        self.sources = next.sources;
        if let Some((_, hash)) = next.text {
            self.saved = hash;
        }
        self.generation = generation;
    }

    /// The generation of the saved state this copy holds (0: none yet).
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Replace this copy with saved state `text` of `generation` (another instance's), its
    /// scripts compiled with `engine`.
    pub(super) fn adopt(
        &mut self,
        engine: &Engine,
        generation: u64,
        text: &str,
    ) -> Result<(), Failure> {
        let (scope, functions, sources) = if text.is_empty() {
            Default::default()
        } else {
            shared::read(engine, text).map_err(Failure::Unreadable)?
        };
        *self = Session {
            scope,
            functions,
            sources,
            generation,
            saved: hash(text),
        };
        Ok(())
    }
}

/// A hash of a saved state's text.
fn hash(text: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(text)
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
    fn a_shared_state_is_taken_up_elsewhere() {
        let engine = engine();
        let mut here = Session::default();
        let (_, next) = here
            .attempt(&engine, "let x = 40; fn f(a) { a + 2 } fn g() { 0 }", true)
            .unwrap();
        here.commit(next, 1);
        let (_, next) = here.attempt(&engine, "fn g() { 1 }", true).unwrap();
        let (text, _) = next.text.clone().expect("a changed state is saved");
        here.commit(next, 2);
        // Nothing changed: nothing to save.
        let (_, next) = here.attempt(&engine, "f(x)", true).unwrap();
        assert!(next.text.is_none());
        let mut there = Session::default();
        there.adopt(&engine, 2, &text).unwrap();
        assert_eq!(there.generation(), 2);
        let (value, next) = there.attempt(&engine, "f(x) + g()", true).unwrap();
        assert_eq!(value.as_int(), Ok(43));
        assert!(next.text.is_none(), "the state read is the state saved");
        // What another instance wrote wrongly is reported, and changes nothing.
        assert!(matches!(
            there.adopt(&engine, 3, "{\"v\": 1}"),
            Err(Failure::Unreadable(_))
        ));
        assert_eq!(there.generation(), 2);
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
