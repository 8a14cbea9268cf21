// The builder's handlers take at most five extractors.
use ferry::engine::Peer;
use ferry::server::{Cancel, ClientCaps, Context, Meta, Progress};

#[ferry::tool]
async fn busy(
    _cx: Context,
    _progress: Progress,
    _cancel: Cancel,
    _peer: Peer,
    _meta: Meta,
    _caps: ClientCaps,
) -> String {
    "busy".into()
}

fn main() {}
