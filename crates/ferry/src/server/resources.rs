//! Resources: static resources, templates matched by RFC 6570, reads and subscriptions.

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    Cursor, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use indexmap::IndexMap;

use super::builder::CacheHint;
use super::context::Context;
use super::core::Server;
use super::extract::FromContext;
use super::list::Listed;
use super::pipeline::{Answer, Answering};
use super::registry::Registry;
use super::reply::Call;
use super::uri_template::UriTemplate;
use super::visibility::{Rules, Visibility, visible};
use crate::engine::HandlerResult;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The variables a URI matched in a resource template, percent-decoded, in template order.
pub type TemplateVars = IndexMap<String, String>;

/// What reading a resource produces.
pub type ReadResult = Result<Vec<ResourceContents>, ResourceError>;

/// Reads a resource: the requested URI, the template's variables (empty for a static
/// resource), the request's context.
pub(crate) type ReadFn =
    Arc<dyn Fn(String, TemplateVars, Context) -> BoxFuture<ReadResult> + Send + Sync>;

/// Why a resource could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ResourceError {
    /// No such resource (answered with the revision's not-found code: `-32002` until
    /// 2025-11-25, `-32602` from 2026-07-28).
    #[error("resource not found: {0}")]
    NotFound(String),
    /// The request is wrong: a variable's value the server does not accept, say (answered
    /// with `-32602`).
    #[error("invalid resource request: {0}")]
    InvalidParams(String),
    /// Reading failed (answered with `-32603`).
    #[error("reading the resource failed: {0}")]
    Failed(String),
    /// The answer is this JSON-RPC error, as it is (an extractor's refusal, or an error of
    /// the reader's own choosing).
    #[error("{}", .0.message)]
    Rejected(ErrorObject),
}

impl From<ErrorObject> for ResourceError {
    fn from(error: ErrorObject) -> Self {
        ResourceError::Rejected(error)
    }
}

impl ResourceError {
    fn into_error(self, call: &Call) -> ErrorObject {
        match self {
            ResourceError::NotFound(uri) => ErrorObject::new(
                error_codes::resource_not_found(call.version),
                format!("resource not found: {uri}"),
            )
            .with_data(serde_json::json!({ "uri": uri })),
            ResourceError::InvalidParams(message) => ErrorObject::invalid_params(message),
            ResourceError::Failed(message) => ErrorObject::internal_error(message),
            ResourceError::Rejected(error) => error,
        }
    }
}

/// A registered static resource.
#[derive(Clone)]
pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) read: ReadFn,
}

/// A registered resource template.
#[derive(Clone)]
pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) matcher: UriTemplate,
    pub(crate) read: ReadFn,
}

/// An async function usable as a resource reader, taking the same extractors as tools and
/// prompts ([`FromContext`]: `Context`, `State<T>`, `Cancel`, `Peer`...): either only
/// extractors, or first the requested URI and the variables a template matched
/// (`String`, [`TemplateVars`]; empty for a static resource), then extractors. It returns a
/// [`ReadResult`]. `M` only tells the implementations apart.
///
/// ```
/// use ferry::protocol::types::{Resource, ResourceContents, ResourceTemplate};
/// use ferry::server::{ReadResult, Server, State, TemplateVars};
///
/// struct Notes(Vec<String>);
///
/// async fn all(notes: State<Notes>) -> ReadResult {
///     Ok(vec![ResourceContents::text("notes://all", "text/plain", notes.0.join("\n"))])
/// }
///
/// async fn one(uri: String, vars: TemplateVars, notes: State<Notes>) -> ReadResult {
///     let index: usize = vars["id"].parse().map_err(|_| ferry::server::ResourceError::NotFound(uri.clone()))?;
///     let note = notes.0.get(index).ok_or_else(|| ferry::server::ResourceError::NotFound(uri.clone()))?;
///     Ok(vec![ResourceContents::text(uri, "text/plain", note.clone())])
/// }
///
/// let server = Server::builder("notes", "1")
///     .state(Notes(vec!["first".into()]))
///     .resource(Resource::new("notes://all", "all"), all)
///     .resource_template(ResourceTemplate::new("notes://{id}", "note"), one)
///     .build();
/// # let _ = server;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource reader",
    note = "a reader is an async fn taking extractors (Context, State<T>, Cancel, Peer, \
            Meta...), or (String, TemplateVars) and then extractors, and returning a ReadResult"
)]
pub trait ReadHandler<M>: Send + Sync + 'static {
    /// Read `uri` (whose template matched `vars`) for the request of `cx`.
    fn read(&self, uri: String, vars: TemplateVars, cx: Context) -> BoxFuture<ReadResult>;

    /// The application state the extractors take (see [`FromContext::required_state`]).
    #[doc(hidden)]
    fn required_states() -> Vec<(TypeId, &'static str)> {
        Vec::new()
    }
}

/// The marker of readers taking only extractors.
#[doc(hidden)]
#[derive(Debug)]
pub struct Extractors;

/// The marker of readers taking the URI and the template's variables first.
#[doc(hidden)]
#[derive(Debug)]
pub struct UriAndVars;

