//! Samples (to be filled).

use crate::schema::Sample;

pub fn samples() -> Vec<Sample> {
    Vec::new()
}
