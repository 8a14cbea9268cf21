//! Resource readers that return plain values — text, bytes, `Json<T>`, `Option`,
//! `Result` — read over the wire in a session-era and a stateless-era revision, typed with
//! the MIME type the resource, the template or the `#[resource]` attribute declares, else
//! the value's default (which the listing then shows too).

use std::sync::Mutex;

use ferry::protocol::ProtocolVersion::{self, *};
use ferry::protocol::jsonrpc::ErrorObject;
use ferry::protocol::types::{Resource, ResourceContents, ResourceTemplate};
use ferry::server::{Json, ResourceError, Server, State, TemplateVars, TestClient, TestError};
use ferry::{resource, tools};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A revision of each era.
const ERAS: [ProtocolVersion; 2] = [V2025_06_18, V2026_07_28];

/// Bytes that are not UTF-8 (a PNG's signature).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u32,
    name: String,
}

struct Users(Vec<User>);

async fn user(_uri: String, vars: TemplateVars, users: State<Users>) -> Option<Json<User>> {
    let id: u32 = vars["id"].parse().ok()?;
    let user = users.0.iter().find(|u| u.id == id)?;
    Some(Json(User {
        id: user.id,
        name: user.name.clone(),
    }))
}

async fn file(_uri: String, vars: TemplateVars) -> Result<Vec<u8>, ResourceError> {
    match vars["name"].as_str() {
        "logo" => Ok(PNG.to_vec()),
        "bad" => Err(ResourceError::InvalidParams("no such kind of file".into())),
        _ => Err(ResourceError::NotFound(format!("files://{}", vars["name"]))),
    }
}

fn builder_server() -> Server {
    Server::builder("values", "1")
        .state(Users(vec![User {
            id: 1,
            name: "Ada".into(),
        }]))
        .resource(Resource::new("text://string", "string"), || async {
            String::from("a string")
        })
        .resource(
            Resource::new("text://markdown", "markdown").mime_type("text/markdown"),
            || async { "# a str" },
        )
        .resource(Resource::new("bytes://vec", "vec"), || async {
            PNG.to_vec()
        })
        .resource(
            Resource::new("bytes://slice", "slice").mime_type("image/png"),
            || async { PNG },
        )
        .resource(Resource::new("bytes://bytes", "bytes"), || async {
            bytes::Bytes::from_static(PNG)
        })
        .resource(Resource::new("json://config", "config"), || async {
            Json(json!({"debug": true}))
        })
        .resource(
            Resource::new("json://typed", "typed").mime_type("application/vnd.user+json"),
            || async {
                Json(User {
                    id: 7,
                    name: "Bo".into(),
                })
            },
        )
        .resource(Resource::new("contents://one", "one"), || async {
            ResourceContents::text("contents://one", "text/csv", "a,b")
        })
        .resource(Resource::new("result://ok", "ok"), || async {
            Ok::<_, std::io::Error>("fine")
        })
        .resource(Resource::new("result://io", "io"), || async {
            Err::<String, _>(std::io::Error::other("disk on fire"))
        })
        .resource(Resource::new("result://chosen", "chosen"), || async {
            Err::<String, _>(ErrorObject::new(-32099, "not today"))
        })
        .resource(Resource::new("result://gone", "gone"), || async {
            Err::<String, _>(ResourceError::NotFound("result://gone".into()))
        })
        .resource(Resource::new("option://none", "none"), || async {
            None::<String>
        })
        .resource_template(
            ResourceTemplate::new("users://{id}", "user").mime_type("application/vnd.user+json"),
            user,
        )
        .resource_template(ResourceTemplate::new("files://{name}", "file"), file)
        .build()
}

async fn client(server: &Server, version: ProtocolVersion) -> TestClient {
    TestClient::builder(server)
        .version(version)
        .connect()
        .await
        .unwrap()
}

/// The one contents of `uri`: its text or blob, and MIME type.
async fn read(client: &TestClient, uri: &str) -> (ResourceContents, Option<String>) {
    let read = client.read_resource(uri).await.unwrap();
    assert_eq!(read.contents.len(), 1, "{uri}: {read:?}");
    let contents = read.contents[0].clone();
    assert_eq!(contents.uri(), uri);
    let mime = contents.mime_type().map(str::to_owned);
    (contents, mime)
}

#[tokio::test]
async fn text_is_text_with_the_declared_or_default_mime_type() {
    let server = builder_server();
    for version in ERAS {
        let client = client(&server, version).await;
        let (string, mime) = read(&client, "text://string").await;
        assert_eq!(string.as_text(), Some("a string"), "{version:?}");
        assert_eq!(mime.as_deref(), Some("text/plain"));
        let (markdown, mime) = read(&client, "text://markdown").await;
        assert_eq!(markdown.as_text(), Some("# a str"));
        assert_eq!(mime.as_deref(), Some("text/markdown"));
        let (ok, _) = read(&client, "result://ok").await;
        assert_eq!(ok.as_text(), Some("fine"));
        // A `ResourceContents` keeps its own MIME type.
        let (one, mime) = read(&client, "contents://one").await;
        assert_eq!(one.as_text(), Some("a,b"));
        assert_eq!(mime.as_deref(), Some("text/csv"));
    }
}

