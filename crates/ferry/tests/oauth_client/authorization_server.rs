//! A real (small) OAuth 2.1 authorization server for the OAuth client tests, on 127.0.0.1:
//! metadata (RFC 8414 or OpenID Connect, at the location a test picks), an authorization
//! endpoint that approves at once, or refuses with `access_denied` when a test says so
//! (PKCE S256 required, redirect URI and client checked, Client ID Metadata Documents
//! fetched and checked), a token endpoint (authorization code with PKCE, refresh with
//! rotation, client credentials; client authentication by `client_secret_basic`,
//! `client_secret_post`, `none` or `private_key_jwt`), dynamic registration (RFC 7591), and
//! a JWKS. Access tokens are JWTs for the requested `resource`. Every request is recorded
//! as an event the tests read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jsonwebtoken::jwk::JwkSet;
use reqwest::Url;
use serde_json::{Value, json};

use crate::issuer::{SigningKey, now};

mod token_endpoint;

use token_endpoint::token;

/// Where the metadata is published, and with what issuer path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MetadataAt {
    /// RFC 8414 at `/.well-known/oauth-authorization-server` (issuer without a path).
    Rfc8414Root,
    /// OpenID Connect at `/.well-known/openid-configuration` (issuer without a path).
    OidcRoot,
    /// Issuer `/tenant1`, RFC 8414 path-inserted.
    Rfc8414Tenant,
    /// Issuer `/tenant1`, OpenID Connect path-appended (the last location tried).
    OidcTenantAppended,
    /// No metadata at all (a 2025-03-26 client falls back to `/authorize`, `/token` and
    /// `/register` at the origin).
    Nowhere,
}

/// What the `iss` parameter of the redirect says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Iss {
    /// Sent, the issuer (and advertised in the metadata).
    Correct,
    /// Sent, another issuer.
    Wrong,
    /// Advertised in the metadata but not sent.
    Missing,
    /// Neither advertised nor sent.
    Absent,
}

/// How the server behaves.
#[derive(Clone, Debug)]
pub(crate) struct Behaviour {
    pub(crate) metadata_at: MetadataAt,
    pub(crate) iss: Iss,
    pub(crate) pkce_advertised: bool,
    pub(crate) registration: bool,
    pub(crate) cimd: bool,
    pub(crate) auth_methods: Vec<&'static str>,
    /// Scopes it never grants (dropped from what is asked).
    pub(crate) withheld_scopes: Vec<&'static str>,
    pub(crate) scopes_supported: Option<Vec<&'static str>>,
    /// Access token lifetime, seconds.
    pub(crate) lifetime: u64,
    /// The authorization endpoint refuses: it redirects with `error=access_denied` (and
    /// `iss` as [`Iss`] says) instead of a code.
    pub(crate) refuse: bool,
    /// The redirect carries another `state` than the request's.
    pub(crate) tamper_state: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            metadata_at: MetadataAt::Rfc8414Root,
            iss: Iss::Correct,
            pkce_advertised: true,
            registration: true,
            cimd: false,
            auth_methods: vec!["none", "client_secret_basic", "client_secret_post"],
            withheld_scopes: Vec::new(),
            scopes_supported: None,
            lifetime: 3600,
            refuse: false,
            tamper_state: false,
        }
    }
}

/// A registered client.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    pub(crate) secret: Option<String>,
    pub(crate) method: String,
    pub(crate) redirect_uris: Vec<String>,
    /// For `private_key_jwt`: the public key.
    pub(crate) jwk: Option<jsonwebtoken::jwk::Jwk>,
}

struct Code {
    client_id: String,
    challenge: String,
    redirect_uri: String,
    resource: String,
    scope: String,
}

#[derive(Default)]
struct Inner {
    behaviour: Mutex<Behaviour>,
    clients: Mutex<HashMap<String, Client>>,
    codes: Mutex<HashMap<String, Code>>,
    /// refresh token -> (client id, resource, scope)
    refresh: Mutex<HashMap<String, (String, String, String)>>,
    events: Mutex<Vec<String>>,
    counter: Mutex<u64>,
}

/// The running server.
pub(crate) struct AuthorizationServer {
    /// `http://127.0.0.1:PORT`.
    pub(crate) origin: String,
    /// The issuer identifier.
    pub(crate) issuer: String,
    inner: Arc<Inner>,
    key: Arc<SigningKey>,
}

struct App {
    inner: Arc<Inner>,
    key: Arc<SigningKey>,
    origin: String,
}

impl AuthorizationServer {
    pub(crate) async fn start(behaviour: Behaviour) -> AuthorizationServer {
        Self::start_with(behaviour, |_, _| axum::Router::new()).await
    }

