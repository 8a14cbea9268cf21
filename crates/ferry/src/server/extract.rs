//! Handlers as plain async functions with extractors (like axum): the first parameter is
//! the typed arguments, each later one is taken from the request's [`Context`].
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use ferry::server::{Cancel, Progress, Server, State};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Count {
//!     /// How far.
//!     to: u64,
//! }
//!
//! struct Hits(AtomicU64);
//!
//! async fn count(args: Count, hits: State<Hits>, progress: Progress, cancel: Cancel) -> String {
//!     hits.0.fetch_add(1, Ordering::Relaxed);
//!     for i in 1..=args.to {
//!         if cancel.is_cancelled() {
//!             return "stopped".into();
//!         }
//!         progress.report(i as f64, Some(args.to as f64), None).await;
//!     }
//!     format!("counted to {}", args.to)
//! }
//!
//! async fn ping(_: Count) -> &'static str {
//!     "pong"
//! }
//!
//! let server = Server::builder("demo", "1")
//!     .state(Hits(AtomicU64::new(0)))
//!     .tool("count", "Count", count)
//!     .tool("ping", "No context needed", ping)
//!     .build();
//! assert_eq!(server.tool_names(), ["count", "ping"]);
//! ```

use std::any::TypeId;
use std::future::Future;
use std::sync::Arc;

use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{ClientCapabilities, RequestMeta};
use futures_util::FutureExt;
use futures_util::future::Either;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::context::Context;
use crate::engine::{Cancellation, Peer, ProgressReporter};

/// A handler parameter taken from the request's [`Context`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler parameter",
    note = "after the arguments, a handler takes extractors: Context, State<T>, Progress, \
            Cancel, Peer, Meta, ClientCaps, SessionData"
)]
pub trait FromContext: Sized + Send + 'static {
    /// Take the value, or refuse the request (a server misconfiguration such as a missing
    /// [`State`] answers `-32603`).
    fn from_context(cx: &Context) -> Result<Self, ErrorObject>;

    /// Take the value when it is the handler's last parameter, so the context is not needed
    /// after it. By default [`from_context`](Self::from_context); [`Context`] itself is
    /// moved instead of cloned.
    fn from_context_owned(cx: Context) -> Result<Self, ErrorObject> {
        Self::from_context(&cx)
    }

    /// The application state this extractor takes (its type and name), so that building
    /// a server whose handlers ask for state it was not given fails at once instead of at
    /// every call. `None` by default.
    #[doc(hidden)]
    fn required_state() -> Option<(TypeId, &'static str)> {
        None
    }
}

impl FromContext for Context {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(cx.clone())
    }

    fn from_context_owned(cx: Context) -> Result<Self, ErrorObject> {
        Ok(cx)
    }
}

/// Application state given to [`super::ServerBuilder::state`], by type. Derefs to `T`.
///
/// A server whose handlers take a `State<T>` it was not given a `T` for does not build:
/// [`ServerBuilder::build`](super::ServerBuilder::build) names the handler and the type.
#[derive(Debug)]
pub struct State<T>(Arc<T>);

impl<T> State<T> {
    /// The shared value itself (to keep it beyond the call, say).
    pub fn arc(&self) -> &Arc<T> {
        &self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        cx.state_arc::<T>().map(State).ok_or_else(|| {
            ErrorObject::internal_error(format!(
                "no state of type {} was given to the server builder",
                std::any::type_name::<T>()
            ))
        })
    }

    fn required_state() -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<T>(), std::any::type_name::<T>()))
    }
}

/// The request's progress reporter (`None` when the client asked for no progress).
#[derive(Clone, Debug)]
pub struct Progress(pub Option<ProgressReporter>);

impl FromContext for Progress {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(Progress(cx.progress.clone()))
    }
}

impl Progress {
    /// Report progress (`notifications/progress`) if the client asked for it; nothing
    /// otherwise. A failure to send (the client is gone) is not the handler's concern.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(reporter) = &self.0 {
            let _ = reporter.report(progress, total, message).await;
        }
    }
}

