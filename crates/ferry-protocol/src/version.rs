//! The version registry: every published MCP revision, its era, its features, and the
//! negotiation rule.
//!
//! | revision   | era       | notable additions |
//! |------------|-----------|-------------------|
//! | 2024-11-05 | session   | first release; HTTP+SSE transport |
//! | 2025-03-26 | session   | Streamable HTTP, JSON-RPC batches (this revision only), audio, tool annotations, completions capability, progress `message` |
//! | 2025-06-18 | session   | structured tool output, elicitation, resource links, `title`, `_meta` everywhere; batches removed |
//! | 2025-11-25 | session   | icons, URL elicitation, sampling with tools, tasks (experimental), `-32042` |
//! | 2026-07-28 | stateless | no `initialize`: per-request `_meta`, `server/discover`, MRTR (`input_required`), `subscriptions/listen`, `resultType`, `ttlMs`/`cacheScope`; no `ping`, `logging/setLevel`, `resources/subscribe`, tasks |
//!
//! The spec's `draft` schema is byte-identical to 2026-07-28, so 2026-07-28 serves it.

use std::fmt;
use std::str::FromStr;

/// One published revision of the Model Context Protocol.
///
/// Ordered by publication date, so `a < b` means `a` is older.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`: the first release.
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, batches, audio, tool annotations.
    V2025_03_26,
    /// `2025-06-18`: structured output, elicitation, resource links.
    V2025_06_18,
    /// `2025-11-25`: icons, URL elicitation, sampling tools, tasks.
    V2025_11_25,
    /// `2026-07-28`: the stateless era.
    V2026_07_28,
}

/// The two eras of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2024-11-05 .. 2025-11-25: `initialize`, sessions, server-to-client requests.
    Session,
    /// 2026-07-28 onwards: per-request `_meta`, `server/discover`, `input_required` round trips.
    Stateless,
}

/// A protocol feature whose presence depends on the revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// The `initialize` / `notifications/initialized` handshake (session era).
    InitializeHandshake,
    /// `ping` requests (removed in 2026-07-28).
    Ping,
    /// JSON-RPC batches (2025-03-26 only).
    Batches,
    /// `audio` content blocks (from 2025-03-26).
    AudioContent,
    /// `ToolAnnotations` on tools (from 2025-03-26).
    ToolAnnotations,
    /// The `completions` server capability (from 2025-03-26; before it completion was implied).
    CompletionsCapability,
    /// The `message` field of progress notifications (from 2025-03-26).
    ProgressMessage,
    /// `outputSchema` on tools and `structuredContent` on results (from 2025-06-18).
    StructuredOutput,
    /// `elicitation/create` (from 2025-06-18).
    Elicitation,
    /// `resource_link` content blocks (from 2025-06-18).
    ResourceLinks,
    /// `title` on tools, resources, prompts and implementations (from 2025-06-18).
    Titles,
    /// `context` on completion requests (from 2025-06-18).
    CompletionContext,
    /// `icons` on tools, resources, prompts and implementations (from 2025-11-25).
    Icons,
    /// URL-mode elicitation (from 2025-11-25).
    UrlElicitation,
    /// `tools` and `toolChoice` in sampling requests (from 2025-11-25).
    SamplingTools,
    /// Tasks (`tasks/*`, `execution.taskSupport`; 2025-11-25 only, an extension afterwards).
    Tasks,
    /// `notifications/elicitation/complete` and error `-32042` (2025-11-25 only).
    UrlElicitationRequiredError,
    /// `logging/setLevel` (removed in 2026-07-28; replaced by a per-request level).
    SetLevel,
    /// `resources/subscribe` / `resources/unsubscribe` (removed in 2026-07-28).
    ResourceSubscribe,
    /// `notifications/roots/list_changed` (removed in 2026-07-28).
    RootsListChanged,
    /// Server-to-client JSON-RPC requests (sampling, roots, elicitation) in the session era.
    ServerToClientRequests,
    /// Per-request `_meta` (version, capabilities, client info) instead of a handshake.
    RequestMeta,
    /// `server/discover` (from 2026-07-28).
    Discover,
    /// Multi round-trip requests: `input_required` results (from 2026-07-28).
    InputRequired,
    /// `subscriptions/listen` (from 2026-07-28).
    SubscriptionsListen,
    /// `resultType` on every result (from 2026-07-28).
    ResultType,
    /// `ttlMs` / `cacheScope` on list, read and discover results (from 2026-07-28).
    CacheHints,
    /// `extensions` in capabilities (from 2026-07-28).
    Extensions,
}

