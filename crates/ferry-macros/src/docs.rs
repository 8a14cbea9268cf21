//! Doc comments as descriptions: what rustdoc would show, as the text a client reads.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta};

/// Whether `attr` is a doc comment (`///`, `/** */` or `#[doc = ...]`).
pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

/// The description written by the doc comments among `attrs`, as an expression of type
/// `&'static str`; `None` when there is none.
///
/// Literal comments (the usual case) are joined line by line, their common indentation
/// removed and blank lines at either end dropped, as rustdoc shows them. A computed doc
/// (`#[doc = include_str!(..)]`) cannot be read here: all the parts are then joined with
/// `concat!` one per line, as they are.
pub(crate) fn description(attrs: &[Attribute]) -> Option<TokenStream> {
    let docs: Vec<&Expr> = attrs
        .iter()
        .filter(|a| is_doc(a))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect();
    if docs.is_empty() {
        return None;
    }
    let literals: Option<Vec<String>> = docs
        .iter()
        .map(|e| match e {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.value()),
            _ => None,
        })
        .collect();
    match literals {
        Some(lines) => {
            let text = unindent(&lines);
            if text.is_empty() {
                return None;
            }
            let lit = LitStr::new(&text, proc_macro2::Span::call_site());
            Some(quote!(#lit))
        }
        None => {
            let mut parts = TokenStream::new();
            for (i, doc) in docs.iter().enumerate() {
                if i > 0 {
                    parts.extend(quote!("\n",));
                }
                parts.extend(quote!(#doc,));
            }
            Some(quote!(::core::concat!(#parts)))
        }
    }
}

/// The lines of doc comments as one text: common leading whitespace removed, blank lines
/// at the start and end dropped, trailing whitespace of each line trimmed.
fn unindent(parts: &[String]) -> String {
    let lines: Vec<&str> = parts.iter().flat_map(|p| p.split('\n')).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    lines[start..end].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(source: &str) -> Vec<Attribute> {
        let item: syn::ItemFn = syn::parse_str(&format!("{source}\nfn f() {{}}")).unwrap();
        item.attrs
    }

    #[test]
    fn literal_comments_are_unindented_and_trimmed() {
        let docs = attrs("///\n/// Add two numbers.\n///\n///     a + b\n///   \n#[inline]");
        let text = description(&docs).unwrap().to_string();
        assert_eq!(text, r#""Add two numbers.\n\n    a + b""#);
    }

    #[test]
    fn block_comments_count_their_lines() {
        let docs = attrs("/**\n   First.\n     Second.\n */");
        let text = description(&docs).unwrap().to_string();
        assert_eq!(text, r#""First.\n  Second.""#);
    }

    #[test]
    fn no_or_empty_docs_give_no_description() {
        assert!(description(&attrs("#[inline]")).is_none());
        assert!(description(&attrs("///\n///  ")).is_none());
    }

    #[test]
    fn computed_docs_are_concatenated_line_by_line() {
        let docs = attrs("/// One.\n#[doc = include_str!(\"x.md\")]");
        let text = description(&docs).unwrap().to_string();
        assert_eq!(
            text,
            r#":: core :: concat ! (" One." , "\n" , include_str ! ("x.md") ,)"#
        );
    }
}
