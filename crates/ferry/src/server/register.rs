//! Registering groups of tools, prompts and resources in one call: [`Register`] and
//! [`ServerBuilder::with`]. The attribute macros (feature `macros`) generate its
//! implementations; anything else can implement it by hand.
//!
//! ```
//! use ferry::server::{Register, Server, ServerBuilder};
//!
//! /// The arithmetic tools, registered together.
//! struct Arithmetic;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Pair {
//!     a: f64,
//!     b: f64,
//! }
//!
//! impl Register for Arithmetic {
//!     fn register(self, builder: ServerBuilder) -> ServerBuilder {
//!         builder
//!             .tool("add", "a + b", |p: Pair| async move { (p.a + p.b).to_string() })
//!             .tool("mul", "a * b", |p: Pair| async move { (p.a * p.b).to_string() })
//!     }
//! }
//!
//! let server = Server::builder("calc", "1").with(Arithmetic).build();
//! assert_eq!(server.tool_names(), ["add", "mul"]);
//! ```

use std::sync::Arc;

use super::builder::ServerBuilder;

/// Something that adds tools, prompts or resources to a [`ServerBuilder`]: given to
/// [`ServerBuilder::with`].
///
/// Implemented by the `#[tools]` macro for the type of its `impl` block, by the function
/// `#[tool]`, `#[prompt]` and `#[resource]` generate next to the function they mark
/// (`add_tool()` for `async fn add`), by closures `FnOnce(ServerBuilder) -> ServerBuilder`,
/// by tuples of registrations (registered in order) and by `Option` (nothing for `None`).
///
/// ```
/// use ferry::server::{Register, Server, ServerBuilder};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nothing {}
///
/// fn ping(builder: ServerBuilder) -> ServerBuilder {
///     builder.tool("ping", "Answers pong", |_: Nothing| async { "pong" })
/// }
///
/// let debug = false;
/// let server = Server::builder("demo", "1")
///     .with((ping, debug.then_some(|b: ServerBuilder| b.title("debug"))))
///     .build();
/// assert_eq!(server.tool_names(), ["ping"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be registered on a server",
    note = "give `with` a type whose `impl` block has `#[ferry::tools]`, the `name_tool()` \
            function `#[ferry::tool]` generates, or a closure taking and returning the \
            ServerBuilder"
)]
pub trait Register {
    /// Add everything `self` holds to `builder`.
    fn register(self, builder: ServerBuilder) -> ServerBuilder;
}

/// A registration whose handlers share one `Arc<Self>`: what `#[tools]` implements for the
/// type of its `impl` block, so that both the value and an `Arc` of it can be given to
/// [`ServerBuilder::with`] (the `Arc` when the program keeps a handle on the same state).
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use ferry::server::{RegisterShared, Server, ServerBuilder};
///
/// #[derive(Default)]
/// struct Counter(AtomicU64);
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nothing {}
///
/// impl RegisterShared for Counter {
///     fn register_shared(self: Arc<Self>, builder: ServerBuilder) -> ServerBuilder {
///         builder.tool("hit", "Count a hit", move |_: Nothing| {
///             let hits = self.0.fetch_add(1, Ordering::Relaxed) + 1;
///             async move { hits.to_string() }
///         })
///     }
/// }
///
/// let counter = Arc::new(Counter::default());
/// let server = Server::builder("demo", "1").with(Arc::clone(&counter)).build();
/// assert_eq!(server.tool_names(), ["hit"]);
/// assert_eq!(counter.0.load(Ordering::Relaxed), 0);
/// ```
pub trait RegisterShared: Send + Sync + 'static {
    /// Add the handlers of `self` to `builder`; each keeps a clone of the `Arc`.
    fn register_shared(self: Arc<Self>, builder: ServerBuilder) -> ServerBuilder;
}

impl<T: RegisterShared> Register for Arc<T> {
    fn register(self, builder: ServerBuilder) -> ServerBuilder {
        self.register_shared(builder)
    }
}

impl<F: FnOnce(ServerBuilder) -> ServerBuilder> Register for F {
    fn register(self, builder: ServerBuilder) -> ServerBuilder {
        self(builder)
    }
}