/// A version string that names no revision Ferry knows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The revision's position in [`ALL`](Self::ALL): an index for per-revision tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The newest session-era revision.
    pub const LATEST_SESSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The wire string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era this revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Stateless,
            _ => Era::Session,
        }
    }

    /// Whether this revision has `feature`.
    pub fn has(self, feature: Feature) -> bool {
        use Feature::*;
        use ProtocolVersion::*;
        let session = self.era() == Era::Session;
        match feature {
            InitializeHandshake
            | Ping
            | SetLevel
            | ResourceSubscribe
            | RootsListChanged
            | ServerToClientRequests => session,
            Batches => self == V2025_03_26,
            AudioContent | ToolAnnotations | CompletionsCapability | ProgressMessage => {
                self >= V2025_03_26
            }
            StructuredOutput | Elicitation | ResourceLinks | Titles | CompletionContext => {
                self >= V2025_06_18
            }
            Icons | UrlElicitation | SamplingTools => self >= V2025_11_25,
            Tasks | UrlElicitationRequiredError => self == V2025_11_25,
            RequestMeta | Discover | InputRequired | SubscriptionsListen | ResultType
            | CacheHints | Extensions => !session,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The set of revisions an endpoint is willing to speak, with the negotiation rules.
///
/// The default set is every revision ([`ProtocolVersion::ALL`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionSet {
    versions: Vec<ProtocolVersion>,
}

impl Default for VersionSet {
    fn default() -> Self {
        VersionSet::all()
    }
}

impl VersionSet {
    /// Every revision Ferry implements.
    pub fn all() -> Self {
        VersionSet {
            versions: ProtocolVersion::ALL.to_vec(),
        }
    }

    /// Only the given revisions (duplicates removed, kept oldest first).
    pub fn only(versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        let mut versions: Vec<_> = versions.into_iter().collect();
        versions.sort();
        versions.dedup();
        VersionSet { versions }
    }

    /// The revisions in this set, oldest first.
    pub fn versions(&self) -> &[ProtocolVersion] {
        &self.versions
    }

    /// Whether `v` is in the set.
    pub fn contains(&self, v: ProtocolVersion) -> bool {
        self.versions.contains(&v)
    }

    /// The newest revision in the set that belongs to `era`.
    pub fn newest_of(&self, era: Era) -> Option<ProtocolVersion> {
        self.versions.iter().rev().copied().find(|v| v.era() == era)
    }

    /// The wire strings of the set, newest first (the order `supportedVersions` lists them).
    pub fn wire_strings(&self) -> Vec<&'static str> {
        self.versions.iter().rev().map(|v| v.as_str()).collect()
    }

    /// The version-negotiation rule: answer the requested revision if this set supports it
    /// and it belongs to `era`, otherwise the newest supported revision of `era`.
    ///
    /// `initialize` negotiates with [`Era::Session`]: a client asking for an unknown or a
    /// stateless revision gets the newest session-era revision. In the stateless era a server
    /// does not substitute a version: it rejects an unsupported one (see
    /// [`VersionSet::accept_stateless`]); a client uses this rule to pick from
    /// `supportedVersions`. Returns `None` when the set has no revision of that era.
    pub fn negotiate(&self, requested: &str, era: Era) -> Option<ProtocolVersion> {
        match requested.parse::<ProtocolVersion>() {
            Ok(v) if v.era() == era && self.contains(v) => Some(v),
            _ => self.newest_of(era),
        }
    }

    /// Resolve a stateless request's `io.modelcontextprotocol/protocolVersion`: the revision
    /// if it is supported and of the stateless era, `None` otherwise (the caller answers
    /// `-32022` with [`VersionSet::wire_strings`] as `data.supported`).
    pub fn accept_stateless(&self, requested: &str) -> Option<ProtocolVersion> {
        requested
            .parse::<ProtocolVersion>()
            .ok()
            .filter(|v| v.era() == Era::Stateless && self.contains(*v))
    }
}

