//! Ferry's OAuth client ([`OAuthClient`] as the HTTP client's auth hook) against Ferry's HTTP
//! server protected by its resource-server layer, and a real authorization server inside the
//! test suite (`authorization_server.rs`: metadata, authorization and token endpoints,
//! registration, JWKS), all over real sockets on 127.0.0.1: discovery variants, each
//! registration path, each token-endpoint authentication method, refresh (before expiry, on
//! a stale token, falling back to a full flow), step-up and its limit, and the refusals
//! (RFC 9207 `iss` mismatch, metadata for another resource, no PKCE), a 2025-03-26
//! server without Protected Resource Metadata (`legacy.rs`), and many requests in flight
//! when the token goes stale or needs a step-up (`concurrency.rs`).

#[allow(dead_code)] // the http_auth tests' issuer: only its signing key is used here
#[path = "../http_auth/issuer.rs"]
mod issuer;

mod authorization_server;
mod concurrency;
mod legacy;
mod protected;
mod refusals;

pub(crate) use protected::{mcp_server, protected_server, protected_server_with};

use std::sync::Arc;
use std::time::Duration;

use authorization_server::{AuthorizationServer, Behaviour, Client, MetadataAt};
use base64::Engine as _;
use ferry::client::Client as McpClient;
use ferry::http_client::HttpClientConfig;
use ferry::http_client::oauth::{
    ClientCredentials, HeadlessAuthorizer, MemoryTokenStore, OAuthClient, OAuthClientBuilder,
    StoreKey, TokenStore, client_metadata_document,
};
use p256::pkcs8::EncodePrivateKey;
use serde_json::json;
use sha2::{Digest, Sha256};

/// The redirect URI: the headless authorizer stops there (nothing listens).
const REDIRECT: &str = "http://127.0.0.1:9/callback";

async fn setup(behaviour: Behaviour) -> (AuthorizationServer, String) {
    let as_ = AuthorizationServer::start(behaviour).await;
    let url = protected_server(&as_, None).await;
    (as_, url)
}

fn builder(url: &str) -> OAuthClientBuilder {
    OAuthClient::builder(url)
        .client_name("oauth-client-test")
        .authorizer(Arc::new(HeadlessAuthorizer::new(REDIRECT)))
}