    /// Also serve the routes `more` makes (given the origin and the signing key) on the
    /// same origin: a 2025-03-26 MCP server whose origin is its authorization server.
    pub(crate) async fn start_with(
        behaviour: Behaviour,
        more: impl FnOnce(&str, &SigningKey) -> axum::Router,
    ) -> AuthorizationServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let issuer = match behaviour.metadata_at {
            MetadataAt::Rfc8414Root | MetadataAt::OidcRoot | MetadataAt::Nowhere => origin.clone(),
            _ => format!("{origin}/tenant1"),
        };
        let inner = Arc::new(Inner::default());
        *inner.behaviour.lock().unwrap() = behaviour;
        let key = Arc::new(SigningKey::new("as-key"));
        let app = Arc::new(App {
            inner: Arc::clone(&inner),
            key: Arc::clone(&key),
            origin: origin.clone(),
        });
        let router = axum::Router::new()
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/register", post(register))
            .route("/jwks", get(jwks))
            .fallback(metadata)
            .with_state(app)
            .merge(more(&origin, &key));
        tokio::spawn(async move { axum::serve(listener, router).await });
        AuthorizationServer {
            origin,
            issuer,
            inner,
            key,
        }
    }

    pub(crate) fn jwks_url(&self) -> String {
        format!("{}/jwks", self.origin)
    }

    /// What happened, in order (`GET /path 200`, `register ...`, `authorize ...`,
    /// `token ...`).
    pub(crate) fn events(&self) -> Vec<String> {
        self.inner.events.lock().unwrap().clone()
    }

    pub(crate) fn events_starting(&self, prefix: &str) -> Vec<String> {
        self.events()
            .into_iter()
            .filter(|e| e.starts_with(prefix))
            .collect()
    }

    /// Register a client out of band.
    pub(crate) fn preregister(&self, id: &str, client: Client) {
        self.inner
            .clients
            .lock()
            .unwrap()
            .insert(id.to_owned(), client);
    }

    /// Forget every client registered so far.
    pub(crate) fn forget_clients(&self) {
        self.inner.clients.lock().unwrap().clear();
    }

    /// Forget every refresh token issued so far.
    pub(crate) fn revoke_refresh_tokens(&self) {
        self.inner.refresh.lock().unwrap().clear();
    }

    /// An access token for `resource` that expired a minute ago.
    pub(crate) fn expired_token(&self, resource: &str, scope: &str) -> String {
        self.key.sign(&json!({
            "iss": self.issuer, "sub": "alice", "client_id": "x", "aud": resource,
            "scope": scope, "iat": now() - 120, "exp": now() - 60,
        }))
    }
}

impl App {
    fn event(&self, text: String) {
        self.inner.events.lock().unwrap().push(text);
    }

    fn behaviour(&self) -> Behaviour {
        self.inner.behaviour.lock().unwrap().clone()
    }

    fn issuer(&self) -> String {
        match self.behaviour().metadata_at {
            MetadataAt::Rfc8414Root | MetadataAt::OidcRoot | MetadataAt::Nowhere => {
                self.origin.clone()
            }
            _ => format!("{}/tenant1", self.origin),
        }
    }

    fn fresh(&self, what: &str) -> String {
        let mut counter = self.inner.counter.lock().unwrap();
        *counter += 1;
        format!("{what}-{}", *counter)
    }
}

type Shared = State<Arc<App>>;

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        axum::Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

