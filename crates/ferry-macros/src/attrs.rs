//! The options of `#[tool(..)]`, `#[prompt(..)]`, `#[resource(..)]` and `#[tools(..)]`:
//! `key = value` pairs and flags, each mistake reported on the token that makes it.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, LitBool, LitInt, LitStr, Path, Token};

/// What a macro registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// The attribute's name, as users write it.
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    /// The keys the attribute takes, in the order the docs list them.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "title",
                "description",
                "read_only",
                "destructive",
                "idempotent",
                "open_world",
                "task_support",
                "icon",
                "icons",
                "visible",
                "crate",
            ],
            Kind::Prompt => &[
                "name",
                "title",
                "description",
                "icon",
                "icons",
                "visible",
                "crate",
            ],
            Kind::Resource => &[
                "uri",
                "name",
                "title",
                "description",
                "mime_type",
                "size",
                "icon",
                "icons",
                "visible",
                "crate",
            ],
        }
    }

    /// The kind an attribute path names (`tool`, `ferry::tool`...), if any.
    pub(crate) fn of_attr(path: &Path) -> Option<Kind> {
        let last = path.segments.last()?;
        match last.ident.to_string().as_str() {
            "tool" => Some(Kind::Tool),
            "prompt" => Some(Kind::Prompt),
            "resource" => Some(Kind::Resource),
            _ => None,
        }
    }
}

/// An icon (`icon = "src"` or `icon(src = .., mime_type = .., sizes = [..], theme = ..)`).
pub(crate) struct Icon {
    pub(crate) src: LitStr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
    /// `true` for `"dark"`, `false` for `"light"`.
    pub(crate) dark: Option<bool>,
}

/// `task_support = ".."`: whether the tool can run as a task (2025-11-25).
#[derive(Clone, Copy)]
pub(crate) enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

/// Everything an attribute said. Which fields a kind can set is checked while parsing.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) krate: Option<Path>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) read_only: Option<LitBool>,
    pub(crate) destructive: Option<LitBool>,
    pub(crate) idempotent: Option<LitBool>,
    pub(crate) open_world: Option<LitBool>,
    pub(crate) task_support: Option<TaskSupport>,
    pub(crate) uri: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<LitInt>,
    /// `visible = predicate`: who sees the item (the builder's `*_visible_if`).
    pub(crate) visible: Option<Expr>,
}

impl Options {
    /// The path of the `ferry` crate in the expansion: `crate = ..`, or `::ferry`.
    pub(crate) fn krate(&self) -> TokenStream {
        match &self.krate {
            Some(path) => path.to_token_stream(),
            None => quote!(::ferry),
        }
    }

    /// Whether any behaviour hint was given (the tool then has `annotations`).
    pub(crate) fn has_hints(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }
}

/// Parse the arguments of a `kind` attribute (the tokens inside its parentheses). A
/// `#[resource]` may start with its URI as a bare string literal.
pub(crate) fn parse(kind: Kind, tokens: TokenStream) -> syn::Result<Options> {
    let mut options = Options::default();
    let mut seen = Vec::new();
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        if kind == Kind::Resource && input.peek(LitStr) {
            options.uri = Some(input.parse()?);
            seen.push("uri".to_owned());
            if input.is_empty() {
                return Ok(());
            }
            input.parse::<Token![,]>()?;
        }
        let rest: TokenStream = input.parse()?;
        syn::meta::parser(|meta| option(kind, &mut options, &mut seen, &meta)).parse2(rest)
    };
    parser.parse2(tokens)?;
    Ok(options)
}

/// Parse the arguments of `#[tools(..)]`: only `crate = path`.
pub(crate) fn parse_impl(tokens: TokenStream) -> syn::Result<Option<Path>> {
    let mut krate = None;
    syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            if krate.is_some() {
                return Err(meta.error("`crate` is given twice"));
            }
            krate = Some(crate_path(&meta)?);
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown key `{}` in #[tools]: it takes only `crate = path`",
                key_text(&meta.path)
            )))
        }
    })
    .parse2(tokens)?;
    Ok(krate)
}

/// The text of a key as written (`crate` is a keyword, so not an identifier to syn).
fn key_text(path: &Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

fn option(
    kind: Kind,
    options: &mut Options,
    seen: &mut Vec<String>,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<()> {
    let key = key_text(&meta.path);
    if !kind.keys().contains(&key.as_str()) {
        return Err(meta.error(unknown_key(kind, &key)));
    }
    if key != "icon" && seen.contains(&key) {
        return Err(meta.error(format!("`{key}` is given twice")));
    }
    seen.push(key.clone());
    match key.as_str() {
        "name" => options.name = Some(string(meta)?),
        "title" => options.title = Some(string(meta)?),
        "description" => options.description = Some(string(meta)?),
        "uri" => options.uri = Some(string(meta)?),
        "mime_type" => options.mime_type = Some(string(meta)?),
        "read_only" => options.read_only = Some(flag(meta)?),
        "destructive" => options.destructive = Some(flag(meta)?),
        "idempotent" => options.idempotent = Some(flag(meta)?),
        "open_world" => options.open_world = Some(flag(meta)?),
        "size" => {
            let size: LitInt = meta.value()?.parse()?;
            size.base10_parse::<u64>()?;
            options.size = Some(size);
        }
        "task_support" => {
            let value = string(meta)?;
            options.task_support = Some(match value.value().as_str() {
                "forbidden" => TaskSupport::Forbidden,
                "optional" => TaskSupport::Optional,
                "required" => TaskSupport::Required,
                _ => {
                    return Err(syn::Error::new(
                        value.span(),
                        "`task_support` is \"forbidden\", \"optional\" or \"required\"",
                    ));
                }
            });
        }
        "icon" => options.icons.push(icon(meta)?),
        "icons" => {
            let value = meta.value()?;
            let content;
            syn::bracketed!(content in value);
            let sources = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
            options.icons.extend(sources.into_iter().map(|src| Icon {
                src,
                mime_type: None,
                sizes: Vec::new(),
                dark: None,
            }));
        }
        "crate" => options.krate = Some(crate_path(meta)?),
        "visible" => options.visible = Some(meta.value()?.parse()?),
        _ => return Err(meta.error(unknown_key(kind, &key))),
    }
    Ok(())
}

/// `key = "text"`.
fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse()
}

/// `key` alone (true) or `key = true|false`.
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<LitBool> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse()
    } else {
        Ok(LitBool::new(true, meta.path.segments[0].ident.span()))
    }
}