macro_rules! read_handler {
    ($($t:ident),*) => {
        impl<F, Fut, $($t,)*> ReadHandler<(Extractors, $($t,)*)> for F
        where
            F: Fn($($t,)*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = ReadResult> + Send + 'static,
            $($t: FromContext,)*
        {
            #[allow(non_snake_case, unused_variables)]
            fn read(&self, _uri: String, _vars: TemplateVars, cx: Context) -> BoxFuture<ReadResult> {
                $(let $t = match $t::from_context(&cx) {
                    Ok(value) => value,
                    Err(error) => return Box::pin(std::future::ready(Err(ResourceError::Rejected(error)))),
                };)*
                Box::pin(self($($t,)*))
            }

            fn required_states() -> Vec<(TypeId, &'static str)> {
                let states: &[Option<(TypeId, &'static str)>] = &[$($t::required_state(),)*];
                states.iter().flatten().copied().collect()
            }
        }

        impl<F, Fut, $($t,)*> ReadHandler<(UriAndVars, $($t,)*)> for F
        where
            F: Fn(String, TemplateVars, $($t,)*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = ReadResult> + Send + 'static,
            $($t: FromContext,)*
        {
            #[allow(non_snake_case, unused_variables)]
            fn read(&self, uri: String, vars: TemplateVars, cx: Context) -> BoxFuture<ReadResult> {
                $(let $t = match $t::from_context(&cx) {
                    Ok(value) => value,
                    Err(error) => return Box::pin(std::future::ready(Err(ResourceError::Rejected(error)))),
                };)*
                Box::pin(self(uri, vars, $($t,)*))
            }

            fn required_states() -> Vec<(TypeId, &'static str)> {
                let states: &[Option<(TypeId, &'static str)>] = &[$($t::required_state(),)*];
                states.iter().flatten().copied().collect()
            }
        }
    };
}

read_handler!();
read_handler!(T1);
read_handler!(T1, T2);
read_handler!(T1, T2, T3);
read_handler!(T1, T2, T3, T4);
read_handler!(T1, T2, T3, T4, T5);

/// Wrap a reader.
pub(crate) fn reader<M, R: ReadHandler<M>>(read: R) -> ReadFn {
    Arc::new(move |uri, vars, cx| read.read(uri, vars, cx))
}

impl Listed for ResourceEntry {
    const LIST: &'static str = "resources";
    type Item = Resource;
    type Result = ListResourcesResult;

    fn registry(server: &Server) -> &Registry<Self> {
        server.resources()
    }

    fn rules(visibility: &Visibility) -> &Rules {
        &visibility.resources
    }

    fn item(&self) -> Resource {
        self.resource.clone()
    }

    fn result(
        resources: Vec<Resource>,
        next_cursor: Option<Cursor>,
        cache: CacheHint,
    ) -> ListResourcesResult {
        ListResourcesResult {
            resources,
            next_cursor,
            ttl_ms: cache.ttl_ms(),
            cache_scope: cache.scope(),
            ..Default::default()
        }
    }
}

impl Listed for TemplateEntry {
    const LIST: &'static str = "resource templates";
    type Item = ResourceTemplate;
    type Result = ListResourceTemplatesResult;

    fn registry(server: &Server) -> &Registry<Self> {
        server.templates()
    }

    fn rules(visibility: &Visibility) -> &Rules {
        &visibility.templates
    }

    fn item(&self) -> ResourceTemplate {
        self.template.clone()
    }

    fn result(
        resource_templates: Vec<ResourceTemplate>,
        next_cursor: Option<Cursor>,
        cache: CacheHint,
    ) -> ListResourceTemplatesResult {
        ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
            ttl_ms: cache.ttl_ms(),
            cache_scope: cache.scope(),
            ..Default::default()
        }
    }
}

/// `resources/read`: the reader's future for a static resource by exact URI, else for
/// the first template that matches (see [`Answer`] for its answer); none -> not found.
pub(crate) fn read(
    server: &Server,
    call: &Call,
    uri: String,
    cx: Context,
) -> Result<BoxFuture<ReadResult>, ErrorObject> {
    let visibility = server.visibility();
    let found = server
        .resources()
        .snapshot()
        .entries
        .get(&uri)
        .filter(|_| visible(&visibility.resources, &uri, &cx))
        .map(|entry| (Arc::clone(&entry.read), TemplateVars::new()))
        .or_else(|| {
            let templates = server.templates().snapshot();
            templates
                .entries
                .iter()
                .filter(|(key, _)| visible(&visibility.templates, key, &cx))
                .find_map(|(_, entry)| {
                    entry
                        .matcher
                        .matches(&uri)
                        .map(|vars| (Arc::clone(&entry.read), vars))
                })
        });
    let Some((read, vars)) = found else {
        return Err(ResourceError::NotFound(uri).into_error(call));
    };
    Ok(read(uri, vars, cx))
}

/// A read's outcome as the answer: the contents with the read cache hints, or the error
/// the revision gives its failure (`-32021` in the stateless era if it failed for want of
/// a client capability).
impl Answer for ReadResult {
    fn answer(self, to: &Answering<'_>) -> HandlerResult {
        let contents = match self {
            Ok(contents) => contents,
            Err(e) => {
                return Err(to
                    .missing_capability()
                    .unwrap_or_else(|| e.into_error(to.call())));
            }
        };
        let cache = to.server().read_cache();
        to.result(ReadResourceResult {
            contents,
            ttl_ms: cache.ttl_ms(),
            cache_scope: cache.scope(),
            ..Default::default()
        })
    }
}

/// Whether `uri` names a registered resource or matches a template (subscriptions to
/// anything else are refused).
pub(crate) fn exists(server: &Server, uri: &str) -> bool {
    server.resources().snapshot().entries.contains_key(uri)
        || server
            .templates()
            .snapshot()
            .entries
            .values()
            .any(|t| t.matcher.matches(uri).is_some())
}
