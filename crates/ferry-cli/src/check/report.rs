//! The report: human text grouped by spec section (MUST/SHOULD, pass/fail/skip, the
//! evidence of each failure), or JSON (`--json`).
//!
//! A requirement checked under several revisions is one line: it fails if it failed under
//! any (each failing revision's evidence is shown), passes if it passed under one and
//! failed under none, and is skipped otherwise.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::model::{Finding, Findings, Level, Outcome, Requirement, Section};

/// What happened to each revision the checker tried.
#[derive(Debug)]
pub(crate) struct RevisionStatus {
    pub(crate) revision: &'static str,
    /// `None`: checked. `Some(why)`: not offered by the server.
    pub(crate) not_offered: Option<String>,
}

/// A complete run.
pub(crate) struct Report {
    pub(crate) target: String,
    pub(crate) revisions: Vec<RevisionStatus>,
    pub(crate) findings: Findings,
    /// How many JSON-RPC requests the checker sent (malformed ones included).
    pub(crate) requests_sent: usize,
}

/// One requirement's findings, together.
struct Line<'a> {
    requirement: &'static Requirement,
    findings: Vec<&'a Finding>,
}

impl Line<'_> {
    fn status(&self) -> &'static str {
        if self
            .findings
            .iter()
            .any(|f| matches!(f.outcome, Outcome::Fail(_)))
        {
            "fail"
        } else if self.findings.iter().any(|f| f.outcome == Outcome::Pass) {
            "pass"
        } else {
            "skip"
        }
    }
}

impl Finding {
    /// Every piece of failure evidence, the count of those not kept last.
    fn evidence(&self) -> Vec<String> {
        let Outcome::Fail(first) = &self.outcome else {
            return Vec::new();
        };
        let mut all = vec![first.clone()];
        all.extend(self.more_evidence.iter().cloned());
        if self.uncounted > 0 {
            all.push(format!("... and {} more", self.uncounted));
        }
        all
    }
}

impl Report {
    fn lines(&self) -> Vec<Line<'_>> {
        let mut lines: Vec<Line<'_>> = Vec::new();
        for finding in &self.findings.list {
            match lines
                .iter_mut()
                .find(|l| std::ptr::eq(l.requirement, finding.requirement))
            {
                Some(line) => line.findings.push(finding),
                None => lines.push(Line {
                    requirement: finding.requirement,
                    findings: vec![finding],
                }),
            }
        }
        // Stable: by section, then in the order first checked; revisions oldest first.
        lines.sort_by_key(|l| l.requirement.section);
        for line in &mut lines {
            line.findings.sort_by_key(|f| f.revision);
        }
        lines
    }

    /// Whether a MUST requirement failed.
    pub(crate) fn must_failed(&self) -> bool {
        self.lines()
            .iter()
            .any(|l| l.requirement.level == Level::Must && l.status() == "fail")
    }

    fn counts(&self) -> (usize, usize, usize, usize) {
        let lines = self.lines();
        let count = |s: &str| lines.iter().filter(|l| l.status() == s).count();
        let must = lines
            .iter()
            .filter(|l| l.status() == "fail" && l.requirement.level == Level::Must)
            .count();
        (count("pass"), count("fail"), must, count("skip"))
    }

    /// The human report.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "ferry check {}", self.target);
        for revision in &self.revisions {
            match &revision.not_offered {
                None => {
                    let _ = writeln!(out, "  revision {}: checked", revision.revision);
                }
                Some(why) => {
                    let _ = writeln!(out, "  revision {}: not offered ({why})", revision.revision);
                }
            }
        }
        let mut section: Option<Section> = None;
        for line in self.lines() {
            let requirement = line.requirement;
            if section != Some(requirement.section) {
                section = Some(requirement.section);
                let _ = writeln!(out, "\n{}", requirement.section.title());
            }
            let status = match line.status() {
                "fail" => "FAIL",
                other => other,
            };
            let _ = writeln!(
                out,
                "  {status:<4}  {:<6}  {}: {}",
                requirement.level.as_str(),
                requirement.id,
                requirement.title
            );
            match line.status() {
                "fail" => {
                    let _ = writeln!(out, "        spec: {}", requirement.spec);
                    // The same evidence under several revisions is one line.
                    let mut evidence: Vec<(String, Vec<&str>)> = Vec::new();
                    for finding in &line.findings {
                        for text in finding.evidence() {
                            let revision = finding.revision.unwrap_or("any revision");
                            match evidence.iter_mut().find(|(t, _)| *t == text) {
                                Some((_, revisions)) => revisions.push(revision),
                                None => evidence.push((text, vec![revision])),
                            }
                        }
                    }
                    for (text, revisions) in evidence {
                        let _ = writeln!(out, "        {}: {text}", revisions.join(", "));
                    }
                }
                "skip" => {
                    if let Some(Outcome::Skip(reason)) = line.findings.first().map(|f| &f.outcome) {
                        let _ = writeln!(out, "        {reason}");
                    }
                }
                _ => {}
            }
        }
        let (pass, fail, must, skip) = self.counts();
        let _ = writeln!(
            out,
            "\n{} requirements: {pass} passed, {fail} failed ({must} MUST), {skip} skipped",
            pass + fail + skip
        );
        out
    }

    /// The JSON report.
    pub(crate) fn json(&self) -> Value {
        let requirements: Vec<Value> = self
            .lines()
            .iter()
            .map(|line| {
                let r = line.requirement;
                let findings: Vec<Value> = line
                    .findings
                    .iter()
                    .map(|f| {
                        let status = match f.outcome {
                            Outcome::Pass => "pass",
                            Outcome::Fail(_) => "fail",
                            Outcome::Skip(_) => "skip",
                        };
                        let detail = match &f.outcome {
                            Outcome::Skip(reason) => vec![reason.clone()],
                            _ => f.evidence(),
                        };
                        json!({"revision": f.revision, "status": status, "detail": detail})
                    })
                    .collect();
                json!({"id": r.id, "section": r.section, "level": r.level, "title": r.title,
                       "spec": r.spec,
                       "status": line.status(), "findings": findings})
            })
            .collect();
        let revisions: Vec<Value> = self
            .revisions
            .iter()
            .map(|r| json!({"revision": r.revision, "checked": r.not_offered.is_none(), "notOffered": r.not_offered}))
            .collect();
        let (pass, fail, must, skip) = self.counts();
        json!({
            "target": self.target,
            "revisions": revisions,
            "requirements": requirements,
            "summary": {"passed": pass, "failed": fail, "mustFailed": must, "skipped": skip,
                        "requestsSent": self.requests_sent},
        })
    }
}
