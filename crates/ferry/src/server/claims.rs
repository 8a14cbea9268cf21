//! What a verified access token says (the HTTP transport's OAuth resource server attaches it
//! to each request, feature `http-auth`), and the handler extractor that hands it over.

use std::sync::Arc;

use ferry_protocol::jsonrpc::ErrorObject;
use serde_json::{Map, Value};

use super::{Context, FromContext};

/// The claims of a verified access token (a JWT's payload, or an RFC 7662 introspection
/// response), with the registered ones picked out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Claims {
    /// `sub`: the resource owner (or the client itself, for client credentials).
    pub subject: Option<String>,
    /// `iss`: the authorization server that issued the token.
    pub issuer: Option<String>,
    /// `client_id` (or `azp`): the client the token was issued to.
    pub client_id: Option<String>,
    /// `scope` (space-separated) or `scp` (an array): what the token allows.
    pub scopes: Vec<String>,
    /// `aud`: the resources the token is meant for.
    pub audience: Vec<String>,
    /// `exp`, seconds since the epoch.
    pub expires_at: Option<u64>,
    /// `nbf`, seconds since the epoch.
    pub not_before: Option<u64>,
    /// Every claim as received.
    pub raw: Map<String, Value>,
}

impl Claims {
    /// Pick the registered claims out of `raw`.
    pub fn from_map(raw: Map<String, Value>) -> Claims {
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
        let list = |value: Option<&Value>| -> Vec<String> {
            match value {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let scopes = match raw.get("scope") {
            Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
            _ => list(raw.get("scp")),
        };
        Claims {
            subject: text("sub"),
            issuer: text("iss"),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes,
            audience: list(raw.get("aud")),
            expires_at: raw.get("exp").and_then(Value::as_u64),
            not_before: raw.get("nbf").and_then(Value::as_u64),
            raw,
        }
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The principal a session is bound to: issuer, subject and client together.
    pub(crate) fn principal(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.issuer.as_deref().unwrap_or(""),
            self.subject.as_deref().unwrap_or(""),
            self.client_id.as_deref().unwrap_or("")
        )
    }
}

/// The verified claims of the request's bearer token, as a handler parameter.
///
/// Present on every request that passed the `http-auth` layer; a handler taking `Auth` is
/// refused (`-32600`) on a request without verified credentials (stdio, or an HTTP server
/// without authentication). Take `Option<Auth>` to serve both.
///
/// ```
/// use ferry::server::Auth;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nothing {}
///
/// async fn whoami(_: Nothing, auth: Auth) -> String {
///     auth.0.subject.clone().unwrap_or_default()
/// }
///
/// let server = ferry::server::Server::builder("demo", "1").tool("whoami", "Who am I", whoami).build();
/// # drop(server);
/// ```
#[derive(Clone, Debug)]
pub struct Auth(pub Arc<Claims>);

/// A visibility predicate for [`ServerBuilder::tool_visible_if`] and its siblings: the
/// request carries a verified token that grants `scope`. Requests without a token (the
/// stdio transport, an HTTP server without auth) do not see the item.
///
/// ```
/// use ferry::server::has_scope;
/// use ferry::server::Server;
///
/// let server = Server::builder("admin", "1")
///     .tool("purge", "Purge the cache", |_: ()| async { "purged" })
///     .tool_visible_if("purge", has_scope("mcp:admin"))
///     .build();
/// # let _ = server;
/// ```
///
/// [`ServerBuilder::tool_visible_if`]: super::ServerBuilder::tool_visible_if
pub fn has_scope(
    scope: impl Into<String>,
) -> impl Fn(&super::Context) -> bool + Send + Sync + 'static {
    let scope = scope.into();
    move |cx| {
        cx.attachment::<std::sync::Arc<Claims>>()
            .is_some_and(|claims| claims.has_scope(&scope))
    }
}

impl FromContext for Auth {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        cx.attachment::<Arc<Claims>>()
            .map(|claims| Auth(Arc::clone(claims)))
            .ok_or_else(|| {
                ErrorObject::invalid_request("this request carries no verified credentials")
            })
    }
}

impl FromContext for Option<Auth> {
    fn from_context(cx: &Context) -> Result<Self, ErrorObject> {
        Ok(cx.attachment::<Arc<Claims>>().map(|c| Auth(Arc::clone(c))))
    }
}
