//! Step-up and its limit, and what the client refuses: an authorization response from
//! another issuer (RFC 9207) — an error response too, whose error is then not reported —
//! or with another state, Protected Resource Metadata for another resource, an
//! authorization server without PKCE S256, and a token for another resource.

use std::sync::Arc;

use ferry::http_client::oauth::{MemoryTokenStore, OAuthError, StoreKey, TokenStore};

use crate::authorization_server::{AuthorizationServer, Behaviour, Iss};
use crate::{builder, call, protected_server, setup};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_asks_for_the_union_of_scopes_and_stops_at_its_limit() {
    let (as_, url) = setup(Behaviour::default()).await;
    let oauth = builder(&url).build().unwrap();
    assert_eq!(call(&url, &oauth, "admin").await.unwrap(), "done");
    let authorize = as_.events_starting("authorize");
    assert_eq!(authorize.len(), 2, "{authorize:?}");
    assert!(
        authorize[0].contains("scope=\"mcp:tools\""),
        "{authorize:?}"
    );
    assert!(
        authorize[1].contains("scope=\"mcp:admin mcp:tools\""),
        "{authorize:?}"
    );

    // A server that never grants mcp:admin: one authorization, then `max_step_up` more.
    let (as_, url) = setup(Behaviour {
        withheld_scopes: vec!["mcp:admin"],
        ..Behaviour::default()
    })
    .await;
    let oauth = builder(&url).max_step_up(1).build().unwrap();
    let error = call(&url, &oauth, "admin").await.unwrap_err();
    assert!(error.contains("403"), "{error}");
    assert!(error.contains("step-up"), "{error}");
    assert_eq!(
        as_.events_starting("authorize").len(),
        2,
        "{:?}",
        as_.events()
    );
    // The token still serves what it was granted for.
    assert_eq!(
        call(&url, &oauth, "whoami")
            .await
            .unwrap()
            .split(' ')
            .nth(1),
        Some("mcp:tools")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_response_from_another_issuer_is_rejected() {
    for iss in [Iss::Wrong, Iss::Missing] {
        let (as_, url) = setup(Behaviour {
            iss,
            ..Behaviour::default()
        })
        .await;
        let oauth = builder(&url).build().unwrap();
        let error = call(&url, &oauth, "whoami").await.unwrap_err();
        assert!(error.contains("RFC 9207"), "{iss:?}: {error}");
        assert!(
            as_.events_starting("token").is_empty(),
            "the code never reaches a token endpoint"
        );
    }
    // Not advertised, not sent: accepted.
    let (_as, url) = setup(Behaviour {
        iss: Iss::Absent,
        ..Behaviour::default()
    })
    .await;
    call(&url, &builder(&url).build().unwrap(), "whoami")
        .await
        .unwrap();
}

/// What `OAuthClient::authorize` says against a server that refuses the authorization
/// (redirects with `error=access_denied`) with `iss` as given and the state tampered or not.
async fn refused_with(iss: Iss, tamper_state: bool) -> OAuthError {
    let (as_, url) = setup(Behaviour {
        iss,
        refuse: true,
        tamper_state,
        ..Behaviour::default()
    })
    .await;
    let error = builder(&url)
        .build()
        .unwrap()
        .authorize()
        .await
        .unwrap_err();
    assert_eq!(as_.events_starting("authorize").len(), 1, "{iss:?}");
    assert!(as_.events_starting("token").is_empty(), "{iss:?}");
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_response_is_reported_only_when_its_issuer_and_state_hold() {
    // From the issuer (or without iss where none is promised): the server's error.
    for iss in [Iss::Correct, Iss::Absent] {
        let error = refused_with(iss, false).await;
        let OAuthError::AuthorizationRefused(refusal) = &error else {
            panic!("{iss:?}: {error:?}");
        };
        assert_eq!(refusal.error, "access_denied");
        assert_eq!(
            refusal.description.as_deref(),
            Some("the resource owner said no")
        );
        let text = error.to_string();
        assert!(
            text.contains("access_denied (the resource owner said no)"),
            "{text}"
        );
    }
    // Another issuer's iss, or none where the server promised it: a mismatch, and the
    // error it carried is neither acted on nor shown.
    for (iss, got) in [
        (Iss::Wrong, Some("https://attacker.example")),
        (Iss::Missing, None),
    ] {
        let error = refused_with(iss, false).await;
        let OAuthError::IssuerMismatch { got: actual, .. } = &error else {
            panic!("{iss:?}: {error:?}");
        };
        assert_eq!(actual.as_deref(), got);
        let text = format!("{error} {error:?}");
        assert!(text.contains("RFC 9207"), "{text}");
        assert!(
            !text.contains("access_denied") && !text.contains("said no"),
            "{text}"
        );
    }
    // The right issuer but another state: not this authorization's error either.
    let error = refused_with(Iss::Correct, true).await;
    assert!(matches!(error, OAuthError::StateMismatch), "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_for_another_resource_or_without_pkce_is_refused_before_authorizing() {
    let as_ = AuthorizationServer::start(Behaviour::default()).await;
    let url = protected_server(&as_, Some("/other")).await;
    let oauth = builder(&url).build().unwrap();
    let error = call(&url, &oauth, "whoami").await.unwrap_err();
    let other = url.replace("/mcp", "/other");
    assert!(
        error.contains(&format!("metadata is for {other}, not for {url}")),
        "{error}"
    );
    assert!(as_.events().is_empty(), "{:?}", as_.events());

    let (as_, url) = setup(Behaviour {
        pkce_advertised: false,
        ..Behaviour::default()
    })
    .await;
    let error = call(&url, &builder(&url).build().unwrap(), "whoami")
        .await
        .unwrap_err();
    assert!(error.contains("PKCE S256"), "{error}");
    assert!(as_.events_starting("register").is_empty());
    assert!(as_.events_starting("authorize").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_never_sent_to_another_resource() {
    let as_ = AuthorizationServer::start(Behaviour::default()).await;
    let a = protected_server(&as_, None).await;
    let b = protected_server(&as_, None).await;
    let store: Arc<MemoryTokenStore> = Arc::new(MemoryTokenStore::new());
    call(
        &a,
        &builder(&a).store(store.clone()).build().unwrap(),
        "whoami",
    )
    .await
    .unwrap();
    // Same store, same authorization server, another server: its own authorization.
    call(
        &b,
        &builder(&b).store(store.clone()).build().unwrap(),
        "whoami",
    )
    .await
    .unwrap();
    let authorize = as_.events_starting("authorize");
    assert_eq!(authorize.len(), 2);
    assert!(
        authorize[1].contains(&format!("resource={b}")),
        "{authorize:?}"
    );
    for url in [&a, &b] {
        let key = StoreKey {
            issuer: as_.issuer.clone(),
            resource: url.clone(),
        };
        assert!(store.load(&key).await.unwrap().is_some());
    }
}
