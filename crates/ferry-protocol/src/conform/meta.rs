//! `_meta` of requests, results and notifications; implementation info; annotations.

use super::*;

impl Conform for RequestMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(
            v.has(Feature::RequestMeta),
            self.protocol_version,
            self.client_capabilities,
            self.client_info,
            self.log_level
        );
        keep_if!(v.has(Feature::Tasks), self.related_task);
        self.client_capabilities.conform(v)?;
        self.client_info.conform(v)
    }
}

impl Conform for ResultMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(
            v.has(Feature::RequestMeta),
            self.server_info,
            self.subscription_id
        );
        keep_if!(v.has(Feature::Tasks), self.related_task);
        self.server_info.conform(v)
    }
}

impl Conform for NotificationMeta {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::RequestMeta), self.subscription_id);
        keep_if!(v.has(Feature::Tasks), self.related_task);
        Ok(())
    }
}

impl Conform for Implementation {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::Titles), self.title);
        keep_if!(
            v.has(Feature::Icons),
            self.description,
            self.icons,
            self.website_url
        );
        Ok(())
    }
}

impl Conform for Annotations {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v >= V2025_06_18, self.last_modified);
        Ok(())
    }
}
