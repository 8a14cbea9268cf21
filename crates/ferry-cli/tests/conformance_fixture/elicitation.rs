//! The elicitation scenarios.

use serde_json::{Value, json};

use crate::client::{block, replay, text};

#[test]
fn elicitation_sep1034_defaults() {
    replay("elicitation-sep1034-defaults", |c| {
        c.respond_with(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept", "content": {
                "name": "Jane Smith", "age": 25, "score": 88, "status": "inactive",
                "verified": false}})),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool("test_elicitation_sep1034_defaults", json!({}));
        assert_eq!(c.server_requests.len(), 1, "elicitation-sep1034-general");
        let fields = &c.server_requests[0]["params"]["requestedSchema"]["properties"];
        let expect = [
            ("name", "string", json!("John Doe")),
            ("age", "integer", json!(30)),
            ("score", "number", json!(95.5)),
            ("status", "string", json!("active")),
            ("verified", "boolean", json!(true)),
        ];
        for (name, kind, default) in expect {
            assert_eq!(fields[name]["type"], kind, "{name}: {fields}");
            assert_eq!(fields[name]["default"], default, "{name}: {fields}");
        }
        let choices = fields["status"]["enum"].as_array().expect("status enum");
        assert!(
            choices.contains(&json!("active")),
            "default among the choices"
        );
        assert_eq!(
            text(block(&result, "text")),
            r#"Elicitation completed: action=accept, content={"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}"#
        );
    });
}

/// Assert that `options` are `const`/`title` string pairs.
fn assert_titled(options: &Value) {
    let options = options.as_array().expect("an array of options");
    assert!(!options.is_empty());
    for option in options {
        assert!(
            option["const"].is_string() && option["title"].is_string(),
            "{option}"
        );
    }
}

#[test]
fn elicitation_sep1330_enums() {
    replay("elicitation-sep1330-enums", |c| {
        c.respond_with(|method, _| match method {
            "elicitation/create" => Ok(json!({"action": "accept", "content": {
                "untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]}})),
            other => panic!("unexpected {other}"),
        });
        let result = c.call_tool("test_elicitation_sep1330_enums", json!({}));
        assert_eq!(c.server_requests.len(), 1, "elicitation-sep1330-general");
        let fields = &c.server_requests[0]["params"]["requestedSchema"]["properties"];

        let untitled = &fields["untitledSingle"];
        assert_eq!(untitled["type"], "string");
        assert!(untitled["enum"].is_array());
        assert!(untitled.get("oneOf").is_none() && untitled.get("enumNames").is_none());

        let titled = &fields["titledSingle"];
        assert_eq!(titled["type"], "string");
        assert_titled(&titled["oneOf"]);
        assert!(titled.get("enum").is_none());

        let legacy = &fields["legacyEnum"];
        assert_eq!(legacy["type"], "string");
        let (values, names) = (legacy["enum"].as_array(), legacy["enumNames"].as_array());
        assert_eq!(values.map(Vec::len), Some(3));
        assert_eq!(names.map(Vec::len), Some(3));

        let multi = &fields["untitledMulti"];
        assert_eq!(multi["type"], "array");
        assert_eq!(multi["items"]["type"], "string");
        assert!(multi["items"]["enum"].is_array());
        assert!(multi["items"].get("anyOf").is_none());

        let titled_multi = &fields["titledMulti"];
        assert_eq!(titled_multi["type"], "array");
        assert_titled(&titled_multi["items"]["anyOf"]);
        assert!(titled_multi["items"].get("enum").is_none());

        assert!(
            text(block(&result, "text")).starts_with("Elicitation completed: action=accept, "),
            "{result}"
        );
    });
}
