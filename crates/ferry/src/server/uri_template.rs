//! Matching URIs against RFC 6570 URI templates (the reverse of expansion).
//!
//! Hand-written because the ecosystem's URI-template crates only expand templates; none
//! matches a URI against one and extracts the variables, which is what a server needs to
//! route `resources/read`. It covers levels 1-3 and the explode modifier of level 4:
//! `{var}`, `{+var}`, `{#var}`, `{.var}`, `{/var}`, `{/var*}`, `{;var}`, `{?a,b}`, `{&a}`.
//! Matching is a bounded backtracking search (at most [`MAX_STEPS`] steps, each a candidate
//! expansion tried, so its work is at most that many times the URI's length), so a hostile
//! URI cannot make it slow.

use std::fmt;

use indexmap::IndexMap;
use percent_encoding::percent_decode_str;

/// The most matching steps spent on one URI before giving up.
const MAX_STEPS: usize = 10_000;

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression { op: Op, vars: Vec<Var> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Var {
    name: String,
    explode: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryContinuation,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryContinuation,
            _ => return None,
        })
    }

    fn prefix(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query => "?",
            Op::QueryContinuation => "&",
        }
    }

    fn separator(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryContinuation => '&',
        }
    }

    /// Whether a character may appear inside this operator's expansion.
    fn allows(self, c: char) -> bool {
        match self {
            Op::Reserved | Op::Fragment => !matches!(c, '?' | '#') || self == Op::Fragment,
            Op::Query | Op::QueryContinuation => c != '#',
            Op::Path => !matches!(c, '?' | '#'),
            Op::Simple | Op::Label | Op::PathParam => !matches!(c, '/' | '?' | '#' | '&'),
        }
    }
}

/// A URI template that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?}: {reason}")]
pub struct TemplateError {
    template: String,
    reason: &'static str,
}

