//! The resource and prompt scenarios.

use serde_json::{Value, json};

use crate::client::{assert_png, base64, replay, text};

#[test]
fn resources_list() {
    replay("resources-list", |c| {
        let result = c.ok("resources/list", json!({}));
        let resources = result["resources"].as_array().expect("resources");
        for resource in resources {
            assert!(resource["uri"].is_string() && resource["name"].is_string());
            assert!(resource["description"].is_string(), "{resource}");
        }
        let uris: Vec<_> = resources
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "test://static-text",
                "test://static-binary",
                "test://watched-resource"
            ],
            "direct resources only, no templates"
        );
        let templates = c.ok("resources/templates/list", json!({}));
        assert_eq!(
            templates["resourceTemplates"][0]["uriTemplate"],
            "test://template/{id}/data"
        );
    });
}

#[test]
fn resources_read_text() {
    replay("resources-read-text", |c| {
        let result = c.ok("resources/read", json!({"uri": "test://static-text"}));
        assert_eq!(
            result["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}])
        );
    });
}

#[test]
fn resources_read_binary() {
    replay("resources-read-binary", |c| {
        let result = c.ok("resources/read", json!({"uri": "test://static-binary"}));
        let contents = &result["contents"][0];
        assert_eq!(contents["uri"], "test://static-binary");
        assert_eq!(contents["mimeType"], "image/png");
        let blob = base64(contents["blob"].as_str().expect("blob"));
        assert!(blob.starts_with(b"\x89PNG\r\n\x1a\n"));
    });
}

#[test]
fn resources_templates_read() {
    replay("resources-templates-read", |c| {
        let result = c.ok("resources/read", json!({"uri": "test://template/123/data"}));
        let contents = &result["contents"][0];
        assert_eq!(contents["uri"], "test://template/123/data");
        assert_eq!(contents["mimeType"], "application/json");
        let data: Value = serde_json::from_str(text(contents)).expect("JSON text");
        assert_eq!(
            data,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );
    });
}

#[test]
fn resources_subscribe() {
    replay("resources-subscribe", |c| {
        let result = c.ok(
            "resources/subscribe",
            json!({"uri": "test://watched-resource"}),
        );
        assert_eq!(result, json!({}));
    });
}

#[test]
fn resources_unsubscribe() {
    replay("resources-unsubscribe", |c| {
        let uri = json!({"uri": "test://watched-resource"});
        assert_eq!(c.ok("resources/subscribe", uri.clone()), json!({}));
        assert_eq!(c.ok("resources/unsubscribe", uri), json!({}));
    });
}

#[test]
fn prompts_list() {
    replay("prompts-list", |c| {
        let result = c.ok("prompts/list", json!({}));
        let prompts = result["prompts"].as_array().expect("prompts");
        for prompt in prompts {
            assert!(prompt["name"].is_string(), "{prompt}");
            assert!(prompt["description"].is_string(), "{prompt}");
        }
        let names: Vec<_> = prompts
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image"
            ]
        );
        let arguments = &prompts[1]["arguments"];
        assert_eq!(arguments[0]["name"], "arg1");
        assert_eq!(arguments[0]["required"], true);
        assert_eq!(arguments[1]["name"], "arg2");
        assert_eq!(prompts[2]["arguments"][0]["name"], "resourceUri");
    });
}

#[test]
fn prompts_get_simple() {
    replay("prompts-get-simple", |c| {
        let result = c.ok("prompts/get", json!({"name": "test_simple_prompt"}));
        assert_eq!(
            result["messages"],
            json!([{"role": "user",
                    "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );
    });
}

#[test]
fn prompts_get_with_args() {
    replay("prompts-get-with-args", |c| {
        let result = c.ok(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments",
                   "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
        );
        assert_eq!(
            text(&result["messages"][0]["content"]),
            "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
        );
    });
}

#[test]
fn prompts_get_embedded_resource() {
    replay("prompts-get-embedded-resource", |c| {
        let result = c.ok(
            "prompts/get",
            json!({"name": "test_prompt_with_embedded_resource",
                   "arguments": {"resourceUri": "test://example-resource"}}),
        );
        assert_eq!(
            result["messages"],
            json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": "test://example-resource", "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text",
                    "text": "Please process the embedded resource above."}}
            ])
        );
    });
}

#[test]
fn prompts_get_with_image() {
    replay("prompts-get-with-image", |c| {
        let result = c.ok("prompts/get", json!({"name": "test_prompt_with_image"}));
        let messages = result["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["role"], "user");
        assert_eq!(messages[0]["content"]["type"], "image");
        assert_png(&messages[0]["content"]);
        assert_eq!(
            messages[1]["content"],
            json!({"type": "text", "text": "Please analyze the image above."})
        );
    });
}
