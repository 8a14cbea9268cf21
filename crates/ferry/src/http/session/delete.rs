//! `DELETE`: end a session.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::SESSION_ID;
use super::checks::{method_not_allowed, unknown_session};
use crate::http::Shared;
use crate::http::owner::SessionOwner;

/// `DELETE` on the endpoint: end the session.
pub(crate) async fn delete(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let Some(id) = request.headers().get(SESSION_ID) else {
        return method_not_allowed();
    };
    let owner = request.extensions().get::<SessionOwner>();
    if let Err(response) = super::shared::session_of(&shared, request.headers(), owner).await {
        return response;
    }
    // Ended for every instance: the others find its record gone at their next request.
    if let Some(store) = &shared.config.session_store
        && let Err(e) = store.remove(id.to_str().unwrap_or("")).await
    {
        return super::shared::unavailable(&e);
    }
    match shared.sessions.remove(id.to_str().unwrap_or("")) {
        Some(session) => {
            session.close();
            StatusCode::OK.into_response()
        }
        None => unknown_session(),
    }
}
