//! Per-caller visibility: tools, prompts, resources and templates shown to some callers
//! only. A hidden item is absent from its list and answers as unknown when asked for by
//! name, as if it did not exist; the predicate sees the request's [`Context`] (its OAuth
//! claims over HTTP, its `_meta`, the session).

use std::collections::HashMap;
use std::sync::Arc;

use ferry_protocol::types::Cursor;

use super::builder::CacheHint;
use super::context::Context;
use super::core::Server;
use super::pagination::page;
use super::registry::Registry;
use super::reply::{Call, HasResultMeta};
use crate::engine::HandlerResult;

/// Whether a caller may see an item.
pub(crate) type Predicate = Arc<dyn Fn(&Context) -> bool + Send + Sync>;

/// The visibility rules, per kind of item, by name (tools, prompts), URI (resources) or
/// URI template (templates). Items without a rule are visible to everyone.
#[derive(Clone, Default)]
pub(crate) struct Visibility {
    pub(crate) tools: HashMap<String, Predicate>,
    pub(crate) prompts: HashMap<String, Predicate>,
    pub(crate) resources: HashMap<String, Predicate>,
    pub(crate) templates: HashMap<String, Predicate>,
}

impl Visibility {
    /// Whether any rule exists (lists then need the caller's context).
    pub(crate) fn any(&self) -> bool {
        !(self.tools.is_empty()
            && self.prompts.is_empty()
            && self.resources.is_empty()
            && self.templates.is_empty())
    }
}

/// Whether the item `key` of `rules` is visible to the caller of `cx`.
pub(crate) fn visible(rules: &HashMap<String, Predicate>, key: &str, cx: &Context) -> bool {
    rules.get(key).is_none_or(|visible| visible(cx))
}

/// One page of a list, with the items the caller may not see left out. `rules` and `cx`
/// filter (no context: no rule applies, nothing is filtered); `item` makes an entry's
/// description; `result` the list result from the page's items and next cursor.
pub(crate) fn list<E: Clone, T, R>(
    server: &Server,
    call: &Call,
    cursor: Option<&str>,
    (registry, name): (&Registry<E>, &str),
    filter: Option<(&HashMap<String, Predicate>, &Context)>,
    item: impl Fn(&E) -> T,
    result: impl FnOnce(Vec<T>, Option<Cursor>, CacheHint) -> R,
) -> HandlerResult
where
    R: serde::Serialize + ferry_protocol::conform::Conform + HasResultMeta,
{
    let snapshot = registry.snapshot();
    let page_size = server.page_size();
    let (items, next) = match filter.filter(|(rules, _)| !rules.is_empty()) {
        None => {
            let page = page(
                snapshot.entries.len(),
                cursor,
                page_size,
                name,
                snapshot.generation,
            )?;
            let items = snapshot.entries.get_range(page.range).into_iter().flatten();
            (items.map(|(_, e)| item(e)).collect(), page.next)
        }
        Some((rules, cx)) => {
            let seen: Vec<&E> = snapshot
                .entries
                .iter()
                .filter(|(key, _)| visible(rules, key, cx))
                .map(|(_, e)| e)
                .collect();
            let page = page(seen.len(), cursor, page_size, name, snapshot.generation)?;
            (
                seen[page.range].iter().map(|e| item(e)).collect(),
                page.next,
            )
        }
    };
    server.reply(result(items, next, server.list_cache()), call.version)
}
