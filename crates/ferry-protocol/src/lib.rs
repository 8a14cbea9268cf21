//! Wire types for every revision of the Model Context Protocol, and the JSON-RPC 2.0 core.
//!
//! No I/O, no async runtime: this crate is what goes over the wire and nothing else.

pub mod conform;
pub mod error_codes;
pub mod jsonrpc;
pub mod methods;
pub mod types;
pub mod version;

pub use jsonrpc::{ErrorObject, Message, RequestId};
pub use version::{Era, Feature, ProtocolVersion, VersionSet};
