//! Samples: roots (`roots/list` in both eras, `notifications/roots/list_changed` in the
//! session era).

use ferry_protocol::ProtocolVersion::*;
use ferry_protocol::methods::{ClientNotification, ServerRequest};
use ferry_protocol::types::*;

use crate::schema::Sample;
use crate::schema::samples::support::{
    client_notification, client_result, input_response, meta, notification_meta, progress_meta,
    server_request, stateless, trace_context,
};

fn root_minimal() -> Root {
    Root {
        uri: "file:///home/user/projects/myproject".into(),
        ..Default::default()
    }
}

fn root_full() -> Root {
    Root {
        uri: "file:///home/user/repos/backend".into(),
        name: Some("Backend Repository".into()),
        meta: Some(meta()),
    }
}

fn roots_full() -> ListRootsResult {
    ListRootsResult {
        roots: vec![root_minimal(), root_full()],
        meta: Some(ResultMeta {
            other: trace_context(),
            ..Default::default()
        }),
    }
}

pub fn samples() -> Vec<Sample> {
    let session = |s: Sample| s.revisions(V2024_11_05, V2025_11_25);
    let input = |s: Sample| s.revisions(V2026_07_28, V2026_07_28);
    let request: &[&str] = &["ListRootsRequest"];
    let input_request: &[&str] = &["ListRootsRequest", "InputRequest"];
    let result: &[&str] = &["ListRootsResult"];
    let changed: &[&str] = &["RootsListChangedNotification"];
    vec![
        Sample::object("root, minimal", &["Root"], root_minimal()),
        Sample::object("root, full", &["Root"], root_full()),
        session(server_request(
            "roots/list",
            &["RequestParams"],
            request,
            ServerRequest::ListRoots(RequestParams::default()),
        )),
        session(server_request(
            "roots/list, with _meta",
            &["RequestParams"],
            request,
            ServerRequest::ListRoots(RequestParams {
                meta: Some(progress_meta("roots-1")),
            }),
        )),
        // 2026-07-28: `{ "method": "roots/list" }`, params only to carry `_meta`.
        input(Sample::object(
            "roots input, no params",
            input_request,
            stateless(InputRequest::ListRoots(RequestParams::default())),
        )),
        input(Sample::object(
            "roots input, with _meta",
            input_request,
            stateless(InputRequest::ListRoots(RequestParams {
                meta: Some(progress_meta("roots-2")),
            })),
        )),
        client_result("roots result, empty", result, ListRootsResult::default()),
        client_result("roots result, full", result, roots_full()),
        input_response("roots answer, empty", result, ListRootsResult::default()),
        input_response("roots answer, full", result, roots_full()),
        session(client_notification(
            "roots list changed",
            &["NotificationParams"],
            changed,
            ClientNotification::RootsListChanged(NotificationParams::default()),
        )),
        session(client_notification(
            "roots list changed, with _meta",
            &["NotificationParams"],
            changed,
            ClientNotification::RootsListChanged(NotificationParams {
                meta: Some(notification_meta()),
            }),
        )),
    ]
}
