//! Capabilities, initialize, discovery, and the params that carry only `_meta`.

use super::*;

impl Conform for ClientCapabilities {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::Elicitation), self.elicitation);
        keep_if!(v.has(Feature::Tasks), self.tasks);
        keep_if!(v.has(Feature::Extensions), self.extensions);
        if let Some(roots) = &mut self.roots {
            keep_if!(v.has(Feature::RootsListChanged), roots.list_changed);
        }
        if let Some(sampling) = &mut self.sampling {
            keep_if!(
                v.has(Feature::SamplingTools),
                sampling.context,
                sampling.tools
            );
        }
        if let Some(elicitation) = &mut self.elicitation {
            keep_if!(
                v.has(Feature::UrlElicitation),
                elicitation.form,
                elicitation.url
            );
        }
        Ok(())
    }
}

impl Conform for ServerCapabilities {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::CompletionsCapability), self.completions);
        keep_if!(v.has(Feature::Tasks), self.tasks);
        keep_if!(v.has(Feature::Extensions), self.extensions);
        // `resources.subscribe` stays in 2026-07-28: it then advertises update notifications
        // through `subscriptions/listen` (`resourceSubscriptions`) instead of
        // `resources/subscribe`.
        Ok(())
    }
}

impl Conform for InitializeRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.era() != Era::Session {
            return reject("initialize", v);
        }
        self.capabilities.conform(v)?;
        self.client_info.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for InitializeResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if v.era() != Era::Session {
            return reject("initialize", v);
        }
        self.capabilities.conform(v)?;
        self.server_info.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for DiscoverResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::Discover) {
            return reject("server/discover", v);
        }
        result_type(&mut self.result_type, v);
        cache_hints(&mut self.ttl_ms, &mut self.cache_scope, v);
        self.capabilities.conform(v)?;
        self.meta.conform(v)
    }
}

macro_rules! conform_meta_only {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                self.meta.conform(v)
            }
        }
    )*};
}
conform_meta_only!(
    RequestParams,
    NotificationParams,
    PaginatedRequestParams,
    ResourceRequestParams,
    ResourceUpdatedNotificationParams,
    SetLevelRequestParams,
    LoggingMessageNotificationParams
);
