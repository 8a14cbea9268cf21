//! A Ferry server mounted in an axum application: MCP under `/mcp` (Streamable HTTP, both
//! eras) beside the application's own routes (`/health`, `/`).
//!
//!     cargo run -p ferry-mcp --features http-server,http-client --example axum_mount -- 127.0.0.1:8080
//!
//! It serves until stopped (Ctrl-C). With `--self-test` it serves on a free port instead,
//! requests `/health` and calls a tool through `/mcp` with Ferry's HTTP client, prints
//! the answers and exits.

use axum::Router;
use axum::routing::get;
use ferry::client::Client;
use ferry::http::HttpConfig;
use ferry::http_client::HttpClientConfig;
use ferry::server::Server;
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

/// The application: its own routes, and the MCP server's router merged in.
fn app() -> Router {
    let server = Server::builder("greeter", "1.0.0")
        .tool("greet", "Greet someone", |g: Greet| async move {
            format!("Hello, {}!", g.name)
        })
        .build();
    // `ferry::http::router` claims exactly its own paths (`/mcp`, and `/sse` and
    // `/messages` for 2024-11-05 clients), so it merges into any router.
    // (`Router::nest("/api", ..)` would serve it at `/api/mcp` instead.)
    let mcp = ferry::http::router(server, HttpConfig::default());
    Router::new()
        .route(
            "/",
            get(|| async { "an application with an MCP endpoint at /mcp" }),
        )
        .route("/health", get(|| async { "ok" }))
        .merge(mcp)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let self_test = args.iter().any(|a| a == "--self-test");
    let address = match args.iter().find(|a| !a.starts_with("--")) {
        Some(address) => address.clone(),
        None if self_test => "127.0.0.1:0".to_owned(), // any free port
        None => "127.0.0.1:8080".to_owned(),
    };
    let listener = tokio::net::TcpListener::bind(&address).await?;
    let address = listener.local_addr()?;
    println!("serving http://{address}/health and http://{address}/mcp");

    // `serve_router` bounds connections and gives every request its peer address (which
    // the per-client session limit counts); `axum::serve` would work too, with
    // `into_make_service_with_connect_info::<SocketAddr>()`.
    let serving = tokio::spawn(ferry::http::serve_router(app(), listener));
    if !self_test {
        serving.await??;
        return Ok(());
    }

    // The self-test: a plain HTTP request to the application's route...
    let health = reqwest::get(format!("http://{address}/health")).await?;
    println!("GET /health: {} {}", health.status(), health.text().await?);

    // ...and an MCP client at the mounted endpoint.
    let (client, connection) = Client::builder("axum-mount-example", "1.0.0")
        .connect_http(
            &format!("http://{address}/mcp"),
            HttpClientConfig::default(),
        )
        .await?;
    let result = client.call_tool("greet", json!({"name": "axum"})).await?;
    let text = result
        .content
        .first()
        .and_then(|b| b.as_text())
        .unwrap_or("");
    println!(
        "MCP tools/call greet ({}): {text}",
        client.version().as_str()
    );
    drop(client);
    connection.close().await;
    serving.abort();
    Ok(())
}
