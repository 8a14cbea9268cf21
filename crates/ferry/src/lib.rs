//! Ferry: Model Context Protocol servers and clients for every revision, in both eras.
//!
//! This crate will hold the engine both ends share, the server, the client and the
//! transports, each behind a feature. Today it is the facade over the wire types:
//! [`protocol`] re-exports the `ferry-protocol` crate.
//!
//! ```
//! use ferry::protocol::{ProtocolVersion, VersionSet, Era};
//!
//! let versions = VersionSet::all();
//! assert_eq!(versions.negotiate("2025-06-18", Era::Session), Some(ProtocolVersion::V2025_06_18));
//! ```

pub use ferry_protocol as protocol;