/// Connect with `oauth`, call `tool`; its text, or the error (with the OAuth client's).
async fn call(url: &str, oauth: &OAuthClient, tool: &str) -> Result<String, String> {
    let config = HttpClientConfig::default().auth(Arc::new(oauth.clone()));
    let result = async {
        let (client, connection) = McpClient::builder("oauth-client-test", "1.0.0")
            .timeout(Duration::from_secs(20))
            .connect_http(url, config)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let result = client.call_tool(tool, json!({})).await;
        drop(client);
        connection.close().await;
        let result = result.map_err(|e| format!("tools/call: {e}"))?;
        Ok(serde_json::to_value(&result.content[0]).unwrap()["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }
    .await;
    result.map_err(|e: String| format!("{e} / {:?}", oauth.last_error()))
}

fn preregistered(as_: &AuthorizationServer, id: &str, method: &str, secret: Option<&str>) {
    as_.preregister(
        id,
        Client {
            secret: secret.map(str::to_owned),
            method: method.into(),
            redirect_uris: vec![REDIRECT.into()],
            jwk: None,
        },
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_registration_pkce_code_flow_then_refresh_before_expiry() {
    let (as_, url) = setup(Behaviour::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let oauth = builder(&url).store(store.clone()).build().unwrap();
    let text = call(&url, &oauth, "whoami").await.unwrap();
    assert!(text.starts_with("dcr-client-"), "{text}");
    assert!(text.ends_with("mcp:tools"), "{text}");

    // Discovery: the PRM from the challenge, then RFC 8414 at the issuer's root.
    assert_eq!(
        as_.events_starting("GET"),
        ["GET /.well-known/oauth-authorization-server 200"]
    );
    // Registration: a native public client (its redirect URI is on loopback).
    assert_eq!(
        as_.events_starting("register"),
        [
            r#"register method=none application_type=native grant_types=["authorization_code","refresh_token"]"#
        ]
    );
    let authorize = as_.events_starting("authorize");
    assert_eq!(authorize.len(), 1, "{authorize:?}");
    assert!(
        authorize[0].ends_with(&format!("scope=\"mcp:tools\" resource={url} method=S256")),
        "{authorize:?}"
    );
    let tokens = as_.events_starting("token");
    assert_eq!(tokens.len(), 1);
    assert!(tokens[0].starts_with("token grant=authorization_code auth=none"));
    assert!(tokens[0].contains(&format!("resource={url}")));

    // Stored under the issuer and the resource.
    let key = StoreKey {
        issuer: as_.issuer.clone(),
        resource: url.clone(),
    };
    let stored = store.load(&key).await.unwrap().expect("stored credentials");
    assert!(stored.client.unwrap().client_id.starts_with("dcr-client-"));
    let first = stored.tokens.unwrap();
    assert!(first.refresh_token.is_some());

    // A token about to expire (within the 30 s margin) is refreshed before the request.
    let mut expiring = store.load(&key).await.unwrap().unwrap();
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let tokens = expiring.tokens.as_mut().unwrap();
    tokens.issued_at = Some(unix_now - 3590);
    tokens.expires_at = Some(unix_now + 10);
    store.save(&key, &expiring).await.unwrap();
    let eager = builder(&url).store(store.clone()).build().unwrap();
    call(&url, &eager, "whoami").await.unwrap();
    let refreshes = as_.events_starting("token grant=refresh_token");
    assert!(!refreshes.is_empty(), "{:?}", as_.events());
    assert_eq!(
        as_.events_starting("authorize").len(),
        1,
        "no new authorization"
    );
    let now = store.load(&key).await.unwrap().unwrap().tokens.unwrap();
    assert_ne!(now.access_token, first.access_token);
    assert_ne!(now.refresh_token, first.refresh_token, "rotated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_token_is_refreshed_on_401_and_a_dead_refresh_token_means_a_new_flow_or_registration()
 {
    let (as_, url) = setup(Behaviour::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let oauth = builder(&url).store(store.clone()).build().unwrap();
    call(&url, &oauth, "whoami").await.unwrap();
    let key = StoreKey {
        issuer: as_.issuer.clone(),
        resource: url.clone(),
    };
    // The stored access token expires (the client does not know when: no expires_at).
    let stale = |mut creds: ferry::http_client::oauth::StoredCredentials| {
        let tokens = creds.tokens.as_mut().unwrap();
        tokens.access_token = as_.expired_token(&url, "mcp:tools");
        tokens.expires_at = None;
        creds
    };
    let creds = stale(store.load(&key).await.unwrap().unwrap());
    store.save(&key, &creds).await.unwrap();
    let next = builder(&url).store(store.clone()).build().unwrap();
    call(&url, &next, "whoami").await.unwrap();
    assert_eq!(as_.events_starting("token grant=refresh_token").len(), 1);
    assert_eq!(as_.events_starting("authorize").len(), 1);

    // Stale again, and the refresh token revoked: a full flow (no new registration).
    let creds = stale(store.load(&key).await.unwrap().unwrap());
    store.save(&key, &creds).await.unwrap();
    as_.revoke_refresh_tokens();
    let last = builder(&url).store(store.clone()).build().unwrap();
    call(&url, &last, "whoami").await.unwrap();
    assert_eq!(
        as_.events_starting("token grant=refresh_token refused")
            .len(),
        1,
        "{:?}",
        as_.events()
    );
    assert_eq!(as_.events_starting("authorize").len(), 2);
    assert_eq!(as_.events_starting("register").len(), 1);

    // Stale again, and the server forgot the registered client: registered again.
    let creds = stale(store.load(&key).await.unwrap().unwrap());
    let forgotten = creds.client.clone().unwrap().client_id;
    store.save(&key, &creds).await.unwrap();
    as_.forget_clients();
    let again = builder(&url).store(store.clone()).build().unwrap();
    let text = call(&url, &again, "whoami").await.unwrap();
    assert!(!text.starts_with(&format!("{forgotten} ")), "{text}");
    assert_eq!(
        as_.events_starting("token grant=refresh_token refused=invalid_client")
            .len(),
        1,
        "{:?}",
        as_.events()
    );
    assert_eq!(as_.events_starting("register").len(), 2);
    assert_eq!(as_.events_starting("authorize").len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_is_found_where_each_variant_publishes_it() {
    let cases = [
        (
            MetadataAt::OidcRoot,
            &[
                "GET /.well-known/oauth-authorization-server 404",
                "GET /.well-known/openid-configuration 200",
            ][..],
        ),
        (
            MetadataAt::Rfc8414Tenant,
            &["GET /.well-known/oauth-authorization-server/tenant1 200"][..],
        ),
        (
            MetadataAt::OidcTenantAppended,
            &[
                "GET /.well-known/oauth-authorization-server/tenant1 404",
                "GET /.well-known/openid-configuration/tenant1 404",
                "GET /tenant1/.well-known/openid-configuration 200",
            ][..],
        ),
    ];
    for (metadata_at, tried) in cases {
        let (as_, url) = setup(Behaviour {
            metadata_at,
            ..Behaviour::default()
        })
        .await;
        let oauth = builder(&url).build().unwrap();
        call(&url, &oauth, "whoami")
            .await
            .unwrap_or_else(|e| panic!("{metadata_at:?}: {e}"));
        assert_eq!(as_.events_starting("GET"), tried, "{metadata_at:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_token_endpoint_auth_method_the_server_offers_is_used() {
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        let (as_, url) = setup(Behaviour {
            auth_methods: vec![method],
            ..Behaviour::default()
        })
        .await;
        let oauth = builder(&url).build().unwrap();
        call(&url, &oauth, "whoami")
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let tokens = as_.events_starting("token");
        assert!(
            tokens[0].starts_with(&format!("token grant=authorization_code auth={method}")),
            "{tokens:?}"
        );
        assert!(as_.events_starting("register")[0].contains(&format!("method={method}")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preregistered_credentials_are_used_without_registration() {
    let (as_, url) = setup(Behaviour {
        registration: false,
        auth_methods: vec!["client_secret_basic"],
        ..Behaviour::default()
    })
    .await;
    preregistered(&as_, "pre:client", "client_secret_basic", Some("s3cret/+"));
    let oauth = builder(&url)
        .client_credentials(ClientCredentials {
            client_id: "pre:client".into(),
            client_secret: Some("s3cret/+".into()),
            token_endpoint_auth_method: None,
        })
        .build()
        .unwrap();
    let text = call(&url, &oauth, "whoami").await.unwrap();
    assert!(text.starts_with("pre:client "), "{text}");
    assert!(as_.events_starting("register").is_empty());

    // Without credentials, no way to get a client id: a clear error.
    let (_as, url) = setup(Behaviour {
        registration: false,
        ..Behaviour::default()
    })
    .await;
    let oauth = builder(&url).build().unwrap();
    let error = call(&url, &oauth, "whoami").await.unwrap_err();
    assert!(
        error.contains("no client credentials are configured"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_id_metadata_document_is_the_client_id_where_supported() {
    let (as_, url) = setup(Behaviour {
        cimd: true,
        ..Behaviour::default()
    })
    .await;
    // The document, served on 127.0.0.1; the server fetches it at /authorize.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let doc_url = format!("http://{}/client.json", listener.local_addr().unwrap());
    let document = client_metadata_document(
        &doc_url,
        "oauth-client-test",
        &[REDIRECT],
        &["authorization_code", "refresh_token"],
    );
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || async move { axum::Json(document) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let oauth = builder(&url).client_metadata_url(&doc_url).build().unwrap();
    let text = call(&url, &oauth, "whoami").await.unwrap();
    assert!(text.starts_with(&format!("{doc_url} ")), "{text}");
    assert!(as_.events_starting("register").is_empty());
    assert_eq!(
        as_.events_starting("fetched"),
        [format!("fetched client metadata {doc_url}")]
    );

    // A server without support gets a dynamic registration instead.
    let (as_, url) = setup(Behaviour::default()).await;
    let oauth = builder(&url).client_metadata_url(&doc_url).build().unwrap();
    call(&url, &oauth, "whoami").await.unwrap();
    assert_eq!(as_.events_starting("register").len(), 1);
}

/// A P-256 key as PKCS#8 PEM, and its public JWK.
fn client_key() -> (String, jsonwebtoken::jwk::Jwk) {
    let kid = "client-key";
    let jwk = issuer::SigningKey::new(kid).jwk;
    // The same derivation as issuer::SigningKey.
    let seed = Sha256::digest(format!("ferry test key {kid}").as_bytes());
    let der = p256::SecretKey::from_slice(&seed)
        .unwrap()
        .to_pkcs8_der()
        .unwrap();
    let body = base64::engine::general_purpose::STANDARD.encode(der.as_bytes());
    let pem = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n");
    (pem, jwk)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_grant_with_private_key_jwt_and_with_a_secret() {
    let (as_, url) = setup(Behaviour {
        auth_methods: vec!["private_key_jwt", "client_secret_basic"],
        ..Behaviour::default()
    })
    .await;
    let (pem, jwk) = client_key();
    as_.preregister(
        "machine",
        Client {
            secret: None,
            method: "private_key_jwt".into(),
            redirect_uris: Vec::new(),
            jwk: Some(jwk),
        },
    );
    let oauth = OAuthClient::builder(&url)
        .client_credentials(ClientCredentials {
            client_id: "machine".into(),
            client_secret: None,
            token_endpoint_auth_method: Some("private_key_jwt".into()),
        })
        .private_key_jwt(&pem, "ES256", Some("client-key"))
        .client_credentials_grant()
        .build()
        .unwrap();
    let text = call(&url, &oauth, "whoami").await.unwrap();
    assert_eq!(text, "machine mcp:tools");
    let tokens = as_.events_starting("token");
    assert_eq!(tokens.len(), 1);
    assert!(
        tokens[0].starts_with("token grant=client_credentials auth=private_key_jwt"),
        "{tokens:?}"
    );
    assert!(as_.events_starting("authorize").is_empty());

    // The same grant with client_secret_basic.
    preregistered(&as_, "machine2", "client_secret_basic", Some("pw"));
    let oauth = OAuthClient::builder(&url)
        .client_credentials(ClientCredentials {
            client_id: "machine2".into(),
            client_secret: Some("pw".into()),
            token_endpoint_auth_method: None,
        })
        .client_credentials_grant()
        .build()
        .unwrap();
    assert_eq!(
        call(&url, &oauth, "whoami").await.unwrap(),
        "machine2 mcp:tools"
    );

    // A wrong key is refused by the token endpoint, and the call fails.
    let wrong_pem = {
        let seed = Sha256::digest(b"ferry test key other");
        let der = p256::SecretKey::from_slice(&seed)
            .unwrap()
            .to_pkcs8_der()
            .unwrap();
        let body = base64::engine::general_purpose::STANDARD.encode(der.as_bytes());
        format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n")
    };
    let oauth = OAuthClient::builder(&url)
        .client_credentials(ClientCredentials {
            client_id: "machine".into(),
            client_secret: None,
            token_endpoint_auth_method: Some("private_key_jwt".into()),
        })
        .private_key_jwt(&wrong_pem, "ES256", None)
        .client_credentials_grant()
        .build()
        .unwrap();
    let error = call(&url, &oauth, "whoami").await.unwrap_err();
    assert!(error.contains("invalid_client"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorize_ahead_of_connecting_reuses_a_valid_token() {
    let (as_, url) = setup(Behaviour::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let oauth = builder(&url).store(store.clone()).build().unwrap();
    let first = oauth.authorize().await.unwrap();
    assert_eq!(as_.events_starting("token").len(), 1);
    // Again, and from another client on the same store: the same token, no new grant.
    assert_eq!(oauth.authorize().await.unwrap(), first);
    let other = builder(&url).store(store.clone()).build().unwrap();
    assert_eq!(other.authorize().await.unwrap(), first);
    assert_eq!(as_.events_starting("token").len(), 1);
    // The token serves the connection from its first request (discovery already ran).
    call(&url, &other, "whoami").await.unwrap();
    assert_eq!(as_.events_starting("authorize").len(), 1);
}
