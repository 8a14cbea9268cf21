//! Pagination: list methods are followed through `nextCursor` to the end; an invalid
//! cursor is refused.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::model::{Outcome, requirement};
use super::probe::Probe;
use super::target::Reply;

requirement!(
    FOLLOW,
    "pagination.follow-cursor",
    Pagination,
    Must,
    "a nextCursor given back yields the next page, and the pages end",
    "server/utilities/pagination#pagination-flow"
);
requirement!(
    INVALID_CURSOR,
    "pagination.invalid-cursor",
    Pagination,
    Should,
    "an invalid cursor is refused with error -32602",
    "server/utilities/pagination#error-handling"
);

/// The most pages followed per list.
const MAX_PAGES: usize = 100;

/// A list method: its name, the array in its result, its result's schema definition.
#[derive(Clone, Copy)]
pub(crate) struct ListMethod {
    pub(crate) method: &'static str,
    pub(crate) field: &'static str,
    pub(crate) def: &'static str,
}

/// What a complete listing returned.
pub(crate) enum Listing {
    /// Every item of every page.
    Items(Vec<Value>),
    /// The first page failed: its reply.
    Refused(Reply),
}

/// List everything `list` returns, following cursors; page shapes go to `shape`.
pub(crate) async fn list_all(
    probe: &mut Probe<'_>,
    list: ListMethod,
    shape: &'static super::model::Requirement,
) -> Listing {
    let mut items = Vec::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<Value> = None;
    let mut paginated = false;
    for page in 0..MAX_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let reply = probe.call(list.method, params).await;
        let result = match reply {
            Reply::Result(result) => result,
            other if page == 0 => return Listing::Refused(other),
            other => {
                probe.record(
                    &FOLLOW,
                    Outcome::Fail(format!(
                        "{} with cursor {} (page {}) got {}",
                        list.method,
                        cursor.unwrap_or_default(),
                        page + 1,
                        other.describe()
                    )),
                );
                return Listing::Items(items);
            }
        };
        probe.check_shape(
            shape,
            list.def,
            &format!("{} page {}", list.method, page + 1),
            &result,
        );
        if let Some(array) = result.get(list.field).and_then(Value::as_array) {
            items.extend(array.iter().cloned());
        }
        match result.get("nextCursor") {
            Some(next) if !next.is_null() => {
                paginated = true;
                if !cursors.insert(next.to_string()) {
                    probe.record(
                        &FOLLOW,
                        Outcome::Fail(format!(
                            "{} gave nextCursor {next} a second time (the pages loop)",
                            list.method
                        )),
                    );
                    return Listing::Items(items);
                }
                cursor = Some(next.clone());
            }
            _ => {
                if paginated {
                    probe.record(&FOLLOW, Outcome::Pass);
                }
                return Listing::Items(items);
            }
        }
    }
    probe.record(
        &FOLLOW,
        Outcome::Fail(format!(
            "{} still gave a nextCursor after {MAX_PAGES} pages",
            list.method
        )),
    );
    Listing::Items(items)
}

/// An invalid cursor on `list`.
pub(crate) async fn invalid_cursor(probe: &mut Probe<'_>, list: ListMethod) {
    let reply = probe
        .call(
            list.method,
            json!({"cursor": "ferry-check: not a cursor this server gave"}),
        )
        .await;
    let ok = reply.code() == Some(-32602);
    probe.expect(&INVALID_CURSOR, ok, || {
        format!(
            "{} with an invalid cursor got {}",
            list.method,
            reply.describe()
        )
    });
}

/// Note that no list was paginated, if none was.
pub(crate) fn finish(probe: &mut Probe<'_>) {
    probe.record(
        &FOLLOW,
        Outcome::Skip("no list result had a nextCursor".into()),
    );
}
