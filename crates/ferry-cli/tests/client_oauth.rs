//! End to end: `ferry call --url URL ...` against `ferry serve --http` protected by a real
//! OpenID Provider (npm `oidc-provider`, see `auth-server/`), every part a real process on
//! 127.0.0.1. The command's first request gets 401; the command discovers the provider,
//! registers (dynamically, or as the pre-registered `ferry-public`), prints the
//! authorization URL; a headless person signs in and consents on the provider's pages
//! and the redirect reaches the command's loopback listener; the call succeeds. What the
//! provider did is observed through its event log (grants by type, registrations, pages
//! shown), not guessed from timing: a second command reuses the stored token (no grant
//! at all), an expired token is refreshed (a `refresh_token` grant, no login), a token
//! for another server is refused, a machine client needs no person, a 403 is answered by
//! a step-up, and every failure (a person who cancels, `--no-auth`, a wrong secret, a
//! scope never granted) ends the command with exit code 3 and the reason. `ferry check
//! --url` authorizes the same way (or sends the `--header` it is given).

#![cfg(unix)]

mod oauth_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferry::http_client::oauth::{FileTokenStore, StoreKey, StoredCredentials, TokenStore};
use oauth_support::cli::{Run, run};
use oauth_support::login::Person;
use oauth_support::{Provider, count, start_ferry, start_protected_ferry};
use serde_json::Value;

/// The machine client's flags: client credentials of the pre-registered `ferry-service`.
const SERVICE: [&str; 5] = [
    "--client-credentials",
    "--client-id",
    "ferry-service",
    "--client-secret",
    "ferry-service-secret",
];

/// A fresh token directory under the target dir (removed when dropped).
struct TokenDir(PathBuf);

impl TokenDir {
    fn new(name: &str) -> TokenDir {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("oauth-tokens-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TokenDir(dir)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 path")
    }

    /// The token files, each parsed.
    fn files(&self) -> Vec<(PathBuf, Value)> {
        let Ok(entries) = std::fs::read_dir(&self.0) else {
            return Vec::new();
        };
        let mut files: Vec<_> = entries
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("readable");
                let value = serde_json::from_str(&text).expect("JSON");
                (p, value)
            })
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
    }

    /// The one token file's content (panics unless there is exactly one).
    fn only(&self) -> Value {
        let mut files = self.files();
        assert_eq!(files.len(), 1, "{files:#?}");
        files.remove(0).1
    }
}

impl Drop for TokenDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("exists")
        .permissions()
        .mode()
        & 0o777
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