/// The request's cancellation token: cancelled when the client cancels or hangs up.
///
/// A cancelled request's handler is dropped at its next `.await` and no response is sent,
/// so an async handler needs no token to stop, and a `select!` on
/// [`cancelled`](Cancellation::cancelled) never gets to run its branch: code that must run
/// when the call is abandoned (releasing a lock, noting the cancellation, removing a
/// temporary file) belongs in a guard's [`Drop`], which runs then as on every other way
/// out. The token is for work the handler's future does not own: a thread,
/// `spawn_blocking`, a spawned task, a loop without `.await`.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use ferry::server::{Cancel, Server, State};
///
/// /// Set when a call ended without finishing.
/// struct Abandoned(Arc<AtomicBool>);
///
/// /// Runs on every way out of the handler: returned, failed, or dropped when cancelled.
/// struct CleanUp {
///     abandoned: Arc<AtomicBool>,
///     finished: bool,
/// }
///
/// impl Drop for CleanUp {
///     fn drop(&mut self) {
///         if !self.finished {
///             self.abandoned.store(true, Ordering::SeqCst);
///         }
///     }
/// }
///
/// async fn slow(abandoned: State<Abandoned>, cancel: Cancel) -> String {
///     let mut guard = CleanUp { abandoned: abandoned.0.clone(), finished: false };
///     // Blocking work watches the token itself (the engine cannot drop a thread).
///     let token = cancel.0.clone();
///     let steps = tokio::task::spawn_blocking(move || {
///         (0..100).take_while(|_| !token.is_cancelled()).count()
///     });
///     let steps = steps.await.unwrap_or(0);
///     guard.finished = true;
///     format!("{steps} steps")
/// }
///
/// let server = Server::builder("s", "1")
///     .state(Abandoned(Arc::default()))
///     .tool("slow", "Slow work", slow)
///     .build();
/// # let _ = server;
/// ```
#[derive(Clone, Debug)]
pub struct Cancel(pub Cancellation);

impl FromContext for Cancel {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(Cancel(cx.cancel.clone()))
    }
}

impl std::ops::Deref for Cancel {
    type Target = Cancellation;

    fn deref(&self) -> &Cancellation {
        &self.0
    }
}

impl FromContext for Peer {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(cx.peer.clone())
    }
}

/// The request's `_meta`.
#[derive(Clone, Debug)]
pub struct Meta(pub RequestMeta);

impl FromContext for Meta {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(Meta(RequestMeta::clone(&cx.meta)))
    }
}

/// What the client declared it supports.
#[derive(Clone, Debug)]
pub struct ClientCaps(pub ClientCapabilities);

impl FromContext for ClientCaps {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(ClientCaps(cx.client_capabilities().clone()))
    }
}

/// An async function usable as a tool or prompt handler: typed arguments first, then up
/// to five [`FromContext`] extractors. `M` only tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handler",
    note = "a handler is an async fn (or closure returning a future) taking the typed \
            arguments (Deserialize + JsonSchema) and then extractors such as Context, \
            State<T>, Progress, Cancel, Peer, Meta, or only extractors",
    note = "if the arguments type derives JsonSchema and still is not accepted, it may \
            derive another version's JsonSchema: derive `ferry::schemars::JsonSchema` (or \
            depend on the schemars version ferry uses, `cargo tree -d schemars` shows both)"
)]
pub trait HandlerFn<M>: Send + Sync + 'static {
    /// The typed arguments; the input schema comes from this type.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the handler returns.
    type Output: Send + 'static;

    /// Run the handler: extract its parameters from `cx`, then call it. (Not boxed: the
    /// caller boxes the whole call once.)
    fn call(
        &self,
        args: Self::Args,
        cx: Context,
    ) -> impl Future<Output = Result<Self::Output, ErrorObject>> + Send + 'static;

    /// The application state the extractors take (see [`FromContext::required_state`]).
    #[doc(hidden)]
    fn required_states() -> Vec<(TypeId, &'static str)> {
        Vec::new()
    }
}

