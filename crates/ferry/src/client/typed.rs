//! Typed tool results: `structuredContent` checked against the tool's `outputSchema` and
//! read into a Rust type.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ferry_protocol::conform::{WRAPPED_MARKER, WRAPPED_RESULT};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Client, ClientError};

/// The output schemas of the tools as last listed: a validator per tool that declares one,
/// `None` for a tool that declares none.
pub(crate) type OutputSchemas = Mutex<HashMap<String, Option<Arc<OutputSchema>>>>;

/// A tool's output schema, ready to check results with.
pub(crate) struct OutputSchema {
    validator: jsonschema::Validator,
    /// The schema wraps a non-object output as `{"result": value}` (revisions before
    /// 2026-07-28: see `ferry_protocol::conform::WRAPPED_MARKER`).
    wrapped: bool,
}

impl Client {
    /// `tools/call`, its `structuredContent` validated against the tool's `outputSchema`
    /// and deserialized into `T`.
    ///
    /// The schemas come from `tools/list`, listed on the first call of a tool not yet seen
    /// and again when a result does not validate (the server may have changed the tool).
    /// An `isError` result is [`ClientError::ToolFailed`]; a result without structured
    /// content, one the schema refuses, or one that is not a `T` is
    /// [`ClientError::InvalidResult`]. A non-object output that a server of a revision
    /// before 2026-07-28 sent wrapped as `{"result": value}` (its schema marked
    /// `x-fastmcp-wrap-result`, as Ferry's and FastMCP's servers do) is unwrapped: `T` is
    /// the tool's output type in every revision.
    ///
    /// ```no_run
    /// # async fn run(client: ferry::client::Client) -> Result<(), ferry::client::ClientError> {
    /// #[derive(serde::Deserialize)]
    /// struct Sum {
    ///     value: f64,
    /// }
    ///
    /// let sum: Sum = client.call_tool_as("add", serde_json::json!({"a": 1, "b": 2})).await?;
    /// assert_eq!(sum.value, 3.0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_as<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<T, ClientError> {
        let result = self.call_tool(name, arguments).await?;
        if result.is_error() {
            return Err(ClientError::ToolFailed(result.text()));
        }
        let Some(structured) = result.structured_content else {
            return Err(ClientError::InvalidResult(format!(
                "tool {name:?} returned no structuredContent"
            )));
        };
        let schema = match self.output_validator(name, false).await? {
            Some(schema) if !schema.validator.is_valid(&structured) => {
                // The schema may be stale: list again before refusing.
                self.output_validator(name, true).await?
            }
            schema => schema,
        };
        let mut structured = structured;
        if let Some(schema) = schema {
            if let Err(error) = schema.validator.validate(&structured) {
                return Err(ClientError::InvalidResult(format!(
                    "tool {name:?}'s structuredContent does not match its outputSchema: \
                     {error} (at {})",
                    error.instance_path()
                )));
            }
            if schema.wrapped
                && let Value::Object(object) = &mut structured
                && let Some(inner) = object.remove(WRAPPED_RESULT)
            {
                structured = inner;
            }
        }
        serde_json::from_value(structured).map_err(|e| {
            ClientError::InvalidResult(format!(
                "tool {name:?}'s structuredContent is not a {}: {e}",
                std::any::type_name::<T>()
            ))
        })
    }

    /// The validator of `name`'s output schema: from the cache unless `refresh` or unseen,
    /// else from a new `tools/list`. A tool the list does not have has none.
    async fn output_validator(
        &self,
        name: &str,
        refresh: bool,
    ) -> Result<Option<Arc<OutputSchema>>, ClientError> {
        if !refresh && let Some(known) = self.lock_schemas().get(name) {
            return Ok(known.clone());
        }
        let tools = self.list_all_tools().await?;
        let mut schemas = HashMap::with_capacity(tools.len());
        for tool in tools {
            let validator = match tool.output_schema {
                Some(schema) => Some(Arc::new(OutputSchema {
                    wrapped: schema.get(WRAPPED_MARKER) == Some(&Value::Bool(true)),
                    validator: jsonschema::validator_for(&Value::Object(schema)).map_err(|e| {
                        ClientError::InvalidResult(format!(
                            "tool {:?}'s outputSchema is not a valid JSON Schema: {e}",
                            tool.name
                        ))
                    })?,
                })),
                None => None,
            };
            schemas.insert(tool.name, validator);
        }
        let found = schemas.get(name).cloned().flatten();
        *self.lock_schemas() = schemas;
        Ok(found)
    }

    fn lock_schemas(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Option<Arc<OutputSchema>>>> {
        self.inner
            .output_schemas
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}
