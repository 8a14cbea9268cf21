//! Resources: static resources, templates matched by RFC 6570, reads and subscriptions.

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    Cursor, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use futures_util::FutureExt;
use futures_util::future::Either;
use indexmap::IndexMap;
use serde::Serialize;

use super::builder::CacheHint;
use super::context::Context;
use super::core::Server;
use super::extract::FromContext;
use super::list::Listed;
use super::pipeline::{Answer, Answering};
use super::registry::Registry;
use super::reply::Call;
use super::tools::Json;
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
            ResourceError::NotFound(uri) => ErrorObject::resource_not_found(call.version, &uri),
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
/// (`String`, [`TemplateVars`]; empty for a static resource), then extractors. It returns
/// what [`IntoReadResult`] turns into contents: a `String` (text), bytes (a blob),
/// [`Json<T>`](super::Json), an `Option` of these (`None`: not found), a [`ReadResult`],
/// or a `Result` of these. `M` only tells the implementations apart.
///
/// ```
/// use ferry::protocol::types::{Resource, ResourceTemplate};
/// use ferry::server::{ResourceError, Server, State, TemplateVars};
///
/// struct Notes(Vec<String>);
///
/// async fn all(notes: State<Notes>) -> String {
///     notes.0.join("\n")
/// }
///
/// async fn one(uri: String, vars: TemplateVars, notes: State<Notes>) -> Result<String, ResourceError> {
///     let index: usize = vars["id"].parse().map_err(|_| ResourceError::NotFound(uri.clone()))?;
///     notes.0.get(index).cloned().ok_or(ResourceError::NotFound(uri))
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
            Meta...), or (String, TemplateVars) and then extractors, and returning a String, \
            bytes, Json<T>, a ReadResult, or an Option or Result of one of these"
)]
pub trait ReadHandler<M>: Send + Sync + 'static {
    /// What the reader returns (turned into contents by [`IntoReadResult`]).
    type Output: Send + 'static;

    /// Read `uri` (whose template matched `vars`) for the request of `cx`; an extractor's
    /// refusal is the error.
    fn read(
        &self,
        uri: String,
        vars: TemplateVars,
        cx: Context,
    ) -> impl Future<Output = Result<Self::Output, ResourceError>> + Send + 'static;

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

/// An extractor's refusal, as the read's outcome.
type Refused<T> = std::future::Ready<Result<T, ResourceError>>;

fn refused<T>(error: ErrorObject) -> Refused<T> {
    std::future::ready(Err(ResourceError::Rejected(error)))
}