/// The marker of handlers without an arguments parameter (their `Args` are `()`, whose
/// input schema is an object without properties).
#[doc(hidden)]
#[derive(Debug)]
pub struct NoArgs;

/// A handler's future, or the refusal of an extractor.
fn called<Fut: Future>(
    future: Result<Fut, ErrorObject>,
) -> impl Future<Output = Result<Fut::Output, ErrorObject>> {
    match future {
        Ok(future) => Either::Left(future.map(Ok)),
        Err(error) => Either::Right(std::future::ready(Err(error))),
    }
}

/// Take the extractors `$t` (from a borrowed context) and `$last` (given the context) out
/// of `$cx`, then call `$f` with `$args` and them; an extractor's refusal is the answer.
macro_rules! extract_then_call {
    ($cx:ident, $f:expr, ($($args:ident)?), $($t:ident,)* $(; $last:ident)?) => {{
        let future = 'extract: {
            $(let $t = match $t::from_context(&$cx) {
                Ok(value) => value,
                Err(error) => break 'extract Err(error),
            };)*
            $(let $last = match $last::from_context_owned($cx) {
                Ok(value) => value,
                Err(error) => break 'extract Err(error),
            };)?
            Ok($f($($args,)? $($t,)* $($last)?))
        };
        called(future)
    }};
}

/// The application state the extractors `$t` take.
macro_rules! required_states {
    ($($t:ident),* $(,)?) => {{
        let states: &[Option<(TypeId, &'static str)>] = &[$($t::required_state(),)*];
        states.iter().flatten().copied().collect()
    }};
}

macro_rules! handler_fn {
    // `$t`: extractors taken from a borrowed context; `$last`: the last, given the context.
    ($($t:ident,)* $(; $last:ident)?) => {
        impl<F, Fut, A, $($t,)* $($last)?> HandlerFn<(A, $($t,)* $($last)?)> for F
        where
            F: Fn(A, $($t,)* $($last)?) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: Send + 'static,
            A: DeserializeOwned + JsonSchema + Send + 'static,
            $($t: FromContext,)*
            $($last: FromContext,)?
        {
            type Args = A;
            type Output = Fut::Output;

            // (No extractor: the label is unused.)
            #[allow(non_snake_case, unused_variables, unused_labels)]
            fn call(
                &self,
                args: A,
                cx: Context,
            ) -> impl Future<Output = Result<Self::Output, ErrorObject>> + Send + 'static {
                extract_then_call!(cx, self, (args), $($t,)* $(; $last)?)
            }

            fn required_states() -> Vec<(TypeId, &'static str)> {
                required_states!($($t,)* $($last)?)
            }
        }

        // The same handler without an arguments parameter: only extractors.
        impl<F, Fut, $($t,)* $($last)?> HandlerFn<(NoArgs, $($t,)* $($last)?)> for F
        where
            F: Fn($($t,)* $($last)?) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: Send + 'static,
            $($t: FromContext,)*
            $($last: FromContext,)?
        {
            type Args = ();
            type Output = Fut::Output;

            #[allow(non_snake_case, unused_variables, unused_labels)]
            fn call(
                &self,
                _args: (),
                cx: Context,
            ) -> impl Future<Output = Result<Self::Output, ErrorObject>> + Send + 'static {
                extract_then_call!(cx, self, (), $($t,)* $(; $last)?)
            }

            fn required_states() -> Vec<(TypeId, &'static str)> {
                required_states!($($t,)* $($last)?)
            }
        }
    };
}

handler_fn!();
handler_fn!(; T1);
handler_fn!(T1,; T2);
handler_fn!(T1, T2,; T3);
handler_fn!(T1, T2, T3,; T4);
handler_fn!(T1, T2, T3, T4,; T5);
