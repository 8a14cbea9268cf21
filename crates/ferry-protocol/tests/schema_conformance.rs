//! Schema conformance: representative values of every type, conformed to each revision,
//! validate against that revision's `schema.json` (plain, and strict with
//! `additionalProperties: false` on closed objects); every definition of every revision is
//! covered by at least one sample.

#![allow(unreachable_pub, dead_code)]

mod schema;

#[test]
fn every_definition_of_every_revision_validates() {
    let samples = schema::samples::all();
    let mut failures = Vec::new();
    let mut uncovered = Vec::new();
    let mut checks = 0;
    for revision in schema::all_revisions() {
        let report = schema::check_revision(&revision, &samples);
        checks += report.checks;
        failures.extend(report.failures);
        let missing: Vec<_> = revision
            .defs
            .keys()
            .filter(|d| !report.covered.contains(*d))
            .cloned()
            .collect();
        if !missing.is_empty() {
            uncovered.push(format!(
                "{} ({} of {}): {}",
                revision.label,
                missing.len(),
                revision.defs.len(),
                missing.join(" ")
            ));
        }
    }
    println!("{} samples, {checks} validations", samples.len());
    assert!(
        failures.is_empty(),
        "{} validation failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        uncovered.is_empty(),
        "definitions without a valid sample:\n{}",
        uncovered.join("\n")
    );
}

/// Strict `allOf` composites are closed over the union of their members: a member of
/// either part validates, anything else does not.
#[test]
fn strict_composites_stay_closed() {
    use ferry_protocol::ProtocolVersion;
    use serde_json::json;
    let schema = schema::RevisionSchema::load("2025-11-25", ProtocolVersion::V2025_11_25);
    let task = json!({
        "taskId": "t-1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null, "_meta": {"k": "v"}
    });
    for def in [
        "GetTaskResult",
        "CancelTaskResult",
        "TaskStatusNotificationParams",
    ] {
        assert_eq!(schema.check(def, &task), Vec::<String>::new(), "{def}");
        let mut extra = task.clone();
        extra["unknown"] = json!(1);
        assert!(
            !schema.check(def, &extra).is_empty(),
            "{def} accepted an unknown member"
        );
    }
    let error = |extra: serde_json::Value| {
        let mut error = json!({"code": -32042, "message": "m", "data": {"elicitations": []}});
        error
            .as_object_mut()
            .expect("object")
            .extend(extra.as_object().cloned().unwrap_or_default());
        json!({"jsonrpc": "2.0", "id": 1, "error": error})
    };
    assert!(
        schema
            .check("URLElicitationRequiredError", &error(json!({})))
            .is_empty()
    );
    assert!(
        !schema
            .check("URLElicitationRequiredError", &error(json!({"x": 1})))
            .is_empty()
    );
}
