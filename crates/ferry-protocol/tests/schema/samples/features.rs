//! Samples of the server features: tools, resources and resource templates, prompts, and
//! the utilities that go with them (completion, logging, pagination, list-changed
//! notifications). One module per feature.

use crate::schema::Sample;

mod prompts;
mod resources;
mod tools;
mod utilities;

pub fn samples() -> Vec<Sample> {
    [
        tools::samples(),
        resources::samples(),
        prompts::samples(),
        utilities::samples(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
