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
