//! The report model: requirements (what the spec asks, where, how strongly) and what was
//! observed for each (pass, fail with evidence, skip with the reason).

use serde::Serialize;

/// How strongly the spec asks for a requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) enum Level {
    /// **MUST** (or MUST NOT): a failure makes the server non-conformant.
    #[serde(rename = "MUST")]
    Must,
    /// **SHOULD** (or SHOULD NOT): a failure is reported but does not fail the check.
    #[serde(rename = "SHOULD")]
    Should,
}

impl Level {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

/// One requirement of the spec, as the checker tests it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// A stable identifier, `section.name`.
    pub(crate) id: &'static str,
    /// The spec section it belongs to (the report's grouping).
    pub(crate) section: Section,
    /// MUST or SHOULD.
    pub(crate) level: Level,
    /// What the server is expected to do.
    pub(crate) title: &'static str,
    /// Where the spec says so (`page#anchor` of the revision's docs).
    pub(crate) spec: &'static str,
}

/// The spec sections of the report, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Section {
    /// Base protocol: JSON-RPC messages, errors, batches.
    JsonRpc,
    /// The stdio transport.
    Stdio,
    /// The Streamable HTTP transport.
    Http,
    /// Lifecycle: initialization and version negotiation (session era).
    Lifecycle,
    /// The stateless era: per-request `_meta`, `server/discover`.
    Stateless,
    /// Capabilities declared and implemented.
    Capabilities,
    /// Result shapes against the revision's schema.
    Shapes,
    /// Pagination of list results.
    Pagination,
    /// Ping.
    Ping,
    /// Cancellation.
    Cancellation,
    /// Progress notifications.
    Progress,
    /// Logging.
    Logging,
}

impl Section {
    pub(crate) fn title(self) -> &'static str {
        match self {
            Section::JsonRpc => "Base protocol: JSON-RPC",
            Section::Stdio => "Transport: stdio",
            Section::Http => "Transport: Streamable HTTP",
            Section::Lifecycle => "Lifecycle and version negotiation",
            Section::Stateless => "Stateless era: _meta and server/discover",
            Section::Capabilities => "Capabilities: declared and implemented",
            Section::Shapes => "Result shapes (the revision's schema)",
            Section::Pagination => "Utilities: pagination",
            Section::Ping => "Utilities: ping",
            Section::Cancellation => "Utilities: cancellation",
            Section::Progress => "Utilities: progress",
            Section::Logging => "Utilities: logging",
        }
    }
}

/// What was observed for one requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The server did what the requirement asks.
    Pass,
    /// It did not; the evidence is what was sent and what came back.
    Fail(String),
    /// Not checkable here (the reason says why).
    Skip(String),
}

/// One observation: a requirement, the revision it was checked under (none when it does
/// not depend on one), and the outcome.
#[derive(Debug)]
pub(crate) struct Finding {
    pub(crate) requirement: &'static Requirement,
    pub(crate) revision: Option<&'static str>,
    pub(crate) outcome: Outcome,
    /// The evidence of further failures of the same requirement under the same revision
    /// (at most [`MAX_EVIDENCE`] in all), and how many more there were.
    pub(crate) more_evidence: Vec<String>,
    pub(crate) uncounted: usize,
}

/// The most pieces of evidence kept per requirement and revision.
pub(crate) const MAX_EVIDENCE: usize = 6;

/// Every finding of a run, in the order they were made.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub(crate) list: Vec<Finding>,
}

impl Findings {
    /// Record an outcome of `requirement` under `revision`. A requirement observed more
    /// than once keeps one finding: a failure beats a pass, which beats a skip; the first
    /// failure's evidence comes first, later ones follow (up to a limit).
    pub(crate) fn record(
        &mut self,
        requirement: &'static Requirement,
        revision: Option<&'static str>,
        outcome: Outcome,
    ) {
        let earlier = self
            .list
            .iter_mut()
            .find(|f| std::ptr::eq(f.requirement, requirement) && f.revision == revision);
        let Some(earlier) = earlier else {
            self.list.push(Finding {
                requirement,
                revision,
                outcome,
                more_evidence: Vec::new(),
                uncounted: 0,
            });
            return;
        };
        match (&earlier.outcome, outcome) {
            (Outcome::Fail(_), Outcome::Fail(evidence)) => {
                if earlier.more_evidence.len() + 1 < MAX_EVIDENCE {
                    earlier.more_evidence.push(evidence);
                } else {
                    earlier.uncounted += 1;
                }
            }
            (Outcome::Fail(_), _) | (Outcome::Pass, Outcome::Skip(_)) => {}
            (_, outcome) => earlier.outcome = outcome,
        }
    }
}

/// Declare requirements as `static`s, each with where the spec says so (a page of the
/// revision's docs and its anchor):
/// `requirement!(NAME, "id", Section, Must, "title", "basic/transports#session-management");`.
macro_rules! requirement {
    ($name:ident, $id:literal, $section:ident, $level:ident, $title:literal, $spec:literal) => {
        pub(crate) static $name: $crate::check::model::Requirement =
            $crate::check::model::Requirement {
                id: $id,
                section: $crate::check::model::Section::$section,
                level: $crate::check::model::Level::$level,
                title: $title,
                spec: $spec,
            };
    };
}
pub(crate) use requirement;