macro_rules! read_handler {
    ($($t:ident),*) => {
        impl<F, Fut, $($t,)*> ReadHandler<(Extractors, $($t,)*)> for F
        where
            F: Fn($($t,)*) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: Send + 'static,
            $($t: FromContext,)*
        {
            type Output = Fut::Output;

            #[allow(non_snake_case, unused_variables)]
            fn read(
                &self,
                _uri: String,
                _vars: TemplateVars,
                cx: Context,
            ) -> impl Future<Output = Result<Fut::Output, ResourceError>> + Send + 'static {
                $(let $t = match $t::from_context(&cx) {
                    Ok(value) => value,
                    Err(error) => return Either::Right(refused(error)),
                };)*
                Either::<_, Refused<Fut::Output>>::Left(self($($t,)*).map(Ok))
            }

            fn required_states() -> Vec<(TypeId, &'static str)> {
                let states: &[Option<(TypeId, &'static str)>] = &[$($t::required_state(),)*];
                states.iter().flatten().copied().collect()
            }
        }

        impl<F, Fut, $($t,)*> ReadHandler<(UriAndVars, $($t,)*)> for F
        where
            F: Fn(String, TemplateVars, $($t,)*) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: Send + 'static,
            $($t: FromContext,)*
        {
            type Output = Fut::Output;

            #[allow(non_snake_case, unused_variables)]
            fn read(
                &self,
                uri: String,
                vars: TemplateVars,
                cx: Context,
            ) -> impl Future<Output = Result<Fut::Output, ResourceError>> + Send + 'static {
                $(let $t = match $t::from_context(&cx) {
                    Ok(value) => value,
                    Err(error) => return Either::Right(refused(error)),
                };)*
                Either::<_, Refused<Fut::Output>>::Left(self(uri, vars, $($t,)*).map(Ok))
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

/// Wrap a reader: its output becomes the contents of the URI read, typed `mime_type` (the
/// resource's or template's) unless the output says otherwise.
pub(crate) fn reader<M, R>(read: R, mime_type: Option<String>) -> ReadFn
where
    R: ReadHandler<M>,
    R::Output: IntoReadResult,
{
    let mime_type: Option<Arc<str>> = mime_type.map(Arc::from);
    Arc::new(move |uri: String, vars, cx| {
        let reading = read.read(uri.clone(), vars, cx);
        let mime_type = mime_type.clone();
        Box::pin(async move { reading.await?.into_read_result(&uri, mime_type.as_deref()) })
    })
}

/// The MIME type a resource without one is listed with: the one its reader's output
/// gives (`text/plain` for a `String`...), if any.
pub(crate) fn default_mime_type<T: IntoReadResult>(declared: &mut Option<String>) {
    if declared.is_none() {
        *declared = T::default_mime_type().map(str::to_owned);
    }
}

/// The contents of a resource, from a reader's return value.
///
/// A value without a MIME type of its own is typed with the one the resource (or the
/// template) declares, else its default, which is also what the resource is listed with
/// when it declares none:
///
/// | the reader returns | contents | default MIME type |
/// |---|---|---|
/// | `String`, `&'static str` | text | `text/plain` |
/// | `Vec<u8>`, `&'static [u8]`, `bytes::Bytes` | a blob (base64 on the wire) | `application/octet-stream` |
/// | [`Json<T>`](super::Json) (`T: Serialize`) | the JSON text | `application/json` |
/// | [`ResourceContents`], `Vec<ResourceContents>` ([`ReadResult`]'s) | as they are | — |
/// | `Option<T>` | `T`'s; `None` is "not found" | `T`'s |
/// | `Result<T, E>` | `T`'s; `Err` as below | `T`'s |
///
/// An `Err` that is a [`ResourceError`] is answered as that error says (not found with
/// the revision's code, invalid params...), an [`ErrorObject`] as it is, and any other
/// error (`E: Display`) with `-32603` and its message.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferry::protocol::types::{Resource, ResourceTemplate};
/// use ferry::server::{Json, Server, TemplateVars, TestClient, TestError};
///
/// #[derive(serde::Serialize)]
/// struct Config {
///     debug: bool,
/// }
///
/// let server = Server::builder("demo", "1")
///     .resource(Resource::new("motd://today", "motd"), || async { "Hello!" })
///     .resource(
///         Resource::new("config://app", "config"),
///         || async { Json(Config { debug: true }) },
///     )
///     .resource(
///         Resource::new("logo://png", "logo").mime_type("image/png"),
///         || async { vec![0x89, b'P', b'N', b'G'] },
///     )
///     .resource_template(
///         ResourceTemplate::new("users://{id}", "user"),
///         |_uri: String, vars: TemplateVars| async move {
///             (vars["id"] == "1").then_some("Ada")
///         },
///     )
///     .build();
/// let client = TestClient::new(&server).await.unwrap();
/// let motd = client.read_resource("motd://today").await.unwrap();
/// assert_eq!(motd.text(), "Hello!");
/// assert_eq!(motd.contents[0].mime_type(), Some("text/plain"));
/// let config = client.read_resource("config://app").await.unwrap();
/// assert_eq!(config.text(), r#"{"debug":true}"#);
/// assert_eq!(config.contents[0].mime_type(), Some("application/json"));
/// let logo = client.read_resource("logo://png").await.unwrap();
/// assert_eq!(logo.blob().unwrap(), b"\x89PNG");
/// assert_eq!(logo.contents[0].mime_type(), Some("image/png"));
/// assert_eq!(client.read_resource("users://1").await.unwrap().text(), "Ada");
/// let missing = client.read_resource("users://2").await.unwrap_err();
/// assert_eq!(missing, TestError::NotFound("users://2".into()));
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource reader",
    note = "return a String or &'static str (text), Vec<u8> or Bytes (a blob), Json<T> (JSON \
            text), ResourceContents or a ReadResult, or an Option or Result of one of these"
)]
pub trait IntoReadResult {
    /// The contents read from `uri`; `mime_type` is the resource's declared one, if any.
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult;

    /// The MIME type of such contents when the resource declares none.
    fn default_mime_type() -> Option<&'static str> {
        None
    }
}

const TEXT: &str = "text/plain";
const BYTES: &str = "application/octet-stream";
const JSON: &str = "application/json";

/// Text contents of `uri`.
fn text(uri: &str, mime_type: Option<&str>, text: String) -> ReadResult {
    Ok(vec![ResourceContents::text(
        uri,
        mime_type.unwrap_or(TEXT),
        text,
    )])
}

/// Blob contents of `uri`.
fn blob(uri: &str, mime_type: Option<&str>, bytes: &[u8]) -> ReadResult {
    use base64::Engine as _;
    Ok(vec![ResourceContents::blob(
        uri,
        mime_type.unwrap_or(BYTES),
        base64::engine::general_purpose::STANDARD.encode(bytes),
    )])
}

impl IntoReadResult for String {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        text(uri, mime_type, self)
    }

    fn default_mime_type() -> Option<&'static str> {
        Some(TEXT)
    }
}

