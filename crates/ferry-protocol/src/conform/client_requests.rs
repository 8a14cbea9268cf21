//! What servers ask of clients: roots, sampling, elicitation.

use super::*;

impl Conform for ListRootsResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(input_meta_kept(v), self.meta);
        self.roots.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for Root {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v >= V2025_06_18, self.meta);
        Ok(())
    }
}

impl Conform for SamplingMessage {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::SamplingTools), self.meta);
        self.content.conform(v)
    }
}

impl Conform for CreateMessageRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SamplingTools) && (self.tools.is_some() || self.tool_choice.is_some()) {
            return reject("sampling with tools", v);
        }
        tasks_only(&mut self.task, v);
        keep_if!(input_meta_kept(v), self.meta);
        self.tools.conform(v)?;
        self.messages.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for CreateMessageResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.content.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for PrimitiveSchemaDefinition {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.has(Feature::UrlElicitation) {
            return Ok(());
        }
        // 2025-06-18: no defaults except on booleans, no multi-select, titled choices only
        // as `enum` + `enumNames`.
        match self {
            PrimitiveSchemaDefinition::String(s) => s.default = None,
            PrimitiveSchemaDefinition::Number(n) => n.default = None,
            PrimitiveSchemaDefinition::Boolean(_) => {}
            PrimitiveSchemaDefinition::UntitledSingleSelect(s) => s.default = None,
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => s.default = None,
            PrimitiveSchemaDefinition::TitledSingleSelect(s) => {
                let (values, names) = s
                    .one_of
                    .iter()
                    .map(|o| (o.value.clone(), o.title.clone()))
                    .unzip();
                *self = PrimitiveSchemaDefinition::LegacyTitledEnum(LegacyTitledEnumSchema {
                    kind: StringType,
                    title: s.title.take(),
                    description: s.description.take(),
                    values,
                    enum_names: Some(names),
                    default: None,
                });
            }
            PrimitiveSchemaDefinition::UntitledMultiSelect(_)
            | PrimitiveSchemaDefinition::TitledMultiSelect(_) => {
                return reject("multi-select elicitation fields", v);
            }
        }
        Ok(())
    }
}

impl Conform for ElicitRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            ElicitRequestParams::Form(form) => form.conform(v),
            ElicitRequestParams::Url(url) => url.conform(v),
        }
    }
}

impl Conform for ElicitRequestFormParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::Elicitation) {
            return reject("elicitation", v);
        }
        if v.has(Feature::UrlElicitation) {
            self.mode.get_or_insert(FormMode);
        } else {
            self.mode = None;
            self.requested_schema.schema = None;
        }
        tasks_only(&mut self.task, v);
        keep_if!(input_meta_kept(v), self.meta);
        for field in self.requested_schema.properties.values_mut() {
            field.conform(v)?;
        }
        self.meta.conform(v)
    }
}

impl Conform for ElicitRequestUrlParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::UrlElicitation) {
            return reject("URL-mode elicitation", v);
        }
        if v.has(Feature::UrlElicitationRequiredError) {
            if self.elicitation_id.is_none() {
                return reject("URL elicitation without an elicitationId", v);
            }
        } else {
            self.elicitation_id = None;
        }
        tasks_only(&mut self.task, v);
        keep_if!(input_meta_kept(v), self.meta);
        self.meta.conform(v)
    }
}

impl Conform for UrlElicitationRequiredData {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::UrlElicitationRequiredError) {
            return reject("the URL-elicitation-required error", v);
        }
        self.elicitations.conform(v)
    }
}

impl Conform for ElicitResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::Elicitation) {
            return reject("elicitation", v);
        }
        if !v.has(Feature::UrlElicitation)
            && let Some(content) = &self.content
            && content.values().any(serde_json::Value::is_array)
        {
            return reject("multi-select elicitation answers", v);
        }
        keep_if!(input_meta_kept(v), self.meta);
        self.meta.conform(v)
    }
}