fn access_token(stored: &Value) -> String {
    stored["tokens"]["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("an access token: {stored}"))
        .to_owned()
}

/// `ferry call --url ENDPOINT --token-store DIR EXTRA... echo text=TEXT`.
async fn echo(
    endpoint: &str,
    dir: &TokenDir,
    extra: &[&str],
    text: &str,
    person: Option<&mut Person>,
) -> Run {
    let text = format!("text={text}");
    let mut args = vec!["call", "--url", endpoint, "--token-store", dir.path()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["echo", &text]);
    run(&args, person).await
}

#[tokio::test]
async fn a_person_authorizes_once_and_the_stored_token_is_reused() {
    let provider = Provider::start(None);
    let (_ferry, endpoint) = start_protected_ferry(&provider).await;
    let http = reqwest::Client::new();
    let dir = TokenDir::new("reuse");

    // The first command: 401, dynamic registration, a person approves, the call succeeds.
    let mut person = Person::new("alice");
    let first = echo(
        &endpoint,
        &dir,
        &[],
        "first through oauth",
        Some(&mut person),
    )
    .await;
    first.expect_code(0);
    assert!(first.stdout.contains("first through oauth"), "{first:#?}");
    assert_eq!(first.authorizations, 1, "{first:#?}");
    assert_eq!(person.pages, ["login", "consent"]);
    let events = provider.events_so_far(&http).await;
    assert_eq!(
        count(&events, "registration", "event", "registration"),
        1,
        "{events:#?}"
    );
    let registered = events
        .iter()
        .find(|e| e["event"] == "registration")
        .and_then(|e| e["client_id"].as_str())
        .expect("the registered client id")
        .to_owned();
    assert_eq!(
        count(&events, "grant", "grant_type", "authorization_code"),
        1,
        "{events:#?}"
    );
    assert_eq!(
        count(&events, "grant", "client_id", &registered),
        1,
        "{events:#?}"
    );

    // Stored privately: the directory 0700, the file 0600, with the registration and a
    // refresh token.
    assert_eq!(mode(&dir.0), 0o700);
    let files = dir.files();
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(mode(&files[0].0), 0o600);
    let stored = &files[0].1;
    assert_eq!(stored["issuer"], provider.issuer.as_str());
    assert_eq!(stored["resource"], endpoint.as_str());
    assert_eq!(stored["client"]["client_id"], registered.as_str());
    assert!(stored["tokens"]["refresh_token"].is_string(), "{stored}");
    let token = access_token(stored);

    // The second command: no person (none is there to answer), no grant at all.
    let second = echo(&endpoint, &dir, &[], "second", None).await;
    second.expect_code(0);
    assert!(second.stdout.contains("second"), "{second:#?}");
    assert_eq!(second.authorizations, 0, "{second:#?}");
    let events = provider.events_so_far(&http).await;
    assert!(
        events.is_empty(),
        "the stored token was used as it is: {events:#?}"
    );
    assert_eq!(access_token(&dir.only()), token);
}

#[tokio::test]
async fn an_expired_token_is_refreshed_without_a_person() {
    // Access tokens live 10 s (the command refreshes them 5 s before they expire).
    let provider = Provider::start(Some(10));
    let (_ferry, endpoint) = start_protected_ferry(&provider).await;
    let http = reqwest::Client::new();
    let dir = TokenDir::new("refresh");
    let public = ["--client-id", "ferry-public"];

    // The pre-registered public client: no registration.
    let mut person = Person::new("bob");
    let first = echo(&endpoint, &dir, &public, "before expiry", Some(&mut person)).await;
    first.expect_code(0);
    assert_eq!(first.authorizations, 1, "{first:#?}");
    let events = provider.events_so_far(&http).await;
    assert_eq!(
        count(&events, "registration", "event", "registration"),
        0,
        "{events:#?}"
    );
    assert_eq!(
        count(&events, "grant", "grant_type", "authorization_code"),
        1,
        "{events:#?}"
    );
    assert_eq!(
        count(&events, "grant", "client_id", "ferry-public"),
        events.iter().filter(|e| e["event"] == "grant").count()
    );

    // Wait until the stored access token has expired.
    let stored = dir.only();
    let expired = access_token(&stored);
    let expires_at = stored["tokens"]["expires_at"]
        .as_u64()
        .unwrap_or_else(|| panic!("an expiry: {stored}"));
    while now() <= expires_at {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // The next command refreshes it: a refresh grant, no login, a new token stored.
    let second = echo(&endpoint, &dir, &public, "after expiry", None).await;
    second.expect_code(0);
    assert!(second.stdout.contains("after expiry"), "{second:#?}");
    assert_eq!(second.authorizations, 0, "{second:#?}");
    let events = provider.events_so_far(&http).await;
    assert!(
        count(&events, "grant", "grant_type", "refresh_token") >= 1,
        "{events:#?}"
    );
    assert_eq!(
        count(&events, "grant", "grant_type", "authorization_code"),
        0,
        "{events:#?}"
    );
    assert_eq!(
        count(&events, "interaction", "event", "interaction"),
        0,
        "{events:#?}"
    );
    let refreshed = dir.only();
    assert_ne!(access_token(&refreshed), expired);
    assert!(refreshed["tokens"]["expires_at"].as_u64() > Some(expires_at));
}

#[tokio::test]
async fn a_machine_client_needs_no_person_and_a_token_for_another_server_is_refused() {
    let provider = Provider::start(None);
    let (_a, server_a) = start_protected_ferry(&provider).await;
    let (_b, server_b) = start_protected_ferry(&provider).await;
    let http = reqwest::Client::new();
    let dir = TokenDir::new("machine");
    let service = SERVICE;

    // Client credentials: no authorization URL, no page, one grant for server A.
    let first = echo(&server_a, &dir, &service, "machine", None).await;
    first.expect_code(0);
    assert!(first.stdout.contains("machine"), "{first:#?}");
    assert_eq!(first.authorizations, 0, "{first:#?}");
    let events = provider.events_so_far(&http).await;
    assert_eq!(
        count(&events, "interaction", "event", "interaction"),
        0,
        "{events:#?}"
    );
    let grants: Vec<_> = events.iter().filter(|e| e["event"] == "grant").collect();
    assert_eq!(grants.len(), 1, "{events:#?}");
    assert_eq!(grants[0]["grant_type"], "client_credentials");
    assert_eq!(grants[0]["client_id"], "ferry-service");
    assert_eq!(grants[0]["resource"], server_a.as_str());
    let stored_a = dir.only();
    let token_a = access_token(&stored_a);

    // A's token, sent to B by hand: refused (401 invalid_token), exit code 3. A takes it.
    let bearer = format!("Authorization: Bearer {token_a}");
    let refused = run(
        &[
            "call", "--url", &server_b, "--header", &bearer, "echo", "text=x",
        ],
        None,
    )
    .await;
    refused.expect_code(3);
    assert!(
        refused.stderr.contains("authorization failed")
            && refused.stderr.contains("401 Unauthorized")
            && refused.stderr.contains("invalid_token"),
        "{refused:#?}"
    );
    let accepted = run(
        &[
            "call", "--url", &server_a, "--header", &bearer, "echo", "text=a",
        ],
        None,
    )
    .await;
    accepted.expect_code(0);

    // A's credentials planted in the store under B's key: B refuses the token, the
    // command obtains one for B and succeeds, and B's entry is replaced (two entries).
    let planted: StoredCredentials =
        serde_json::from_value(stored_a.clone()).expect("stored credentials");
    let key = StoreKey {
        issuer: provider.issuer.clone(),
        resource: server_b.clone(),
    };
    FileTokenStore::new(&dir.0)
        .save(&key, &planted)
        .await
        .expect("planted");
    let second = echo(&server_b, &dir, &service, "recovered", None).await;
    second.expect_code(0);
    assert!(second.stdout.contains("recovered"), "{second:#?}");
    let events = provider.events_so_far(&http).await;
    let grants: Vec<_> = events.iter().filter(|e| e["event"] == "grant").collect();
    assert_eq!(grants.len(), 1, "{events:#?}");
    assert_eq!(grants[0]["resource"], server_b.as_str());
    let files = dir.files();
    assert_eq!(files.len(), 2, "{files:#?}");
    let stored_b = files
        .iter()
        .map(|(_, v)| v)
        .find(|v| v["resource"] == server_b.as_str())
        .expect("B's entry");
    assert_ne!(access_token(stored_b), token_a);

    // A tool needing more scope (`add` needs mcp:admin): 403 insufficient_scope, a new
    // token with both scopes (the stored one had mcp:tools only), the call succeeds.
    assert_eq!(stored_a["tokens"]["scope"], "mcp:tools", "{stored_a}");
    let mut args = vec![
        "call",
        "--json",
        "--url",
        &server_a,
        "--token-store",
        dir.path(),
    ];
    args.extend_from_slice(&service);
    args.extend_from_slice(&["add", "a=1", "b=2"]);
    let stepped = run(&args, None).await;
    stepped.expect_code(0);
    let result: Value = serde_json::from_str(&stepped.stdout).expect("--json");
    assert_eq!(result["structuredContent"]["sum"], 3.0, "{stepped:#?}");
    let events = provider.events_so_far(&http).await;
    let grants: Vec<_> = events.iter().filter(|e| e["event"] == "grant").collect();
    assert_eq!(grants.len(), 1, "{events:#?}");
    let scope = grants[0]["scope"].as_str().unwrap_or_default();
    assert!(
        scope.contains("mcp:admin") && scope.contains("mcp:tools"),
        "{events:#?}"
    );

    // A wrong secret: the authorization fails, said so, exit code 3.
    let wrong = TokenDir::new("wrong-secret");
    let failed = echo(
        &server_a,
        &wrong,
        &[
            "--client-credentials",
            "--client-id",
            "ferry-service",
            "--client-secret",
            "not-the-secret-xyz",
        ],
        "x",
        None,
    )
    .await;
    failed.expect_code(3);
    assert!(
        failed.stderr.contains("authorization failed"),
        "{failed:#?}"
    );
    assert!(
        !failed.stderr.contains("not-the-secret-xyz"),
        "no secret in messages: {failed:#?}"
    );
}

#[tokio::test]
async fn refusals_end_the_command_with_exit_code_3() {
    let provider = Provider::start(None);
    let (_ferry, endpoint) = start_protected_ferry(&provider).await;
    let dir = TokenDir::new("refusals");

    // The person cancels on the provider's page.
    let mut person = Person::new("carol");
    person.refuse = true;
    let refused = echo(
        &endpoint,
        &dir,
        &["--client-id", "ferry-public"],
        "x",
        Some(&mut person),
    )
    .await;
    refused.expect_code(3);
    assert_eq!(refused.authorizations, 1, "{refused:#?}");
    assert!(
        refused.stderr.contains("authorization failed") && refused.stderr.contains("access_denied"),
        "{refused:#?}"
    );
    assert!(
        dir.files().iter().all(|(_, v)| v["tokens"].is_null()),
        "no token stored"
    );

    // Authorization off.
    let off = echo(&endpoint, &dir, &["--no-auth"], "x", None).await;
    off.expect_code(3);
    assert!(
        off.stderr.contains("401 Unauthorized") && off.stderr.contains("--no-auth"),
        "{off:#?}"
    );
    assert_eq!(off.authorizations, 0);

    // A tool needing a scope the provider does not grant (it leaves the unknown scope out
    // of the tokens): the step-ups run out, and the command says so.
    let jwks = provider.jwks_uri(&reqwest::Client::new()).await;
    let (_strict, strict) = start_ferry(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-jwks",
        &jwks,
        "--auth-scope",
        "mcp:tools",
        "--auth-tool-scope",
        "add=mcp:unknown",
    ]);
    let mut args = vec!["call", "--url", &strict, "--token-store", dir.path()];
    args.extend_from_slice(&SERVICE);
    args.extend_from_slice(&["add", "a=1", "b=2"]);
    let unreachable = run(&args, None).await;
    unreachable.expect_code(3);
    assert!(
        unreachable.stderr.contains("authorization failed")
            && unreachable.stderr.contains("403 Forbidden")
            && unreachable.stderr.contains("insufficient_scope")
            && unreachable.stderr.contains("step-up"),
        "{unreachable:#?}"
    );
    assert!(
        !unreachable.stderr.contains('\u{1b}'),
        "no terminal escapes in a captured stderr: {unreachable:#?}"
    );
}

/// `ferry check --url` authorizes as the client commands do: a machine client's token
/// (the client-credentials grant, stored) on every request of the check, its raw peer
/// included; a bearer token given with `--header` instead; with `--no-auth` the server's
/// refusal is said, with exit code 3.
#[tokio::test]
async fn check_authorizes_like_the_client_commands() {
    let provider = Provider::start(None);
    let (_ferry, endpoint) = start_protected_ferry(&provider).await;
    let http = reqwest::Client::new();
    let dir = TokenDir::new("check");
    let quick = ["--json", "--revision", "2025-11-25", "--call-tools", "none"];

    let mut args = vec!["check", "--url", &endpoint, "--token-store", dir.path()];
    args.extend_from_slice(&quick);
    args.extend_from_slice(&SERVICE);
    let checked = run(&args, None).await;
    checked.expect_code(0);
    let report: Value = serde_json::from_str(&checked.stdout).expect("a JSON report");
    assert_eq!(report["revisions"][0]["checked"], true, "{report:#}");
    assert_eq!(report["summary"]["mustFailed"], 0, "{report:#}");
    let events = provider.events_so_far(&http).await;
    assert_eq!(
        count(&events, "grant", "grant_type", "client_credentials"),
        1,
        "one token for the whole check: {events:#?}"
    );
    assert!(dir.only()["tokens"]["access_token"].is_string());

    let token = provider.service_token(&http, &endpoint, "mcp:tools").await;
    let bearer = format!("Authorization: Bearer {token}");
    let mut args = vec!["check", "--url", &endpoint, "--header", &bearer];
    args.extend_from_slice(&quick);
    run(&args, None).await.expect_code(0);

    let mut args = vec!["check", "--url", &endpoint, "--no-auth"];
    args.extend_from_slice(&quick);
    let refused = run(&args, None).await;
    refused.expect_code(3);
    assert!(
        refused.stderr.contains("authorization failed")
            && refused.stderr.contains("401 Unauthorized")
            && refused.stderr.contains("--no-auth"),
        "{refused:#?}"
    );
}
