//! `DELETE`: end a session.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::SESSION_ID;
use super::checks::{method_not_allowed, session_of, unknown_session};
use crate::http::Shared;
use crate::http::owner::SessionOwner;

/// `DELETE` on the endpoint: end the session.
pub(crate) async fn delete(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let Some(id) = request.headers().get(SESSION_ID) else {
        return method_not_allowed();
    };
    let owner = request.extensions().get::<SessionOwner>();
    if let Err(response) = session_of(&shared, request.headers(), owner) {
        return response;
    }
    match shared.sessions.remove(id.to_str().unwrap_or("")) {
        Some(session) => {
            session.close();
            StatusCode::OK.into_response()
        }
        None => unknown_session(),
    }
}
