//! Representative values of every type: every enum variant, optional fields present and
//! absent. Each family of types has its own module.

use super::Sample;

mod content;
mod features;
mod interaction;
mod protocol;
mod support;

/// Every sample.
pub fn all() -> Vec<Sample> {
    let mut all = Vec::new();
    all.extend(content::samples());
    all.extend(features::samples());
    all.extend(interaction::samples());
    all.extend(protocol::samples());
    all
}
