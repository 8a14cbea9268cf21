//! Pagination of list requests.

use serde::{Deserialize, Serialize};

use super::common::Cursor;
use super::meta::RequestMeta;

/// `params` of a list request (`tools/list`, `resources/list`, `prompts/list`,
/// `resources/templates/list`, `tasks/list`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Where to continue; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}
