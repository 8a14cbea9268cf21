//! The 2026-07-28 additions (input requests and responses, subscriptions/listen) and the
//! notifications' params.

use super::*;

impl Conform for InputRequest {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            InputRequest::CreateMessage(p) => p.conform(v),
            InputRequest::ListRoots(p) => p.conform(v),
            InputRequest::Elicit(p) => p.conform(v),
        }
    }
}

impl Conform for InputResponse {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        match self {
            InputResponse::CreateMessage(r) => r.conform(v),
            InputResponse::ListRoots(r) => r.conform(v),
            InputResponse::Elicit(r) => r.conform(v),
        }
    }
}

impl<T: Conform> Conform for indexmap::IndexMap<String, T> {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        self.values_mut().try_for_each(|item| item.conform(v))
    }
}

impl Conform for InputRequiredResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::InputRequired) {
            return reject("input_required results", v);
        }
        self.result_type = Some(ResultType::InputRequired);
        self.input_requests.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for InputResponseRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::InputRequired) {
            return reject("input responses", v);
        }
        self.input_responses.conform(v)?;
        self.meta.conform(v)
    }
}

impl Conform for SubscriptionsListenRequestParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SubscriptionsListen) {
            return reject("subscriptions/listen", v);
        }
        self.meta.conform(v)
    }
}

impl Conform for SubscriptionsListenResult {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SubscriptionsListen) {
            return reject("subscriptions/listen", v);
        }
        result_type(&mut self.result_type, v);
        self.meta.conform(v)
    }
}

impl Conform for SubscriptionsAcknowledgedNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::SubscriptionsListen) {
            return reject("subscriptions/listen", v);
        }
        self.meta.conform(v)
    }
}

impl Conform for CancelledNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if self.request_id.is_none() && !v.has(Feature::Tasks) {
            return reject("a cancellation without a requestId", v);
        }
        self.meta.conform(v)
    }
}

impl Conform for ProgressNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        keep_if!(v.has(Feature::ProgressMessage), self.message);
        self.meta.conform(v)
    }
}

macro_rules! conform_tasks_only {
    ($($ty:ty),*) => {$(
        impl Conform for $ty {
            fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
                if !v.has(Feature::Tasks) {
                    return reject("tasks", v);
                }
                self.meta.conform(v)
            }
        }
    )*};
}
conform_tasks_only!(
    TaskIdParams,
    CreateTaskResult,
    TaskResult,
    ListTasksResult,
    TaskStatusNotificationParams
);

impl Conform for ElicitationCompleteNotificationParams {
    fn conform(&mut self, v: ProtocolVersion) -> Result<(), NotInRevision> {
        if !v.has(Feature::UrlElicitationRequiredError) {
            return reject("notifications/elicitation/complete", v);
        }
        self.meta.conform(v)
    }
}
