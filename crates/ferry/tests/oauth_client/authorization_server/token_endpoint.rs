//! The test authorization server's token endpoint: client authentication
//! (`client_secret_basic` with form-encoded credentials, `client_secret_post`, `none`,
//! `private_key_jwt` verified against the client's JWK) and the grants (authorization code
//! with its PKCE verifier, refresh with rotation, client credentials).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{App, Client, Shared, granted_scope, oauth_error, pairs};
use crate::issuer::now;

/// Authenticate the client of a token request; its id and the method it used.
fn authenticate(
    app: &App,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(String, String), ()> {
    let (id, method, secret) = if let Some(basic) = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .map_err(|_| ())?;
        let text = String::from_utf8(decoded).map_err(|_| ())?;
        let (id, secret) = text.split_once(':').ok_or(())?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(&s.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        };
        (decode(id), "client_secret_basic", Some(decode(secret)))
    } else if let Some(assertion) = form.get("client_assertion") {
        let id = form.get("client_id").cloned().unwrap_or_default();
        let client = client_of(app, &id).ok_or(())?;
        let jwk = client.jwk.ok_or(())?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| ())?;
        let mut validation = Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&[app.issuer()]);
        validation.set_issuer(&[id.as_str()]);
        let claims = jsonwebtoken::decode::<Value>(assertion, &key, &validation)
            .map_err(|_| ())?
            .claims;
        if claims["sub"] != id.as_str() {
            return Err(());
        }
        return Ok((id, "private_key_jwt".into()));
    } else if let Some(secret) = form.get("client_secret") {
        let id = form.get("client_id").cloned().unwrap_or_default();
        (id, "client_secret_post", Some(secret.clone()))
    } else {
        let id = form.get("client_id").cloned().unwrap_or_default();
        (id, "none", None)
    };
    let client = client_of(app, &id).or_else(|| {
        // A Client ID Metadata Document client was fetched at /authorize.
        id.starts_with("http").then(|| Client {
            secret: None,
            method: "none".into(),
            redirect_uris: Vec::new(),
            jwk: None,
        })
    });
    let client = client.ok_or(())?;
    if client.method != method || client.secret != secret {
        return Err(());
    }
    Ok((id, method.to_owned()))
}

fn client_of(app: &App, id: &str) -> Option<Client> {
    app.inner.clients.lock().unwrap().get(id).cloned()
}

pub(super) async fn token(State(app): Shared, headers: HeaderMap, body: String) -> Response {
    let form = pairs(&body);
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let grant = get("grant_type");
    let (client_id, method) = match authenticate(&app, &headers, &form) {
        Ok(found) => found,
        Err(()) => {
            app.event(format!("token grant={grant} refused=invalid_client"));
            return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "authentication");
        }
    };
    let resource = get("resource");
    let (resource, scope) = match grant.as_str() {
        "authorization_code" => {
            let Some(code) = app.inner.codes.lock().unwrap().remove(&get("code")) else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "code");
            };
            let verifier = get("code_verifier");
            let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(verifier.as_bytes()));
            if code.client_id != client_id
                || code.challenge != challenge
                || code.redirect_uri != get("redirect_uri")
                || code.resource != resource
            {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "code mismatch");
            }
            (code.resource, code.scope)
        }
        "refresh_token" => {
            let Some((owner, bound, scope)) = app
                .inner
                .refresh
                .lock()
                .unwrap()
                .remove(&get("refresh_token"))
            else {
                app.event(format!("token grant={grant} refused=invalid_grant"));
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "refresh token");
            };
            if owner != client_id || (bound != resource && !resource.is_empty()) {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "not yours");
            }
            (bound, scope)
        }
        "client_credentials" => (resource, granted_scope(&app.behaviour(), &get("scope"))),
        _ => return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type", &grant),
    };
    app.event(format!(
        "token grant={grant} auth={method} client={client_id} resource={resource} scope={scope:?}"
    ));
    let lifetime = app.behaviour().lifetime;
    let access = app.key.sign(&json!({
        "iss": app.issuer(), "sub": "alice", "client_id": client_id, "aud": resource,
        "scope": scope, "iat": now(), "exp": now() + lifetime, "jti": app.fresh("jti"),
    }));
    let mut answer = json!({
        "access_token": access, "token_type": "Bearer", "expires_in": lifetime, "scope": scope,
    });
    if grant != "client_credentials" {
        let refresh = app.fresh("refresh");
        app.inner
            .refresh
            .lock()
            .unwrap()
            .insert(refresh.clone(), (client_id, resource, scope));
        answer["refresh_token"] = json!(refresh);
    }
    axum::Json(answer).into_response()
}