#[tokio::test]
async fn bytes_are_base64_blobs() {
    let server = builder_server();
    for version in ERAS {
        let client = client(&server, version).await;
        for (uri, expected_mime) in [
            ("bytes://vec", "application/octet-stream"),
            ("bytes://slice", "image/png"),
            ("bytes://bytes", "application/octet-stream"),
        ] {
            let (blob, mime) = read(&client, uri).await;
            assert_eq!(blob.blob_bytes().as_deref(), Some(PNG), "{uri} {version:?}");
            assert_eq!(mime.as_deref(), Some(expected_mime), "{uri}");
        }
        // On the wire: `blob`, standard base64, and no `text`.
        let raw = client
            .request("resources/read", json!({"uri": "bytes://vec"}))
            .await
            .unwrap();
        assert_eq!(raw["contents"][0]["blob"], "iVBORw0KGgo=", "{version:?}");
        assert_eq!(raw["contents"][0].get("text"), None);
    }
}

#[tokio::test]
async fn json_is_json_text() {
    let server = builder_server();
    for version in ERAS {
        let client = client(&server, version).await;
        let config = client.read_resource("json://config").await.unwrap();
        assert_eq!(config.text(), r#"{"debug":true}"#, "{version:?}");
        assert_eq!(config.contents[0].mime_type(), Some("application/json"));
        let typed = client.read_resource("json://typed").await.unwrap();
        assert_eq!(
            typed.json::<User>().unwrap(),
            User {
                id: 7,
                name: "Bo".into()
            }
        );
        assert_eq!(
            typed.contents[0].mime_type(),
            Some("application/vnd.user+json")
        );
    }
}

#[tokio::test]
async fn templates_read_with_their_mime_type() {
    let server = builder_server();
    for version in ERAS {
        let client = client(&server, version).await;
        let ada = client.read_resource("users://1").await.unwrap();
        assert_eq!(
            ada.json::<User>().unwrap(),
            User {
                id: 1,
                name: "Ada".into()
            },
            "{version:?}"
        );
        assert_eq!(ada.contents[0].uri(), "users://1");
        assert_eq!(
            ada.contents[0].mime_type(),
            Some("application/vnd.user+json")
        );
        let logo = client.read_resource("files://logo").await.unwrap();
        assert_eq!(logo.blob().as_deref(), Some(PNG));
        assert_eq!(
            logo.contents[0].mime_type(),
            Some("application/octet-stream")
        );
    }
}

#[tokio::test]
async fn none_and_errors_are_answered_as_errors() {
    let server = builder_server();
    for version in ERAS {
        let client = client(&server, version).await;
        for uri in ["option://none", "result://gone", "users://2", "users://x"] {
            let error = client.read_resource(uri).await.unwrap_err();
            assert_eq!(error, TestError::NotFound(uri.into()), "{version:?}");
        }
        let missing_file = client.read_resource("files://other").await.unwrap_err();
        assert_eq!(missing_file, TestError::NotFound("files://other".into()));
        let bad = client.read_resource("files://bad").await.unwrap_err();
        assert!(
            matches!(&bad, TestError::InvalidParams(m) if m.contains("no such kind")),
            "{bad:?}"
        );
        let io = client.read_resource("result://io").await.unwrap_err();
        assert!(
            matches!(&io, TestError::Internal(m) if m.contains("disk on fire")),
            "{io:?}"
        );
        let chosen = client.read_resource("result://chosen").await.unwrap_err();
        assert_eq!(
            chosen,
            TestError::Rpc(ErrorObject::new(-32099, "not today"))
        );
        // The wire code of "not found" is the revision's.
        let raw = client
            .request("resources/read", json!({"uri": "option://none"}))
            .await
            .unwrap_err();
        let code = if version < V2026_07_28 {
            -32002
        } else {
            -32602
        };
        assert!(
            matches!(&raw, ferry::engine::CallError::Rpc(e) if e.code == code),
            "{raw:?}"
        );
    }
}

/// A resource that declares no MIME type is listed with its value's default, so what the
/// list says and what a read gives agree.
#[tokio::test]
async fn the_listing_shows_the_default_mime_type() {
    let server = builder_server();
    for version in ERAS {
        let client = client(&server, version).await;
        let listed: Vec<(String, Option<String>)> = client
            .list_resources()
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.uri, r.mime_type))
            .collect();
        let mime_of = |uri: &str| {
            listed
                .iter()
                .find(|(u, _)| u == uri)
                .and_then(|(_, m)| m.clone())
        };
        assert_eq!(mime_of("text://string").as_deref(), Some("text/plain"));
        assert_eq!(mime_of("text://markdown").as_deref(), Some("text/markdown"));
        assert_eq!(
            mime_of("bytes://vec").as_deref(),
            Some("application/octet-stream")
        );
        assert_eq!(mime_of("bytes://slice").as_deref(), Some("image/png"));
        assert_eq!(
            mime_of("json://config").as_deref(),
            Some("application/json")
        );
        assert_eq!(mime_of("result://ok").as_deref(), Some("text/plain"));
        // Contents built by hand say their own type: nothing to list.
        assert_eq!(mime_of("contents://one"), None);
        let templates = client.list_resource_templates().await.unwrap();
        let file = templates
            .iter()
            .find(|t| t.uri_template == "files://{name}")
            .unwrap();
        assert_eq!(file.mime_type.as_deref(), Some("application/octet-stream"));
        let user = templates
            .iter()
            .find(|t| t.uri_template == "users://{id}")
            .unwrap();
        assert_eq!(user.mime_type.as_deref(), Some("application/vnd.user+json"));
    }
}

