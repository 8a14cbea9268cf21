//! Ferry: Model Context Protocol servers and clients for every revision, in both eras.
//!
//! This facade re-exports the wire types of [`ferry_protocol`] as [`protocol`].

pub use ferry_protocol as protocol;
