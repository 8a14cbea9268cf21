//! The authorization test harness, proved against the real OpenID Provider (npm
//! `oidc-provider`, see `auth-server/`): a headless person completes an authorization-code
//! flow with PKCE through the provider's sign-in and consent pages into Ferry's
//! `LoopbackAuthorizer`; the token works for `ferry call --url` against `ferry serve
//! --http` protected by the provider; the command without it, or with a token for another
//! resource, fails saying why, with exit code 3.

#![cfg(unix)]

mod oauth_support;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry::http_client::oauth::{AuthorizationRequest, Authorizer, LoopbackAuthorizer};
use oauth_support::login::{Person, deliver};
use oauth_support::{Provider, cli, count, start_protected_ferry};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A random string of `n` 64-bit words, hex (for PKCE verifiers and states).
fn random(words: usize) -> String {
    (0..words)
        .map(|_| {
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_u8(0);
            format!("{:016x}", hasher.finish())
        })
        .collect()
}

/// Tokens from an authorization-code flow of the public client `ferry-public`, approved
/// by `person`, for `resource`.
async fn code_flow(provider: &Provider, person: &mut Person, resource: &str) -> Value {
    let authorizer = LoopbackAuthorizer::new().open_browser(false);
    let redirect_uri = authorizer.redirect_uri();
    let verifier = random(4);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = random(2);
    let mut url = reqwest::Url::parse(&format!("{}/auth", provider.issuer)).unwrap();
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", "ferry-public")
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", "mcp:tools")
        .append_pair("resource", resource)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &state);
    let request = AuthorizationRequest {
        url: url.clone(),
        state: state.clone(),
    };
    let (response, ()) = tokio::join!(authorizer.authorize(&request), async {
        let redirect = person.approve(url.as_str()).await.expect("approved");
        assert_eq!(
            redirect.as_str().split('?').next(),
            Some(redirect_uri.as_str())
        );
        let status = deliver(&redirect).await.expect("delivered");
        assert_eq!(status, 200);
    });
    let response = response.expect("the loopback listener received the code");
    assert_eq!(response.state.as_deref(), Some(state.as_str()));
    assert_eq!(
        response.iss.as_deref(),
        Some(provider.issuer.as_str()),
        "RFC 9207"
    );
    let tokens = reqwest::Client::new()
        .post(format!("{}/token", provider.issuer))
        .form(&[
            ("grant_type", "authorization_code"),
            ("client_id", "ferry-public"),
            ("code", response.code().expect("a code")),
            ("code_verifier", &verifier),
            ("redirect_uri", &redirect_uri),
            ("resource", resource),
        ])
        .send()
        .await
        .unwrap();
    serde_json::from_slice(&tokens.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn a_person_approves_on_the_provider_and_the_token_opens_ferry_serve() {
    let provider = Provider::start(None);
    let (_ferry, endpoint) = start_protected_ferry(&provider).await;
    let http = reqwest::Client::new();

    // Without credentials: refused, said so, exit code 3.
    let run = cli::run(
        &["call", "--url", &endpoint, "--no-auth", "echo", "text=hi"],
        None,
    )
    .await;
    run.expect_code(3);
    assert!(
        run.stderr.contains("authorization failed")
            && run.stderr.contains("401 Unauthorized")
            && run.stderr.contains("resource_metadata=")
            && run.stderr.contains("--no-auth"),
        "{run:#?}"
    );

    // A person signs in and consents; the loopback listener gets the code.
    let mut person = Person::new("alice");
    let tokens = code_flow(&provider, &mut person, &endpoint).await;
    assert_eq!(person.pages, ["login", "consent"]);
    let access = tokens["access_token"].as_str().expect("an access token");
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    let events = provider.events_so_far(&http).await;
    assert_eq!(count(&events, "interaction", "prompt", "login"), 1);
    assert_eq!(
        count(&events, "grant", "grant_type", "authorization_code"),
        1
    );

    // The token opens the server.
    let bearer = format!("Authorization: Bearer {access}");
    let run = cli::run(
        &[
            "call",
            "--url",
            &endpoint,
            "--header",
            &bearer,
            "echo",
            "text=through the provider",
        ],
        None,
    )
    .await;
    run.expect_code(0);
    assert!(run.stdout.contains("through the provider"), "{run:#?}");

    // A token the provider issued for another resource: refused, exit code 3.
    let other = provider
        .service_token(&http, "http://127.0.0.1:1/mcp", "mcp:tools")
        .await;
    let bearer = format!("Authorization: Bearer {other}");
    let run = cli::run(
        &[
            "call", "--url", &endpoint, "--header", &bearer, "echo", "text=x",
        ],
        None,
    )
    .await;
    run.expect_code(3);
    assert!(
        run.stderr.contains("error=\"invalid_token\"")
            && run
                .stderr
                .contains("the Authorization header given with --header"),
        "{run:#?}"
    );
}
