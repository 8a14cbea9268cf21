//! The list methods — `tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list` — in one implementation over the listed entry ([`Listed`]): one page of
//! the registry from the cursor ([`super::pagination`]), without the items the caller may
//! not see ([`super::visibility`]), with the list cache hints, shaped for the revision.
//!
//! A kind of entry becomes listable by implementing [`Listed`] next to its registration
//! (`tools.rs`, `resources.rs`, `prompts.rs`).

use ferry_protocol::conform::Conform;
use ferry_protocol::types::Cursor;

use super::builder::CacheHint;
use super::context::Context;
use super::core::Server;
use super::pagination::page;
use super::registry::Registry;
use super::reply::{Call, HasResultMeta};
use super::visibility::{Rules, Visibility, visible};
use crate::engine::HandlerResult;

/// A registered entry a list method lists.
pub(crate) trait Listed: Clone + 'static {
    /// The list's name, in its cursors and their errors (`"tools"`).
    const LIST: &'static str;
    /// One item of the result: the entry as clients see it.
    type Item;
    /// The list result.
    type Result: serde::Serialize + Conform + HasResultMeta;

    /// The server's registry of these entries.
    fn registry(server: &Server) -> &Registry<Self>;
    /// The visibility rules of these entries.
    fn rules(visibility: &Visibility) -> &Rules;
    /// The entry as the list shows it.
    fn item(&self) -> Self::Item;
    /// The result of one page: its items, the cursor of the next, the cache hints.
    fn result(
        items: Vec<Self::Item>,
        next_cursor: Option<Cursor>,
        cache: CacheHint,
    ) -> Self::Result;
}

/// One page of the list of `E`, with the items the caller of `cx` may not see left out
/// (no context: the server has no visibility rule, nothing is filtered).
pub(crate) fn list<E: Listed>(
    server: &Server,
    call: &Call,
    cursor: Option<&str>,
    cx: Option<&Context>,
) -> HandlerResult {
    let snapshot = E::registry(server).snapshot();
    let page_size = server.page_size();
    let rules = E::rules(server.visibility());
    let (items, next) = match cx.filter(|_| !rules.is_empty()) {
        None => {
            let page = page(
                snapshot.entries.len(),
                cursor,
                page_size,
                E::LIST,
                snapshot.generation,
            )?;
            let items = snapshot.entries.get_range(page.range).into_iter().flatten();
            (items.map(|(_, e)| e.item()).collect(), page.next)
        }
        Some(cx) => {
            let seen: Vec<&E> = snapshot
                .entries
                .iter()
                .filter(|(key, _)| visible(rules, key, cx))
                .map(|(_, e)| e)
                .collect();
            let page = page(seen.len(), cursor, page_size, E::LIST, snapshot.generation)?;
            (
                seen[page.range].iter().map(|e| e.item()).collect(),
                page.next,
            )
        }
    };
    server.reply(E::result(items, next, server.list_cache()), call.version)
}
