//! Typed MCP messages: one superset model for every revision.
//!
//! Each type has every field any revision defines; fields a revision lacks are `Option`s
//! documented with the revision that introduced them. Parsing is lenient (unknown members
//! are ignored, so any revision's messages parse). Sending goes through
//! [`crate::conform::Conform`], which shapes a value for one revision.

mod build;
mod capabilities;
mod common;
mod completion;
mod content;
mod elicitation;
mod errors;
mod lifecycle;
mod logging;
mod marker;
mod meta;
mod mrtr;
mod notifications;
mod pagination;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod subscriptions;
mod tasks;
mod tools;

pub use capabilities::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use errors::*;
pub use lifecycle::*;
pub use logging::*;
pub use marker::*;
pub use meta::{JsonObject, Meta, NotificationMeta, RequestMeta, ResultMeta, keys};
pub use mrtr::*;
pub use notifications::*;
pub use pagination::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;
