//! The OAuth resource-server layer of the HTTP server (feature `http-auth`) against a small
//! authorization server inside the test suite (`issuer.rs`), over real sockets on
//! 127.0.0.1: metadata documents, challenges, every kind of bad token, step-up, sessions
//! bound to their principal, JWKS rotation, introspection, and the claims in handlers.

mod issuer;
mod visibility;

use std::time::Duration;

use ferry::http::HttpConfig;
use ferry::http::auth::{Auth, IntrospectionVerifier, Jwks, JwtVerifier, ResourceServer};
use ferry::server::Server;
use issuer::{INTROSPECTION_CLIENT, SigningKey, TestIssuer, now, raw_token};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

fn server() -> Server {
    Server::builder("http-auth-test", "1.0.0")
        .tool(
            "whoami",
            "The caller",
            |_: Nothing, auth: Auth| async move {
                json!({
                    "sub": auth.0.subject,
                    "client": auth.0.client_id,
                    "scopes": auth.0.scopes,
                })
                .to_string()
            },
        )
        .tool("admin", "Needs mcp:admin", |_: Nothing| async { "done" })
        .tool("secret", "Only for mcp:admin", |_: ()| async {
            "classified"
        })
        .tool_visible_if("secret", ferry::http::auth::has_scope("mcp:admin"))
        .build()
}

struct Fixture {
    /// The server behind the endpoint (to announce visibility changes).
    server: Server,
    issuer: TestIssuer,
    /// The MCP endpoint (also the resource URI).
    url: String,
    base: String,
    http: reqwest::Client,
}

/// How the fixture's resource server verifies tokens.
enum Verify {
    Jwt {
        min_refetch: Duration,
    },
    /// JWTs, also those typed `JWT` or not typed (`JwtVerifier::plain_jwt`).
    PlainJwt,
    Introspection,
}

async fn start(verify: Verify) -> Fixture {
    start_with(verify, HttpConfig::default()).await
}

/// [`start`] with `config` (its `auth` is set here).
async fn start_with(verify: Verify, config: HttpConfig) -> Fixture {
    let issuer = TestIssuer::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/mcp");
    let auth = match verify {
        Verify::Jwt { min_refetch } => {
            let jwks = Jwks::new(issuer.jwks_url()).min_refetch(min_refetch);
            ResourceServer::new(&url, JwtVerifier::new(jwks, &issuer.url, &url))
        }
        Verify::PlainJwt => {
            let jwks = Jwks::new(issuer.jwks_url());
            ResourceServer::new(&url, JwtVerifier::new(jwks, &issuer.url, &url).plain_jwt())
        }
        Verify::Introspection => {
            let (id, secret) = INTROSPECTION_CLIENT;
            ResourceServer::new(
                &url,
                IntrospectionVerifier::new(issuer.introspection_url(), id, secret),
            )
        }
    }
    .unwrap()
    .authorization_server(&issuer.url)
    .scopes_supported(["mcp:tools", "mcp:admin"])
    .require_scope("mcp:tools")
    .require_scope_for_tool("admin", "mcp:admin");
    let config = config.auth(auth);
    let server = server();
    tokio::spawn(ferry::http::serve(server.clone(), listener, config));
    Fixture {
        server,
        issuer,
        url,
        base,
        http: reqwest::Client::new(),
    }
}

fn call(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

impl Fixture {
    /// A stateless-era `tools/call` with the headers a conforming client sends.
    fn post(&self, name: &str, token: Option<&str>) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .body(call(name).to_string());
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }

    fn challenge(&self, error: Option<&str>) -> String {
        let mut expected = format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp:tools\"",
            self.metadata_url()
        );
        if let Some(error) = error {
            expected.push_str(&format!(", error=\"{error}\""));
        }
        expected
    }

    /// The request is refused with 401 `invalid_token`, and nothing more is said.
    async fn assert_invalid(&self, response: reqwest::Response, case: &str) {
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{case}");
        assert_eq!(
            response.headers()["www-authenticate"],
            self.challenge(Some("invalid_token")).as_str(),
            "{case}"
        );
        assert_eq!(
            response.text().await.unwrap(),
            r#"{"error":"invalid_token"}"#,
            "{case}"
        );
    }
}