/// The same with `#[resource]`: the attribute's `mime_type`, template variables parsed
/// before the function runs, a method of a `#[tools]` type.
mod macros {
    use super::*;

    /// Plain text.
    #[resource("m://text")]
    async fn text() -> String {
        "from a macro".into()
    }

    /// A note, by number.
    #[resource("m://notes/{id}", mime_type = "text/markdown")]
    async fn note(id: usize) -> Option<&'static str> {
        ["# first", "# second"].get(id).copied()
    }

    /// A note's raw bytes.
    #[resource("m://raw/{id}")]
    async fn raw(id: usize, #[uri] uri: String) -> Result<Vec<u8>, String> {
        match id {
            0 => Ok(PNG.to_vec()),
            _ => Err(format!("{uri} is not stored here")),
        }
    }

    /// An image.
    #[resource("m://logo", mime_type = "image/png")]
    async fn logo() -> &'static [u8] {
        PNG
    }

    #[derive(Default)]
    pub(super) struct Counter(Mutex<u32>);

    #[tools]
    impl Counter {
        /// The count, as JSON.
        #[resource("m://count")]
        async fn count(&self) -> Json<u32> {
            let mut count = self.0.lock().unwrap();
            *count += 1;
            Json(*count)
        }
    }

    pub(super) fn server() -> Server {
        Server::builder("macros", "1")
            .with((
                text_resource(),
                note_resource(),
                raw_resource(),
                logo_resource(),
            ))
            .with(Counter::default())
            .build()
    }
}

#[tokio::test]
async fn the_resource_attribute_returns_plain_values() {
    let server = macros::server();
    for version in ERAS {
        let client = client(&server, version).await;
        let (text, mime) = read(&client, "m://text").await;
        assert_eq!(text.as_text(), Some("from a macro"), "{version:?}");
        assert_eq!(mime.as_deref(), Some("text/plain"));
        let (note, mime) = read(&client, "m://notes/1").await;
        assert_eq!(note.as_text(), Some("# second"));
        assert_eq!(mime.as_deref(), Some("text/markdown"));
        let (raw, mime) = read(&client, "m://raw/0").await;
        assert_eq!(raw.blob_bytes().as_deref(), Some(PNG));
        assert_eq!(mime.as_deref(), Some("application/octet-stream"));
        let (logo, mime) = read(&client, "m://logo").await;
        assert_eq!(logo.blob_bytes().as_deref(), Some(PNG));
        assert_eq!(mime.as_deref(), Some("image/png"));
        let count = client.read_resource("m://count").await.unwrap();
        assert!(count.json::<u32>().unwrap() >= 1);
        assert_eq!(count.contents[0].mime_type(), Some("application/json"));

        let missing = client.read_resource("m://notes/5").await.unwrap_err();
        assert_eq!(missing, TestError::NotFound("m://notes/5".into()));
        let not_a_number = client.read_resource("m://notes/x").await.unwrap_err();
        assert!(
            matches!(&not_a_number, TestError::InvalidParams(m) if m.contains("`id`")),
            "{not_a_number:?}"
        );
        let failed = client.read_resource("m://raw/1").await.unwrap_err();
        assert!(
            matches!(&failed, TestError::Internal(m) if m.contains("m://raw/1 is not stored here")),
            "{failed:?}"
        );

        let templates = client.list_resource_templates().await.unwrap();
        let mimes: Vec<(&str, Option<&str>)> = templates
            .iter()
            .map(|t| (t.uri_template.as_str(), t.mime_type.as_deref()))
            .collect();
        assert_eq!(
            mimes,
            [
                ("m://notes/{id}", Some("text/markdown")),
                ("m://raw/{id}", Some("application/octet-stream")),
            ]
        );
    }
}
