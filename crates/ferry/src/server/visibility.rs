//! Per-caller visibility: tools, prompts, resources and templates shown to some callers
//! only. A hidden item is absent from its list and answers as unknown when asked for by
//! name, as if it did not exist; the predicate sees the request's [`Context`] (its OAuth
//! claims over HTTP, its `_meta`, the session).

use std::collections::HashMap;
use std::sync::Arc;

use super::context::Context;

/// Whether a caller may see an item.
pub(crate) type Predicate = Arc<dyn Fn(&Context) -> bool + Send + Sync>;

/// The rules of one kind of item, by its key.
pub(crate) type Rules = HashMap<String, Predicate>;

/// The visibility rules, per kind of item, by name (tools, prompts), URI (resources) or
/// URI template (templates). Items without a rule are visible to everyone.
#[derive(Clone, Default)]
pub(crate) struct Visibility {
    pub(crate) tools: Rules,
    pub(crate) prompts: Rules,
    pub(crate) resources: Rules,
    pub(crate) templates: Rules,
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
pub(crate) fn visible(rules: &Rules, key: &str, cx: &Context) -> bool {
    rules.get(key).is_none_or(|visible| visible(cx))
}
