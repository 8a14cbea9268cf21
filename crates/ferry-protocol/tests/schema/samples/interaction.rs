//! Samples of what servers ask of clients and the long-running interactions: sampling,
//! roots, elicitation (form and URL), tasks (2025-11-25), and the stateless era's
//! `server/discover`, `subscriptions/listen` and `input_required` round trips. A
//! server-to-client request is a JSON-RPC request in the session era and an input request
//! inside an `input_required` result from 2026-07-28; both forms are sampled.

use crate::schema::Sample;

mod elicitation;
mod roots;
mod sampling;
mod stateless;
mod tasks;

pub fn samples() -> Vec<Sample> {
    [
        sampling::samples(),
        roots::samples(),
        elicitation::samples(),
        tasks::samples(),
        stateless::samples(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