async fn result_text(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {body}"));
    serde_json::from_str(text).unwrap_or(Value::String(text.to_owned()))
}

fn jwt() -> Verify {
    Verify::Jwt {
        min_refetch: Duration::ZERO,
    }
}

#[tokio::test]
async fn metadata_is_served_at_both_well_known_locations() {
    let f = start(jwt()).await;
    for url in [
        f.metadata_url(),
        format!("{}/.well-known/oauth-protected-resource", f.base),
    ] {
        let response = f.http.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let document: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(
            document,
            json!({
                "resource": f.url,
                "authorization_servers": [f.issuer.url],
                "scopes_supported": ["mcp:tools", "mcp:admin"],
                "bearer_methods_supported": ["header"],
            }),
            "{url}"
        );
    }
}

#[tokio::test]
async fn no_token_gets_a_challenge_pointing_at_the_metadata() {
    let f = start(jwt()).await;
    let response = f.post("whoami", None).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["www-authenticate"],
        f.challenge(None).as_str()
    );
    // GET and DELETE are protected as well.
    let response = f.http.get(&f.url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = f.http.delete(&f.url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_valid_token_reaches_the_handler_with_its_claims() {
    let f = start(jwt()).await;
    let token = f.issuer.token(&f.url, "mcp:tools");
    let claims = result_text(f.post("whoami", Some(&token)).send().await.unwrap()).await;
    assert_eq!(
        claims,
        json!({"sub": "alice", "client": "test-client", "scopes": ["mcp:tools"]})
    );
}

#[tokio::test]
async fn access_token_types_and_clock_skew_within_the_leeway_are_accepted() {
    let f = start(jwt()).await;
    let issuer = &f.issuer;
    let valid = issuer.claims(&f.url, "mcp:tools");
    let mut skewed = valid.clone();
    skewed["iat"] = json!(now() + 10);
    let mut no_iat = valid.clone();
    no_iat.as_object_mut().unwrap().remove("iat");
    let cases = [
        ("at+jwt", issuer.key.sign(&valid)),
        (
            "application/at+jwt, any case",
            issuer.key.sign_with_header(
                &json!({"alg": "ES256", "kid": "k1", "typ": "Application/AT+JWT"}),
                &valid,
            ),
        ),
        ("issued 10 s ahead (leeway 30 s)", issuer.key.sign(&skewed)),
        ("no iat", issuer.key.sign(&no_iat)),
    ];
    for (case, token) in cases {
        let response = f.post("whoami", Some(&token)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{case}");
    }
}

#[tokio::test]
async fn plain_jwt_accepts_tokens_typed_jwt_or_untyped_but_nothing_else() {
    let f = start(Verify::PlainJwt).await;
    let issuer = &f.issuer;
    let valid = issuer.claims(&f.url, "mcp:tools");
    let header = |typ: Option<&str>| match typ {
        Some(typ) => json!({"alg": "ES256", "kid": "k1", "typ": typ}),
        None => json!({"alg": "ES256", "kid": "k1"}),
    };
    for typ in [Some("JWT"), Some("application/jwt"), None, Some("at+jwt")] {
        let token = issuer.key.sign_with_header(&header(typ), &valid);
        let response = f.post("whoami", Some(&token)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "typ {typ:?}");
    }
    let token = issuer.key.sign_with_header(&header(Some("id+jwt")), &valid);
    let response = f.post("whoami", Some(&token)).send().await.unwrap();
    f.assert_invalid(response, "typ id+jwt").await;
}

#[tokio::test]
async fn a_token_in_the_query_string_is_ignored() {
    let f = start(jwt()).await;
    let token = f.issuer.token(&f.url, "mcp:tools");
    let response = f
        .post("whoami", None)
        .query(&[("access_token", token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["www-authenticate"],
        f.challenge(None).as_str()
    );
}

#[tokio::test]
async fn bad_tokens_are_refused_without_detail() {
    let f = start(jwt()).await;
    let issuer = &f.issuer;
    let claims = |edit: &dyn Fn(&mut Value)| {
        let mut claims = issuer.claims(&f.url, "mcp:tools");
        edit(&mut claims);
        claims
    };
    // A key the JWKS does not publish, under the published key id.
    let mut forger = SigningKey::new("forger");
    forger.kid = "k1".into();
    let valid = claims(&|_| {});
    let public_key_as_secret = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".into());
        let secret = serde_json::to_vec(&issuer.key.jwk).unwrap();
        jsonwebtoken::encode(&header, &valid, &EncodingKey::from_secret(&secret)).unwrap()
    };
    let cases: Vec<(&str, String)> = vec![
        ("not a JWT", "abc.def".into()),
        ("garbage", "Zm9v".into()),
        ("wrong signature", forger.sign(&valid)),
        (
            "expired",
            issuer
                .key
                .sign(&claims(&|c| c["exp"] = json!(now() - 3600))),
        ),
        (
            "not yet valid",
            issuer
                .key
                .sign(&claims(&|c| c["nbf"] = json!(now() + 3600))),
        ),
        (
            "wrong audience",
            issuer
                .key
                .sign(&claims(&|c| c["aud"] = json!("http://127.0.0.1:1/other"))),
        ),
        (
            "no audience",
            issuer.key.sign(&claims(&|c| {
                c.as_object_mut().unwrap().remove("aud");
            })),
        ),
        (
            "wrong issuer",
            issuer
                .key
                .sign(&claims(&|c| c["iss"] = json!("http://127.0.0.1:1"))),
        ),
        (
            "alg none",
            raw_token(&json!({"alg": "none", "typ": "JWT"}), &valid, b""),
        ),
        (
            "alg none with the key id",
            raw_token(&json!({"alg": "none", "kid": "k1"}), &valid, b""),
        ),
        ("HS256 with the public key as secret", public_key_as_secret),
        // RFC 9068 and RFC 7515: the type, critical extensions, subject and issue time.
        (
            "an unknown critical extension",
            issuer.key.sign_with_header(
                &json!({"alg": "ES256", "kid": "k1", "typ": "at+jwt",
                        "crit": ["urn:example:binding"], "urn:example:binding": true}),
                &valid,
            ),
        ),
        (
            "typed JWT",
            issuer
                .key
                .sign_with_header(&json!({"alg": "ES256", "kid": "k1", "typ": "JWT"}), &valid),
        ),
        (
            "not typed",
            issuer
                .key
                .sign_with_header(&json!({"alg": "ES256", "kid": "k1"}), &valid),
        ),
        (
            "an ID token's type",
            issuer.key.sign_with_header(
                &json!({"alg": "ES256", "kid": "k1", "typ": "id+jwt"}),
                &valid,
            ),
        ),
        (
            "issued an hour from now",
            issuer
                .key
                .sign(&claims(&|c| c["iat"] = json!(now() + 3600))),
        ),
        (
            "iat not a number",
            issuer.key.sign(&claims(&|c| c["iat"] = json!("yesterday"))),
        ),
        (
            "no subject",
            issuer.key.sign(&claims(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            })),
        ),
        ("tampered claims", {
            let good = issuer.key.sign(&valid);
            let signature = good.rsplit('.').next().unwrap().to_owned();
            let forged = raw_token(
                &json!({"alg": "ES256", "kid": "k1", "typ": "at+jwt"}),
                &claims(&|c| c["sub"] = json!("mallory")),
                b"",
            );
            format!(
                "{}{signature}",
                forged.trim_end_matches('.').to_owned() + "."
            )
        }),
    ];
    for (case, token) in cases {
        let response = f.post("whoami", Some(&token)).send().await.unwrap();
        f.assert_invalid(response, case).await;
    }
    // A Bearer credential that is no token at all.
    let response = f
        .post("whoami", None)
        .header("authorization", "Bearer a b")
        .send()
        .await
        .unwrap();
    f.assert_invalid(response, "two words").await;
}

#[tokio::test]
async fn a_tool_needing_more_scope_gets_403_for_step_up() {
    let f = start(jwt()).await;
    let token = f.issuer.token(&f.url, "mcp:tools");
    let response = f.post("admin", Some(&token)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        response.headers()["www-authenticate"],
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp:tools mcp:admin\", error=\"insufficient_scope\"",
            f.metadata_url()
        )
        .as_str()
    );
    // Other tools still work with the smaller token; the stepped-up one gets through.
    assert_eq!(
        f.post("whoami", Some(&token))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    let stepped_up = f.issuer.token(&f.url, "mcp:tools mcp:admin");
    assert_eq!(
        result_text(f.post("admin", Some(&stepped_up)).send().await.unwrap()).await,
        "done"
    );
    // A token without the scope every request needs.
    let none = f.issuer.token(&f.url, "other");
    let response = f.post("whoami", Some(&none)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn jwks_rotation_is_picked_up() {
    let f = start(jwt()).await;
    let old = f.issuer.token(&f.url, "mcp:tools");
    assert_eq!(
        f.post("whoami", Some(&old)).send().await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(f.issuer.jwks_fetches(), 1);
    let rotated = SigningKey::new("k2");
    f.issuer.publish_only(&rotated);
    let new = rotated.sign(&f.issuer.claims(&f.url, "mcp:tools"));
    assert_eq!(
        f.post("whoami", Some(&new)).send().await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(f.issuer.jwks_fetches(), 2);
    // The retired key's tokens fail once the set no longer has it.
    let response = f.post("whoami", Some(&old)).send().await.unwrap();
    f.assert_invalid(response, "retired key").await;
}

#[tokio::test]
async fn unknown_key_ids_refetch_at_most_once_per_interval() {
    let f = start(Verify::Jwt {
        min_refetch: Duration::from_secs(3600),
    })
    .await;
    let token = f.issuer.token(&f.url, "mcp:tools");
    assert_eq!(
        f.post("whoami", Some(&token))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    let stranger = SigningKey::new("made-up");
    for _ in 0..3 {
        let token = stranger.sign(&f.issuer.claims(&f.url, "mcp:tools"));
        let response = f.post("whoami", Some(&token)).send().await.unwrap();
        f.assert_invalid(response, "unknown kid").await;
    }
    assert_eq!(f.issuer.jwks_fetches(), 1);
}

#[tokio::test]
async fn introspection_accepts_active_tokens_only() {
    let f = start(Verify::Introspection).await;
    let mut claims = f.issuer.claims(&f.url, "mcp:tools");
    claims["sub"] = json!("bob");
    f.issuer.activate("opaque-1", claims);
    let claims = result_text(f.post("whoami", Some("opaque-1")).send().await.unwrap()).await;
    assert_eq!(claims["sub"], "bob");
    let response = f.post("whoami", Some("opaque-2")).send().await.unwrap();
    f.assert_invalid(response, "inactive").await;
    // Active, but for another resource.
    f.issuer.activate(
        "opaque-3",
        f.issuer.claims("http://127.0.0.1:1/mcp", "mcp:tools"),
    );
    let response = f.post("whoami", Some("opaque-3")).send().await.unwrap();
    f.assert_invalid(response, "other audience").await;
    // Revoked after a first use: the positive result is cached (up to a minute).
    f.issuer.revoke("opaque-1");
    assert_eq!(
        f.post("whoami", Some("opaque-1"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn introspection_with_bad_client_credentials_is_unavailable_not_leaked() {
    let issuer = TestIssuer::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier =
        IntrospectionVerifier::new(issuer.introspection_url(), "resource-server", "wrong");
    let auth = ResourceServer::new(&url, verifier).unwrap();
    tokio::spawn(ferry::http::serve(
        server(),
        listener,
        HttpConfig::default().auth(auth),
    ));
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth("opaque")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"error":"temporarily_unavailable"}"#
    );
}

mod sessions;