impl<R: Register> Register for Option<R> {
    fn register(self, builder: ServerBuilder) -> ServerBuilder {
        match self {
            Some(registration) => registration.register(builder),
            None => builder,
        }
    }
}

macro_rules! register_tuple {
    ($($r:ident),+) => {
        impl<$($r: Register),+> Register for ($($r,)+) {
            #[allow(non_snake_case)] // The tuple's fields, named by their types.
            fn register(self, builder: ServerBuilder) -> ServerBuilder {
                let ($($r,)+) = self;
                $(let builder = $r.register(builder);)+
                builder
            }
        }
    };
}

register_tuple!(R1);
register_tuple!(R1, R2);
register_tuple!(R1, R2, R3);
register_tuple!(R1, R2, R3, R4);
register_tuple!(R1, R2, R3, R4, R5);
register_tuple!(R1, R2, R3, R4, R5, R6);
register_tuple!(R1, R2, R3, R4, R5, R6, R7);
register_tuple!(R1, R2, R3, R4, R5, R6, R7, R8);
register_tuple!(R1, R2, R3, R4, R5, R6, R7, R8, R9);
register_tuple!(R1, R2, R3, R4, R5, R6, R7, R8, R9, R10);
register_tuple!(R1, R2, R3, R4, R5, R6, R7, R8, R9, R10, R11);
register_tuple!(R1, R2, R3, R4, R5, R6, R7, R8, R9, R10, R11, R12);

// An inherent method defined here rather than in builder.rs: it belongs with the trait.
impl ServerBuilder {
    /// Add what `registration` holds: a `#[tools]` type, a `#[tool]`'s `name_tool()`, a
    /// closure over the builder, a tuple of these... (see [`Register`]).
    ///
    /// ```
    /// use ferry::server::{Server, ServerBuilder};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Nothing {}
    ///
    /// let server = Server::builder("demo", "1")
    ///     .with(|b: ServerBuilder| b.tool("ping", "Pong", |_: Nothing| async { "pong" }))
    ///     .build();
    /// assert_eq!(server.tool_names(), ["ping"]);
    /// ```
    pub fn with(self, registration: impl Register) -> Self {
        registration.register(self)
    }
}

/// What the code the macros generate calls: not an API (re-exported as
/// `ferry::__private`, hidden from the docs), changed with the macros.
#[doc(hidden)]
pub mod macro_support {
    use std::fmt::Display;
    use std::str::FromStr;

    use crate::server::{FromContext, ResourceError, TemplateVars};

    /// The type of an injected parameter, as the handler closure names it
    /// (`<T as Injected>::Type`, which is `T`): a type that is no extractor fails here, on
    /// the parameter's own type, rather than as "the closure is not a handler".
    pub trait Injected {
        /// The extractor itself.
        type Type;
    }

    impl<T: FromContext> Injected for T {
        type Type = T;
    }

    /// A template variable of a resource read, parsed. A variable the URI leaves undefined
    /// means the URI names no resource (not found); a value that does not parse is the
    /// caller's mistake (`-32602`, naming the variable).
    pub fn template_var<T>(vars: &TemplateVars, name: &str, uri: &str) -> Result<T, ResourceError>
    where
        T: FromStr,
        T::Err: Display,
    {
        let value = vars
            .get(name)
            .ok_or_else(|| ResourceError::NotFound(uri.to_owned()))?;
        parse(value, name, uri)
    }

    /// An optional template variable (an `Option<T>` parameter): `None` when the URI
    /// leaves it undefined or empty.
    pub fn template_var_opt<T>(
        vars: &TemplateVars,
        name: &str,
        uri: &str,
    ) -> Result<Option<T>, ResourceError>
    where
        T: FromStr,
        T::Err: Display,
    {
        match vars.get(name) {
            Some(value) if !value.is_empty() => parse(value, name, uri).map(Some),
            _ => Ok(None),
        }
    }

    fn parse<T>(value: &str, name: &str, uri: &str) -> Result<T, ResourceError>
    where
        T: FromStr,
        T::Err: Display,
    {
        value
            .parse()
            .map_err(|e| ResourceError::InvalidParams(format!("invalid `{name}` in {uri}: {e}")))
    }
}