impl IntoReadResult for &'static str {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        text(uri, mime_type, self.to_owned())
    }

    fn default_mime_type() -> Option<&'static str> {
        Some(TEXT)
    }
}

impl IntoReadResult for Vec<u8> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        blob(uri, mime_type, &self)
    }

    fn default_mime_type() -> Option<&'static str> {
        Some(BYTES)
    }
}

impl IntoReadResult for &'static [u8] {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        blob(uri, mime_type, self)
    }

    fn default_mime_type() -> Option<&'static str> {
        Some(BYTES)
    }
}

impl IntoReadResult for bytes::Bytes {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        blob(uri, mime_type, &self)
    }

    fn default_mime_type() -> Option<&'static str> {
        Some(BYTES)
    }
}

impl<T: Serialize> IntoReadResult for Json<T> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        let json = serde_json::to_string(&self.0).map_err(|e| {
            ResourceError::Failed(format!("the resource's contents did not serialize: {e}"))
        })?;
        Ok(vec![ResourceContents::text(
            uri,
            mime_type.unwrap_or(JSON),
            json,
        )])
    }

    fn default_mime_type() -> Option<&'static str> {
        Some(JSON)
    }
}

impl IntoReadResult for ResourceContents {
    fn into_read_result(self, _uri: &str, _mime_type: Option<&str>) -> ReadResult {
        Ok(vec![self])
    }
}

impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(self, _uri: &str, _mime_type: Option<&str>) -> ReadResult {
        Ok(self)
    }
}

impl<T: IntoReadResult> IntoReadResult for Option<T> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        match self {
            Some(value) => value.into_read_result(uri, mime_type),
            None => Err(ResourceError::NotFound(uri.to_owned())),
        }
    }

    fn default_mime_type() -> Option<&'static str> {
        T::default_mime_type()
    }
}

impl<T: IntoReadResult, E: std::fmt::Display + 'static> IntoReadResult for Result<T, E> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> ReadResult {
        match self {
            Ok(value) => value.into_read_result(uri, mime_type),
            Err(error) => {
                let any = &error as &dyn std::any::Any;
                Err(if let Some(chosen) = any.downcast_ref::<ResourceError>() {
                    chosen.clone()
                } else if let Some(chosen) = any.downcast_ref::<ErrorObject>() {
                    ResourceError::Rejected(chosen.clone())
                } else {
                    ResourceError::Failed(error.to_string())
                })
            }
        }
    }

    fn default_mime_type() -> Option<&'static str> {
        T::default_mime_type()
    }
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
