//! `LoopbackAuthorizer` over real sockets on 127.0.0.1: the redirect URI names the bound
//! port, the listener answers the browser's requests (the redirect, stray paths, a wrong
//! state, an idle pre-connection), hands back the code or the refusal, and gives up after
//! its timeout. An error redirect is handed back as a response (its `iss` is for the flow
//! to judge), and its page does not show the server's text.

use std::sync::Arc;
use std::time::Duration;

use ferry::http_client::oauth::{
    AuthorizationError, AuthorizationOutcome, AuthorizationRequest, AuthorizationResponse,
    Authorizer, LoopbackAuthorizer,
};
use reqwest::StatusCode;
use tokio::task::JoinHandle;

fn request(state: &str) -> AuthorizationRequest {
    AuthorizationRequest {
        url: "http://127.0.0.1:9/authorize?client_id=c&state=abc"
            .parse()
            .unwrap(),
        state: state.into(),
    }
}

/// Start waiting for the redirect in a task of its own; returns the redirect URI too.
fn waiting(
    authorizer: &Arc<LoopbackAuthorizer>,
    state: &str,
) -> (String, JoinHandle<Result<AuthorizationResponse, String>>) {
    let redirect = authorizer.redirect_uri();
    let (authorizer, request) = (Arc::clone(authorizer), request(state));
    let task = tokio::spawn(async move { authorizer.authorize(&request).await });
    (redirect, task)
}

/// GET `url` (no redirects, no pooled connection); the status and the body.
async fn get(url: &str) -> (StatusCode, String) {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    // The listener may not be accepting yet: the socket is bound, so the connection waits
    // in the backlog until it does.
    let response = http.get(url).send().await.expect("the listener answers");
    let status = response.status();
    (status, response.text().await.unwrap())
}

fn quiet() -> LoopbackAuthorizer {
    LoopbackAuthorizer::new().open_browser(false)
}

#[tokio::test]
async fn the_redirect_with_the_right_state_brings_the_code() {
    let authorizer = Arc::new(quiet());
    let (redirect, task) = waiting(&authorizer, "st4te");
    let port: u16 = redirect
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/callback"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{redirect}"));
    assert_ne!(port, 0);
    assert_eq!(
        authorizer.redirect_uri(),
        redirect,
        "one port for the authorizer's life"
    );
    let base = format!("http://127.0.0.1:{port}");

    // A browser's idle pre-connection does not hold the listener up.
    let idle = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();

    let (status, _) = get(&format!("{base}/favicon.ico")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = get(&format!("{base}/callback?code=forged&state=other")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("wrong state"), "{body}");
    let (status, _) = get(&format!("{base}/callback?error=access_denied")).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "no state: cannot end the wait"
    );
    let posted = reqwest::Client::new()
        .post(format!("{base}/callback?code=c&state=st4te"))
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(!task.is_finished(), "still waiting for the real redirect");

    let (status, body) = get(&format!(
        "{base}/callback?code=the%2Bcode&state=st4te&iss=http%3A%2F%2F127.0.0.1%3A9"
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("Authorization complete"), "{body}");
    let response = task.await.unwrap().expect("the code");
    assert_eq!(
        response,
        AuthorizationResponse {
            outcome: AuthorizationOutcome::Code("the+code".into()),
            state: Some("st4te".into()),
            iss: Some("http://127.0.0.1:9".into()),
        }
    );
    drop(idle);

    // A second authorization (step-up, say) listens on the same port again.
    let (again, task) = waiting(&authorizer, "second");
    assert_eq!(again, redirect);
    let (status, _) = get(&format!("{base}/callback?code=c2&state=second")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(task.await.unwrap().unwrap().code(), Some("c2"));
}

#[tokio::test]
async fn an_error_redirect_ends_the_wait_with_the_response_unshown() {
    let authorizer = Arc::new(quiet());
    let (redirect, task) = waiting(&authorizer, "s");
    let (status, body) = get(&format!(
        "{redirect}?error=access_denied&error_description=%3Cb%3Enope%3C%2Fb%3E&state=s&iss=http%3A%2F%2Fevil"
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("Authorization not granted"), "{body}");
    // Not shown before the flow has checked iss (RFC 9207: a mix-up's error is not shown).
    assert!(
        !body.contains("nope") && !body.contains("access_denied"),
        "{body}"
    );
    let response = task.await.unwrap().expect("a response");
    assert_eq!(
        response,
        AuthorizationResponse {
            outcome: AuthorizationOutcome::Error(AuthorizationError {
                error: "access_denied".into(),
                description: Some("<b>nope</b>".into()),
                uri: None,
            }),
            state: Some("s".into()),
            iss: Some("http://evil".into()),
        }
    );
}

#[tokio::test]
async fn no_redirect_within_the_timeout_is_an_error() {
    let authorizer = Arc::new(quiet().timeout(Duration::from_millis(200)));
    let (redirect, task) = waiting(&authorizer, "s");
    let error = task.await.unwrap().unwrap_err();
    assert!(error.contains("no authorization arrived"), "{error}");
    assert!(error.contains(&redirect), "{error}");
}

#[tokio::test]
async fn a_given_port_is_used_and_a_taken_one_is_reported() {
    // Find a free port, then let it go and ask for it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let authorizer = Arc::new(quiet().port(port));
    let (redirect, task) = waiting(&authorizer, "s");
    assert_eq!(redirect, format!("http://127.0.0.1:{port}/callback"));
    let (status, _) = get(&format!("{redirect}?code=c&state=s")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(task.await.unwrap().unwrap().code(), Some("c"));

    // Now the port is taken (by the first authorizer, still alive): a second one says so.
    let second = Arc::new(quiet().port(port));
    assert_eq!(second.redirect_uri(), redirect);
    let error = second.authorize(&request("s")).await.unwrap_err();
    assert!(error.contains("cannot listen"), "{error}");
    drop(authorizer);
}
