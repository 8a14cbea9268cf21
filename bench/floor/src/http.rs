//! The stateless hyper floor: `POST /mcp` with one JSON-RPC message, answered with one JSON
//! object (202 for a notification). `initialize` is answered with a fixed `MCP-Session-Id`
//! that is never checked, so session-era clients work too. Usage: `floor-http 127.0.0.1:PORT`.

#![forbid(unsafe_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    if request.method() != hyper::Method::POST {
        return Ok(status(StatusCode::METHOD_NOT_ALLOWED));
    }
    let body = request.into_body().collect().await?.to_bytes();
    let mut out = Vec::with_capacity(256);
    if floor::answer(&body, &mut out) == floor::Kind::Notification {
        return Ok(status(StatusCode::ACCEPTED));
    }
    out.pop(); // the newline
    Ok(Response::builder()
        .header("content-type", "application/json")
        .header("mcp-session-id", "floor")
        .body(Full::new(Bytes::from(out)))
        .expect("static headers"))
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    loop {
        let (socket, _) = listener.accept().await?;
        socket.set_nodelay(true)?;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(handle);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}
