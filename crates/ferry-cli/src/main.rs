//! The `ferry` command.

fn main() {}
