//! The middleware in front of the MCP endpoint: bearer token, verification, audience,
//! issuer, time window, scopes; then the claims ride along to the handlers.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::ResourceServer;
use super::metadata::same_resource;
use super::verify::{VerifyError, now};
use crate::engine::Attachment;
use crate::http::SessionOwner;
use crate::server::Claims;

/// The bearer token of a request.
enum Bearer<'a> {
    None,
    Token(&'a str),
    /// Several `Authorization` headers, or a Bearer credential that is not a token.
    Malformed,
}

/// RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

fn bearer(headers: &HeaderMap) -> Bearer<'_> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(header::AUTHORIZATION) {
            Bearer::Malformed
        } else {
            Bearer::None
        };
    };
    let Ok(value) = value.to_str() else {
        return Bearer::Malformed;
    };
    let Some((scheme, token)) = value.split_once(' ') else {
        return Bearer::None;
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme is no bearer token: the request is unauthenticated.
        return Bearer::None;
    }
    let token = token.trim_start_matches(' ');
    if is_b64token(token) {
        Bearer::Token(token)
    } else {
        Bearer::Malformed
    }
}

/// How a request was refused.
enum Refusal {
    /// No token: 401 without an error code.
    Unauthenticated,
    /// 401 `invalid_token`.
    InvalidToken,
    /// 403 `insufficient_scope`, with the scopes needed.
    InsufficientScope(Vec<String>),
    /// 503: the verifier's backend failed.
    Unavailable,
}

fn quoted(value: &str) -> String {
    value.replace(['"', '\\'], "")
}

fn refuse(server: &ResourceServer, refusal: Refusal) -> Response {
    let challenge_scope = if server.required.is_empty() {
        &server.scopes_supported
    } else {
        &server.required
    };
    let (status, error, scope) = match &refusal {
        Refusal::Unauthenticated => (StatusCode::UNAUTHORIZED, None, challenge_scope.join(" ")),
        Refusal::InvalidToken => (
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
            challenge_scope.join(" "),
        ),
        Refusal::InsufficientScope(needed) => (
            StatusCode::FORBIDDEN,
            Some("insufficient_scope"),
            needed.join(" "),
        ),
        Refusal::Unavailable => {
            let body = r#"{"error":"temporarily_unavailable"}"#;
            let mut response = (StatusCode::SERVICE_UNAVAILABLE, body).into_response();
            json_type(&mut response);
            return response;
        }
    };
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}\"",
        quoted(&server.metadata_url())
    );
    if !scope.is_empty() {
        challenge.push_str(&format!(", scope=\"{}\"", quoted(&scope)));
    }
    if let Some(error) = error {
        challenge.push_str(&format!(", error=\"{error}\""));
    }
    let body = format!(r#"{{"error":"{}"}}"#, error.unwrap_or("unauthorized"));
    let mut response = (status, body).into_response();
    json_type(&mut response);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn json_type(response: &mut Response) {
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
}

/// The checks every verifier's claims go through: audience, issuer, time window.
fn admissible(server: &ResourceServer, claims: &Claims) -> Result<(), String> {
    if !claims
        .audience
        .iter()
        .any(|aud| same_resource(&server.resource, aud))
    {
        return Err(format!(
            "audience {:?} is not this resource",
            claims.audience
        ));
    }
    if let Some(issuer) = &claims.issuer
        && !server.authorization_servers.is_empty()
        && !server.authorization_servers.iter().any(|a| a == issuer)
    {
        return Err(format!("issuer {issuer:?} is not trusted"));
    }
    let now = now();
    if claims
        .expires_at
        .is_some_and(|exp| exp + server.leeway <= now)
    {
        return Err("expired".into());
    }
    if claims
        .not_before
        .is_some_and(|nbf| nbf > now + server.leeway)
    {
        return Err("not yet valid".into());
    }
    Ok(())
}

/// What the body of a POST says about the scopes it needs.
#[derive(Deserialize)]
#[serde(untagged)]
enum Probe {
    One(Entry),
    Many(Vec<Entry>),
}

#[derive(Deserialize)]
struct Entry {
    method: Option<String>,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    name: Option<serde_json::Value>,
}

fn scopes_for(server: &ResourceServer, entry: &Entry, needed: &mut Vec<String>) {
    let Some(method) = entry.method.as_deref() else {
        return;
    };
    let mut add = |scopes: &Vec<String>| {
        for scope in scopes {
            if !needed.contains(scope) {
                needed.push(scope.clone());
            }
        }
    };
    if let Some(scopes) = server.per_method.get(method) {
        add(scopes);
    }
    if method == "tools/call"
        && let Some(name) = entry
            .params
            .as_ref()
            .and_then(|p| p.name.as_ref())
            .and_then(serde_json::Value::as_str)
        && let Some(scopes) = server.per_tool.get(name)
    {
        add(scopes);
    }
}

/// The middleware.
pub(crate) async fn check(
    State(server): State<Arc<ResourceServer>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::OPTIONS {
        // CORS preflights carry no credentials.
        return next.run(request).await;
    }
    let token = match bearer(request.headers()) {
        Bearer::Token(token) => token,
        Bearer::None => return refuse(&server, Refusal::Unauthenticated),
        Bearer::Malformed => {
            tracing::debug!("refused: a malformed Authorization header");
            return refuse(&server, Refusal::InvalidToken);
        }
    };
    let claims = match server.verifier.verify(token).await {
        Ok(claims) => claims,
        Err(VerifyError::Invalid(reason)) => {
            tracing::debug!(%reason, "refused a bearer token");
            return refuse(&server, Refusal::InvalidToken);
        }
        Err(VerifyError::Unavailable(reason)) => {
            tracing::warn!(%reason, "could not verify a bearer token");
            return refuse(&server, Refusal::Unavailable);
        }
    };
    if let Err(reason) = admissible(&server, &claims) {
        tracing::debug!(%reason, "refused a bearer token");
        return refuse(&server, Refusal::InvalidToken);
    }
    let mut needed: Vec<String> = server.required.clone();
    let request = if (server.per_method.is_empty() && server.per_tool.is_empty())
        || request.method() != Method::POST
    {
        request
    } else {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, server.max_body_bytes).await else {
            return StatusCode::PAYLOAD_TOO_LARGE.into_response();
        };
        match serde_json::from_slice::<Probe>(&bytes) {
            Ok(Probe::One(entry)) => scopes_for(&server, &entry, &mut needed),
            Ok(Probe::Many(entries)) => {
                for entry in &entries {
                    scopes_for(&server, entry, &mut needed);
                }
            }
            // Not JSON-RPC: the endpoint refuses it.
            Err(_) => {}
        }
        Request::from_parts(parts, Body::from(bytes))
    };
    if needed.iter().any(|scope| !claims.has_scope(scope)) {
        tracing::debug!(?needed, granted = ?claims.scopes, "insufficient scope");
        return refuse(&server, Refusal::InsufficientScope(needed));
    }
    let mut request = request;
    let owner = SessionOwner(claims.principal().into());
    request.extensions_mut().insert(owner);
    request
        .extensions_mut()
        .insert(Attachment::new(Arc::new(claims)));
    next.run(request).await
}
