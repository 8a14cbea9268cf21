//! Resources: static resources, templates matched by RFC 6570, reads and subscriptions.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::ErrorObject;
use ferry_protocol::types::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use indexmap::IndexMap;

use super::builder::Server;
use super::context::Context;
use super::log_layer::{LogTarget, scoped};
use super::mrtr::{drive, missing_capability};
use super::pagination::page;
use super::reply::{Call, reply};
use super::uri_template::UriTemplate;
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
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// No such resource (answered with the revision's not-found code: `-32002` until
    /// 2025-11-25, `-32602` from 2026-07-28).
    #[error("resource not found: {0}")]
    NotFound(String),
    /// Reading failed (answered with `-32603`).
    #[error("reading the resource failed: {0}")]
    Failed(String),
}

impl ResourceError {
    fn into_error(self, call: &Call) -> ErrorObject {
        match self {
            ResourceError::NotFound(uri) => ErrorObject::new(
                error_codes::resource_not_found(call.version),
                format!("resource not found: {uri}"),
            )
            .with_data(serde_json::json!({ "uri": uri })),
            ResourceError::Failed(message) => ErrorObject::internal_error(message),
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

/// Wrap a reader of a static resource.
pub(crate) fn static_reader<F, Fut>(read: F) -> ReadFn
where
    F: Fn(Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ReadResult> + Send + 'static,
{
    Arc::new(move |_uri, _vars, cx| Box::pin(read(cx)))
}

/// Wrap a reader of a resource template.
pub(crate) fn template_reader<F, Fut>(read: F) -> ReadFn
where
    F: Fn(String, TemplateVars, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ReadResult> + Send + 'static,
{
    Arc::new(move |uri, vars, cx| Box::pin(read(uri, vars, cx)))
}

/// `resources/list`.
pub(crate) fn list(server: &Server, call: &Call, cursor: Option<&str>) -> HandlerResult {
    let snapshot = server.inner.resources.snapshot();
    let page = page(
        snapshot.entries.len(),
        cursor,
        server.inner.page_size,
        "resources",
        snapshot.generation,
    )?;
    let resources = snapshot.entries.get_range(page.range).into_iter().flatten();
    reply(
        ListResourcesResult {
            resources: resources.map(|(_, e)| e.resource.clone()).collect(),
            next_cursor: page.next,
            ttl_ms: server.inner.list_cache.ttl_ms(),
            cache_scope: server.inner.list_cache.scope(),
            ..Default::default()
        },
        call.version,
        &server.inner.info,
    )
}

/// `resources/templates/list`.
pub(crate) fn list_templates(server: &Server, call: &Call, cursor: Option<&str>) -> HandlerResult {
    let snapshot = server.inner.templates.snapshot();
    let page = page(
        snapshot.entries.len(),
        cursor,
        server.inner.page_size,
        "resource templates",
        snapshot.generation,
    )?;
    let templates = snapshot.entries.get_range(page.range).into_iter().flatten();
    reply(
        ListResourceTemplatesResult {
            resource_templates: templates.map(|(_, e)| e.template.clone()).collect(),
            next_cursor: page.next,
            ttl_ms: server.inner.list_cache.ttl_ms(),
            cache_scope: server.inner.list_cache.scope(),
            ..Default::default()
        },
        call.version,
        &server.inner.info,
    )
}

/// `resources/read`: a static resource by exact URI, else the first template that matches.
pub(crate) async fn read(server: &Server, call: &Call, uri: String, cx: Context) -> HandlerResult {
    let found = server
        .inner
        .resources
        .snapshot()
        .entries
        .get(&uri)
        .map(|entry| (Arc::clone(&entry.read), TemplateVars::new()))
        .or_else(|| {
            let templates = server.inner.templates.snapshot();
            templates.entries.values().find_map(|entry| {
                entry
                    .matcher
                    .matches(&uri)
                    .map(|vars| (Arc::clone(&entry.read), vars))
            })
        });
    let Some((read, vars)) = found else {
        return Err(ResourceError::NotFound(uri).into_error(call));
    };
    let rounds = cx.rounds.clone();
    let contents = match drive(
        server,
        call,
        rounds.as_ref(),
        scoped(LogTarget::of(&cx), read(uri, vars, cx)),
    )
    .await
    {
        Ok(Ok(contents)) => contents,
        Ok(Err(e)) => {
            return Err(
                missing_capability(call, rounds.as_ref()).unwrap_or_else(|| e.into_error(call))
            );
        }
        Err(answer) => return answer,
    };
    reply(
        ReadResourceResult {
            contents,
            ttl_ms: server.inner.read_cache.ttl_ms(),
            cache_scope: server.inner.read_cache.scope(),
            ..Default::default()
        },
        call.version,
        &server.inner.info,
    )
}

/// Whether `uri` names a registered resource or matches a template (subscriptions to
/// anything else are refused).
pub(crate) fn exists(server: &Server, uri: &str) -> bool {
    server.inner.resources.snapshot().entries.contains_key(uri)
        || server
            .inner
            .templates
            .snapshot()
            .entries
            .values()
            .any(|t| t.matcher.matches(uri).is_some())
}
