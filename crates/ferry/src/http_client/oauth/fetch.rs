//! The HTTP exchanges of the flow: metadata GETs (JSON or "not here") and form POSTs to
//! the token and registration endpoints, with size limits on what is read back.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::Value;

use super::OAuthError;

/// The largest metadata or token response read.
const MAX_BODY: usize = 256 * 1024;

/// What a metadata GET found.
pub(crate) enum Fetched {
    /// 2xx with a JSON object.
    Found(Value),
    /// 4xx (404 above all): nothing at this location, try the next one.
    Absent,
}

/// GET `url` expecting a JSON object; a 4xx is "absent", a 5xx or a non-JSON body an error.
pub(crate) async fn get_json(http: &reqwest::Client, url: &str) -> Result<Fetched, OAuthError> {
    let response = http
        .get(url)
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| http_error(url, &e))?;
    let status = response.status();
    if status.is_client_error() {
        return Ok(Fetched::Absent);
    }
    let body = read_body(url, response).await?;
    if !status.is_success() {
        return Err(OAuthError::InvalidResponse {
            url: url.to_owned(),
            message: format!("HTTP {status}"),
        });
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(Fetched::Found(value)),
        _ => Err(OAuthError::InvalidResponse {
            url: url.to_owned(),
            message: "not a JSON object".into(),
        }),
    }
}

/// A response: its status and JSON body (`Null` when the body is not JSON).
pub(crate) struct JsonResponse {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The body as JSON.
    pub(crate) body: Value,
}

/// POST `form` (application/x-www-form-urlencoded) to `url` with `headers`.
pub(crate) async fn post_form(
    http: &reqwest::Client,
    url: &str,
    headers: HeaderMap,
    form: &[(String, String)],
) -> Result<JsonResponse, OAuthError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let request = http
        .post(url)
        .headers(headers)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ACCEPT, "application/json")
        .body(body);
    send_json(url, request).await
}

/// POST `json` to `url`.
pub(crate) async fn post_json(
    http: &reqwest::Client,
    url: &str,
    json: &Value,
) -> Result<JsonResponse, OAuthError> {
    let request = http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(json.to_string());
    send_json(url, request).await
}

async fn send_json(
    url: &str,
    request: reqwest::RequestBuilder,
) -> Result<JsonResponse, OAuthError> {
    let response = request.send().await.map_err(|e| http_error(url, &e))?;
    let status = response.status().as_u16();
    let body = read_body(url, response).await?;
    Ok(JsonResponse {
        status,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

/// The body, refused beyond [`MAX_BODY`].
async fn read_body(url: &str, mut response: reqwest::Response) -> Result<Vec<u8>, OAuthError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(OAuthError::InvalidResponse {
                url: url.to_owned(),
                message: format!("response larger than {MAX_BODY} bytes"),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn http_error(url: &str, error: &reqwest::Error) -> OAuthError {
    OAuthError::Http {
        url: url.to_owned(),
        message: crate::http_client::connection::describe(error),
    }
}