impl UriTemplate {
    /// Parse a template.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let error = |reason| TemplateError {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| error("unclosed `{`"))?;
                    let body = &rest[1..end];
                    let (op, list) = match body.chars().next().and_then(Op::from_char) {
                        Some(op) => (op, &body[1..]),
                        None => (Op::Simple, body),
                    };
                    let vars = list
                        .split(',')
                        .map(|spec| {
                            let (name, explode) = match spec.strip_suffix('*') {
                                Some(name) => (name, true),
                                None => (spec.split(':').next().unwrap_or(spec), false),
                            };
                            let valid = !name.is_empty()
                                && name.chars().all(|c| {
                                    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%')
                                });
                            valid
                                .then(|| Var {
                                    name: name.to_owned(),
                                    explode,
                                })
                                .ok_or_else(|| error("invalid variable name"))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    parts.push(Part::Expression { op, vars });
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    if rest[..end].contains('}') {
                        return Err(error("unmatched `}`"));
                    }
                    parts.push(Part::Literal(rest[..end].to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|part| match part {
                Part::Literal(_) => &[][..],
                Part::Expression { vars, .. } => vars.as_slice(),
            })
            .map(|v| v.name.as_str())
    }

    /// The variables of `uri` if it matches the template (values percent-decoded;
    /// exploded lists joined by their separator), else `None`.
    pub fn matches(&self, uri: &str) -> Option<IndexMap<String, String>> {
        let mut steps = 0;
        let mut vars = IndexMap::new();
        self.match_from(0, uri, &mut vars, &mut steps)
            .then_some(vars)
    }

    fn match_from(
        &self,
        part: usize,
        rest: &str,
        vars: &mut IndexMap<String, String>,
        steps: &mut usize,
    ) -> bool {
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        let Some(current) = self.parts.get(part) else {
            return rest.is_empty();
        };
        match current {
            Part::Literal(literal) => rest
                .strip_prefix(literal.as_str())
                .is_some_and(|rest| self.match_from(part + 1, rest, vars, steps)),
            Part::Expression { op, vars: specs } => {
                // Longest first (a greedy match is what a reader expects), and last the
                // empty expansion (undefined variables).
                let mut ends: Vec<usize> = Vec::new();
                if let Some(body) = rest.strip_prefix(op.prefix()) {
                    let offset = rest.len() - body.len();
                    let span = body
                        .char_indices()
                        .find(|&(_, c)| !op.allows(c))
                        .map_or(body.len(), |(i, _)| i);
                    ends.extend(
                        (0..=span)
                            .rev()
                            .filter(|&i| body.is_char_boundary(i))
                            .map(|i| offset + i)
                            .filter(|&end| end > 0),
                    );
                }
                ends.push(0);
                for end in ends {
                    // Each candidate is a step: its binding reads the whole expansion, so
                    // candidates that fail to bind must count too, or adjacent expressions
                    // over a long URI would cost the square of its length at every step.
                    *steps += 1;
                    if *steps > MAX_STEPS {
                        return false;
                    }
                    let checkpoint = vars.len();
                    let expansion = &rest[..end];
                    if bind(*op, specs, expansion, vars)
                        && self.match_from(part + 1, &rest[end..], vars, steps)
                    {
                        return true;
                    }
                    vars.truncate(checkpoint);
                }
                false
            }
        }
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Assign the variables of one expression from its expansion.
fn bind(op: Op, specs: &[Var], expansion: &str, vars: &mut IndexMap<String, String>) -> bool {
    if expansion.is_empty() {
        return true;
    }
    let Some(body) = expansion.strip_prefix(op.prefix()) else {
        return false;
    };
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .ok()
            .map(|v| v.into_owned())
    };
    match op {
        Op::Query | Op::QueryContinuation | Op::PathParam => {
            for pair in body.split(op.separator()) {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                if !specs.iter().any(|v| v.name == key) {
                    return false;
                }
                let Some(value) = decode(value) else {
                    return false;
                };
                match vars.get_mut(key) {
                    Some(existing) => {
                        existing.push(',');
                        existing.push_str(&value);
                    }
                    None => {
                        vars.insert(key.to_owned(), value);
                    }
                }
            }
            true
        }
        _ => {
            let separator = op.separator();
            let exploded = specs.last().is_some_and(|v| v.explode);
            let mut pieces: Vec<&str> = body.split(separator).collect();
            if pieces.len() > specs.len() {
                // More pieces than variables: the last variable is an exploded list, or
                // the only variable's value holds commas, or dots in a label (`.` is
                // unreserved, never encoded: `{.ext}` of `tar.gz` is `.tar.gz`).
                if !exploded && (specs.len() != 1 || !matches!(separator, ',' | '.')) {
                    return false;
                }
                let tail = pieces
                    .split_off(specs.len() - 1)
                    .join(&separator.to_string());
                let values = pieces.into_iter().map(str::to_owned).chain([tail]);
                return assign(specs, values, vars, decode);
            }
            assign(specs, pieces.into_iter().map(str::to_owned), vars, decode)
        }
    }
}

fn assign(
    specs: &[Var],
    values: impl Iterator<Item = String>,
    vars: &mut IndexMap<String, String>,
    decode: impl Fn(&str) -> Option<String>,
) -> bool {
    for (spec, raw) in specs.iter().zip(values) {
        if !spec.explode && raw.is_empty() {
            continue;
        }
        let Some(value) = decode(&raw) else {
            return false;
        };
        vars.insert(spec.name.clone(), value);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template)
            .unwrap()
            .matches(uri)
            .map(|v| v.into_iter().collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn simple_variables() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/42/data"),
            pairs(&[("id", "42")])
        );
        assert_eq!(vars("users/{id}", "users/a%20b"), pairs(&[("id", "a b")]));
        assert_eq!(
            vars("users/{id}", "users/a/b"),
            None,
            "no slash in a simple value"
        );
        assert_eq!(vars("users/{id}", "posts/1"), None);
        assert_eq!(
            vars("{a}-{b}", "x-y-z"),
            pairs(&[("a", "x-y"), ("b", "z")]),
            "greedy, then backtracks"
        );
    }

    #[test]
    fn reserved_path_and_fragment() {
        assert_eq!(
            vars("file:///{+path}", "file:///a/b/c.txt"),
            pairs(&[("path", "a/b/c.txt")])
        );
        assert_eq!(
            vars("repo{/segments*}", "repo/a/b"),
            pairs(&[("segments", "a/b")])
        );
        assert_eq!(
            vars("doc{#section}", "doc#intro"),
            pairs(&[("section", "intro")])
        );
        assert_eq!(vars("x{.ext}", "x.json"), pairs(&[("ext", "json")]));
        assert_eq!(vars("x{.ext}", "x.tar.gz"), pairs(&[("ext", "tar.gz")]));
        assert_eq!(vars("x{.a,b}", "x.1.2.3"), None, "two labels, three pieces");
    }

    #[test]
    fn query_parameters_in_any_order_and_optional() {
        assert_eq!(
            vars("search{?q,lang}", "search?lang=en&q=rust"),
            pairs(&[("lang", "en"), ("q", "rust")])
        );
        assert_eq!(vars("search{?q,lang}", "search"), Some(vec![]));
        assert_eq!(vars("search{?q}", "search?x=1"), None, "unknown key");
    }

    #[test]
    fn bad_templates_and_hostile_uris() {
        assert!(UriTemplate::parse("a{b").is_err());
        assert!(UriTemplate::parse("a}b").is_err());
        assert!(UriTemplate::parse("a{}").is_err());
        let t = UriTemplate::parse("{a}{b}{c}{d}{e}{f}{g}!").unwrap();
        assert_eq!(t.matches(&"x".repeat(5000)), None, "bounded work");
    }
}
