//! Wire types for every revision of the Model Context Protocol, and the JSON-RPC 2.0 core.
//!
//! No I/O, no async runtime: this crate is what goes over the wire and nothing else. The
//! `ferry` crate builds the engine, server, client and transports on it.
//!
//! # Where things are
//!
//! - [`jsonrpc`]: ids, requests, notifications, responses, error objects, batches, and
//!   [`jsonrpc::classify`], which turns any line of untrusted input into a valid message or
//!   the exact error response it deserves. `params` stay raw ([`jsonrpc::RawJson`]) until
//!   the method is known, then are parsed once ([`jsonrpc::parse_params`]).
//! - [`read`]: every reader of raw JSON-RPC bytes that is not a whole serde parse: the
//!   classification, the head of an oversized message, a `tools/call`'s members, what a
//!   frame is; the fuzz targets compare each with serde through it.
//! - [`version`]: the revisions, their eras and features, and the negotiation rule.
//! - [`error_codes`]: named error codes with their revision history.
//! - [`types`]: every request params, result, notification, capability and content type.
//! - [`methods`]: every method's name, direction and revisions, its params and result types,
//!   and typed enums of each side's requests and notifications.
//! - [`conform`]: shaping a value for one revision.
//!
//! # One set of types for six revisions
//!
//! The types are a superset: every member any revision defines, the revision-specific ones
//! optional and documented with the revision that introduced them. Incoming messages of any
//! revision parse into them (unknown members are ignored). Outgoing values go through
//! [`conform::Conform`], which omits what the peer's revision lacks, fills what it requires
//! (`resultType`, `ttlMs`, `cacheScope` in 2026-07-28), converts where the revision has an
//! equivalent, and refuses what it cannot express. A tool is written once and served to
//! every revision. The tests validate conformed values of every type against every
//! revision's `schema.json`.
//!
//! Structs are not `#[non_exhaustive]` so they can be built with struct literals; build
//! them with `..Default::default()` to stay compatible when later revisions add members.
//! Enums that will grow are `#[non_exhaustive]`.
//!
//! ```
//! use ferry_protocol::conform::Conform;
//! use ferry_protocol::jsonrpc::{classify, Inbound, Message, ResultResponse, parse_params};
//! use ferry_protocol::types::{CallToolRequestParams, CallToolResult, ContentBlock};
//! use ferry_protocol::ProtocolVersion;
//!
//! let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}"#;
//! let Inbound::Single(Message::Request(request)) = classify(line) else { panic!("valid") };
//! let params: CallToolRequestParams = parse_params(request.params.as_deref()).unwrap();
//! assert_eq!(params.name, "echo");
//!
//! let mut result = CallToolResult::success(vec![ContentBlock::text("hi")]);
//! result.conform(ProtocolVersion::V2026_07_28).unwrap();
//! let wire = serde_json::to_string(&ResultResponse::new(request.id, result)).unwrap();
//! assert_eq!(
//!     wire,
//!     r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}"#
//! );
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod conform;
pub mod error_codes;
pub mod jsonrpc;
pub mod methods;
pub mod read;
pub mod types;
pub mod version;
mod write;

pub use jsonrpc::{ErrorObject, Message, RequestId};
pub use version::{Era, Feature, ProtocolVersion, VersionSet};
