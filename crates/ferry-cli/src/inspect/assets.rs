//! The page's files, embedded in the binary: `index.html` (served at `/`, behind the
//! token) and the scripts and style sheet under `/assets/` (no secret in them).

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The page.
const INDEX: &str = include_str!("assets/index.html");

/// The files under `/assets/`: name, content type, bytes.
const FILES: &[(&str, &str, &str)] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
    ("app.js", JS, include_str!("assets/app.js")),
    ("api.js", JS, include_str!("assets/api.js")),
    ("dom.js", JS, include_str!("assets/dom.js")),
    ("form.js", JS, include_str!("assets/form.js")),
    ("markdown.js", JS, include_str!("assets/markdown.js")),
    ("render.js", JS, include_str!("assets/render.js")),
    ("vlist.js", JS, include_str!("assets/vlist.js")),
];

const JS: &str = "text/javascript; charset=utf-8";

fn response(content_type: &'static str, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// `/`.
pub(super) fn page() -> Response {
    response("text/html; charset=utf-8", INDEX)
}

/// `/assets/{name}`, if there is such a file.
pub(super) fn serve(name: &str) -> Option<Response> {
    FILES
        .iter()
        .find(|(file, _, _)| *file == name)
        .map(|(_, content_type, text)| response(content_type, text))
}

/// The bytes the page's files add to the binary.
#[cfg(test)]
pub(super) fn total_bytes() -> usize {
    INDEX.len() + FILES.iter().map(|(_, _, text)| text.len()).sum::<usize>()
}

#[cfg(test)]
mod tests {
    /// The budget for the embedded page.
    const BUDGET: usize = 500 << 10;

    #[test]
    fn within_budget() {
        assert!(
            super::total_bytes() <= BUDGET,
            "{} bytes",
            super::total_bytes()
        );
    }
}