/// `crate = path` or `crate = "path"` (as serde spells it).
fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        value.parse::<LitStr>()?.parse()
    } else {
        value.call(Path::parse_mod_style)
    }
}

/// `icon = "src"` or `icon(src = "..", mime_type = "..", sizes = [".."], theme = "..")`.
fn icon(meta: &ParseNestedMeta<'_>) -> syn::Result<Icon> {
    if meta.input.peek(Token![=]) {
        return Ok(Icon {
            src: string(meta)?,
            mime_type: None,
            sizes: Vec::new(),
            dark: None,
        });
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error("`icon` takes `= \"src\"` or `(src = \"..\", ...)`"));
    }
    let mut src = None;
    let mut mime_type = None;
    let mut sizes = Vec::new();
    let mut dark = None;
    meta.parse_nested_meta(|inner| {
        let key = key_text(&inner.path);
        match key.as_str() {
            "src" => src = Some(string(&inner)?),
            "mime_type" => mime_type = Some(string(&inner)?),
            "sizes" => {
                let value = inner.value()?;
                let content;
                syn::bracketed!(content in value);
                sizes.extend(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?);
            }
            "theme" => {
                let theme = string(&inner)?;
                dark = Some(match theme.value().as_str() {
                    "dark" => true,
                    "light" => false,
                    _ => {
                        return Err(syn::Error::new(
                            theme.span(),
                            "an icon's `theme` is \"light\" or \"dark\"",
                        ));
                    }
                });
            }
            _ => {
                return Err(inner.error(format!(
                    "unknown key `{key}` of an icon: expected `src`, `mime_type`, `sizes` or `theme`"
                )));
            }
        }
        Ok(())
    })?;
    let src = src.ok_or_else(|| meta.error("an icon needs `src = \"https://..\"`"))?;
    Ok(Icon {
        src,
        mime_type,
        sizes,
        dark,
    })
}

/// The message for a key `kind` does not take: the nearest key when it looks like a typo
/// (`readonly` for `read_only`), the keys of the attribute otherwise.
fn unknown_key(kind: Kind, key: &str) -> String {
    let keys = kind.keys();
    let nearest = keys
        .iter()
        .map(|k| (distance(&normalize(k), &normalize(key)), *k))
        .min()
        .filter(|(d, _)| *d <= 2);
    match nearest {
        Some((_, k)) => format!(
            "unknown key `{key}` in #[{}]: did you mean `{k}`?",
            kind.attr()
        ),
        None => format!(
            "unknown key `{key}` in #[{}]; it takes: {}",
            kind.attr(),
            keys.join(", ")
        ),
    }
}

/// A key without case or underscores, for comparison (`readOnly`, `readonly`, `read_only`).
fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance of two short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(kind: Kind, tokens: &str) -> String {
        match parse(kind, tokens.parse().unwrap()) {
            Ok(_) => panic!("{tokens} parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_key_of_a_tool_parses() {
        let options = parse(
            Kind::Tool,
            quote!(
                name = "n",
                title = "t",
                description = "d",
                read_only,
                destructive = false,
                idempotent = true,
                open_world,
                task_support = "required",
                icon = "a",
                icon(
                    src = "b",
                    mime_type = "image/png",
                    sizes = ["1x1", "any"],
                    theme = "light"
                ),
                icons = ["c", "d"],
                crate = my::ferry
            ),
        )
        .unwrap();
        assert_eq!(options.name.unwrap().value(), "n");
        assert!(!options.destructive.unwrap().value);
        assert!(options.open_world.unwrap().value);
        assert!(matches!(options.task_support, Some(TaskSupport::Required)));
        let sources: Vec<String> = options.icons.iter().map(|i| i.src.value()).collect();
        assert_eq!(sources, ["a", "b", "c", "d"]);
        assert_eq!(options.icons[1].sizes.len(), 2);
        assert_eq!(options.icons[1].dark, Some(false));
        assert_eq!(
            options.krate.unwrap().to_token_stream().to_string(),
            "my :: ferry"
        );
    }

    #[test]
    fn a_resource_takes_its_uri_first() {
        let options = parse(Kind::Resource, quote!("notes://{id}", size = 3)).unwrap();
        assert_eq!(options.uri.unwrap().value(), "notes://{id}");
        assert_eq!(
            error(Kind::Resource, r#""a://", uri = "b://""#),
            "`uri` is given twice"
        );
    }

    #[test]
    fn unknown_keys_suggest_the_nearest() {
        assert_eq!(
            error(Kind::Tool, "readOnly"),
            "unknown key `readOnly` in #[tool]: did you mean `read_only`?"
        );
        assert!(
            error(Kind::Prompt, "read_only")
                .starts_with("unknown key `read_only` in #[prompt]; it takes: name,")
        );
        assert!(error(Kind::Tool, "icon(href = \"x\")").contains("unknown key `href` of an icon"));
        assert!(error(Kind::Tool, "icon(theme = \"dark\")").contains("needs `src"));
    }
}
