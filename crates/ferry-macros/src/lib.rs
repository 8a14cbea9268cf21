//! Procedural macros for Ferry. The macros are sugar over the builder API of the `ferry`
//! crate and never the only way to do something; they land with the server API.