/// Every GET not routed: the metadata, if this is where the behaviour publishes it.
async fn metadata(State(app): Shared, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let behaviour = app.behaviour();
    let location = match behaviour.metadata_at {
        MetadataAt::Rfc8414Root => "/.well-known/oauth-authorization-server",
        MetadataAt::OidcRoot => "/.well-known/openid-configuration",
        MetadataAt::Rfc8414Tenant => "/.well-known/oauth-authorization-server/tenant1",
        MetadataAt::OidcTenantAppended => "/tenant1/.well-known/openid-configuration",
        MetadataAt::Nowhere => "",
    };
    if path != location {
        app.event(format!("GET {path} 404"));
        return StatusCode::NOT_FOUND.into_response();
    }
    app.event(format!("GET {path} 200"));
    let origin = &app.origin;
    let mut document = json!({
        "issuer": app.issuer(),
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "jwks_uri": format!("{origin}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "token_endpoint_auth_methods_supported": behaviour.auth_methods,
        "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
    });
    if behaviour.registration {
        document["registration_endpoint"] = json!(format!("{origin}/register"));
    }
    if behaviour.pkce_advertised {
        document["code_challenge_methods_supported"] = json!(["S256"]);
    }
    if behaviour.cimd {
        document["client_id_metadata_document_supported"] = json!(true);
    }
    if matches!(behaviour.iss, Iss::Correct | Iss::Wrong | Iss::Missing) {
        document["authorization_response_iss_parameter_supported"] = json!(true);
    }
    if let Some(scopes) = &behaviour.scopes_supported {
        document["scopes_supported"] = json!(scopes);
    }
    axum::Json(document).into_response()
}

async fn jwks(State(app): Shared) -> impl IntoResponse {
    axum::Json(JwkSet {
        keys: vec![app.key.jwk.clone()],
    })
}

/// `application/x-www-form-urlencoded` (or a query string) as pairs.
fn pairs(text: &str) -> HashMap<String, String> {
    Url::parse(&format!("http://x/?{text}"))
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

async fn register(State(app): Shared, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let method = request["token_endpoint_auth_method"]
        .as_str()
        .unwrap_or("client_secret_basic")
        .to_owned();
    if !app.behaviour().auth_methods.contains(&method.as_str()) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "unsupported token_endpoint_auth_method",
        );
    }
    let id = app.fresh("dcr-client");
    let secret = (method != "none").then(|| app.fresh("secret"));
    let redirect_uris: Vec<String> = request["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    app.event(format!(
        "register method={method} application_type={} grant_types={}",
        request["application_type"].as_str().unwrap_or("-"),
        request["grant_types"]
    ));
    app.inner.clients.lock().unwrap().insert(
        id.clone(),
        Client {
            secret: secret.clone(),
            method: method.clone(),
            redirect_uris: redirect_uris.clone(),
            jwk: None,
        },
    );
    let mut answer = json!({
        "client_id": id,
        "token_endpoint_auth_method": method,
        "redirect_uris": redirect_uris,
    });
    if let Some(secret) = secret {
        answer["client_secret"] = json!(secret);
    }
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

/// The client `id`: registered, or a Client ID Metadata Document fetched from its URL.
async fn client(app: &App, id: &str) -> Option<Client> {
    if let Some(client) = app.inner.clients.lock().unwrap().get(id) {
        return Some(client.clone());
    }
    if !(app.behaviour().cimd && id.starts_with("http")) {
        return None;
    }
    let text = reqwest::get(id).await.ok()?.text().await.ok()?;
    let document: Value = serde_json::from_str(&text).ok()?;
    app.event(format!("fetched client metadata {id}"));
    if document["client_id"] != id {
        return None;
    }
    Some(Client {
        secret: None,
        method: document["token_endpoint_auth_method"]
            .as_str()
            .unwrap_or("none")
            .to_owned(),
        redirect_uris: document["redirect_uris"]
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        jwk: None,
    })
}

async fn authorize(State(app): Shared, request: Request) -> Response {
    let query = pairs(request.uri().query().unwrap_or(""));
    let get = |k: &str| query.get(k).cloned().unwrap_or_default();
    let (client_id, redirect_uri, state) = (get("client_id"), get("redirect_uri"), get("state"));
    let scope = granted_scope(&app.behaviour(), &get("scope"));
    app.event(format!(
        "authorize client={client_id} scope={:?} resource={} method={}",
        get("scope"),
        get("resource"),
        get("code_challenge_method")
    ));
    let Some(client) = client(&app, &client_id).await else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_client", "unknown client");
    };
    if !client.redirect_uris.contains(&redirect_uri) {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "redirect_uri");
    }
    if get("code_challenge_method") != "S256" || get("code_challenge").is_empty() {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "PKCE S256 required",
        );
    }
    let behaviour = app.behaviour();
    let state = if behaviour.tamper_state {
        format!("{state}-tampered")
    } else {
        state
    };
    let mut target = Url::parse(&redirect_uri).unwrap();
    {
        let mut q = target.query_pairs_mut();
        if behaviour.refuse {
            q.append_pair("error", "access_denied")
                .append_pair("error_description", "the resource owner said no");
        } else {
            let code = app.fresh("code");
            app.inner.codes.lock().unwrap().insert(
                code.clone(),
                Code {
                    client_id,
                    challenge: get("code_challenge"),
                    redirect_uri: redirect_uri.clone(),
                    resource: get("resource"),
                    scope,
                },
            );
            q.append_pair("code", &code);
        }
        q.append_pair("state", &state);
        match behaviour.iss {
            Iss::Correct => {
                q.append_pair("iss", &app.issuer());
            }
            Iss::Wrong => {
                q.append_pair("iss", "https://attacker.example");
            }
            Iss::Missing | Iss::Absent => {}
        }
    }
    (StatusCode::FOUND, [("location", target.to_string())]).into_response()
}

/// The requested scope less what the server withholds.
fn granted_scope(behaviour: &Behaviour, asked: &str) -> String {
    asked
        .split_whitespace()
        .filter(|s| !behaviour.withheld_scopes.contains(s))
        .collect::<Vec<_>>()
        .join(" ")
}