/// What the first request of a connection says about its era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EraHint {
    /// `initialize`: a session-era client.
    Session,
    /// `server/discover`, or a request carrying `io.modelcontextprotocol/protocolVersion` in
    /// `params._meta`: a stateless-era client.
    Stateless,
    /// Neither (for example `ping` before `initialize`): decide on a later message.
    Unknown,
}

/// The `_meta` key that carries a stateless request's protocol version.
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Detect the era of a connection from its first request's method and raw params.
///
/// Cheap: it parses only `params._meta` and only when the method does not decide alone.
pub fn detect_era(method: &str, params: Option<&serde_json::value::RawValue>) -> EraHint {
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<MetaProbe<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct MetaProbe<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
        version: Option<&'a serde_json::value::RawValue>,
    }
    match method {
        "initialize" => EraHint::Session,
        "server/discover" => EraHint::Stateless,
        _ => {
            let has_version = params
                .and_then(|p| serde_json::from_str::<Probe<'_>>(p.get()).ok())
                .and_then(|p| p.meta)
                .and_then(|m| m.version)
                .is_some();
            if has_version {
                EraHint::Stateless
            } else {
                EraHint::Unknown
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion::*;

    #[test]
    fn every_revision_sits_at_its_index() {
        for (i, v) in ProtocolVersion::ALL.into_iter().enumerate() {
            assert_eq!(v.index(), i, "{v:?}");
        }
    }

    #[test]
    fn strings_round_trip() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
        }
        assert!("2025-01-01".parse::<ProtocolVersion>().is_err());
    }

    #[test]
    fn features_follow_the_changelogs() {
        assert!(V2025_03_26.has(Feature::Batches));
        assert!(!V2025_06_18.has(Feature::Batches));
        assert!(!V2024_11_05.has(Feature::Batches));
        assert!(!V2025_03_26.has(Feature::StructuredOutput));
        assert!(V2025_06_18.has(Feature::StructuredOutput));
        assert!(V2025_06_18.has(Feature::Elicitation));
        assert!(V2025_11_25.has(Feature::Tasks));
        assert!(!V2026_07_28.has(Feature::Tasks));
        assert!(!V2026_07_28.has(Feature::Ping));
        assert!(V2026_07_28.has(Feature::Discover));
        assert_eq!(V2026_07_28.era(), Era::Stateless);
        assert_eq!(V2025_11_25.era(), Era::Session);
    }

    #[test]
    fn negotiation() {
        let all = VersionSet::all();
        let s = Era::Session;
        assert_eq!(all.negotiate("2025-03-26", s), Some(V2025_03_26));
        assert_eq!(all.negotiate("1999-01-01", s), Some(V2025_11_25));
        assert_eq!(all.negotiate("2026-07-28", s), Some(V2025_11_25));
        let old = VersionSet::only([V2024_11_05, V2025_03_26]);
        assert_eq!(old.negotiate("2025-11-25", s), Some(V2025_03_26));
        assert_eq!(old.negotiate("2026-07-28", Era::Stateless), None);
        assert_eq!(all.accept_stateless("2026-07-28"), Some(V2026_07_28));
        assert_eq!(all.accept_stateless("2025-06-18"), None);
        assert_eq!(all.wire_strings()[0], "2026-07-28");
    }

    #[test]
    fn era_detection() {
        let meta = serde_json::value::RawValue::from_string(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#.into(),
        )
        .expect("raw");
        assert_eq!(detect_era("initialize", None), EraHint::Session);
        assert_eq!(detect_era("server/discover", None), EraHint::Stateless);
        assert_eq!(detect_era("tools/list", Some(&meta)), EraHint::Stateless);
        assert_eq!(detect_era("ping", None), EraHint::Unknown);
    }
}
