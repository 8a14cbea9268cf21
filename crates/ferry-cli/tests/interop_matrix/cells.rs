//! Running one cell: which peer, started how, talking to which side of Ferry.

use ferry::protocol::ProtocolVersion;

use crate::ferry_client;
use crate::peers::{self, Verdict};
use crate::table::{Cell, Era, Pairing, Wire};

/// Ferry's server (`ferry serve`, on stdio or `--http`) against an SDK client peer: the
/// peer's verdicts.
pub(crate) fn ferry_server(cell: Cell) -> Vec<Verdict> {
    let (program, mut args) = match cell.pairing {
        Pairing::TsClient => peers::node("client.mjs"),
        _ => {
            let (program, mut args) = peers::python("client.py");
            args.push(
                match cell.era {
                    Era::Session => "session",
                    Era::Stateless => "stateless",
                }
                .into(),
            );
            (program, args)
        }
    };
    if cell.wire == Wire::Stdio {
        args.extend(["stdio".into(), peers::ferry(), "serve".into()]);
        return peers::run_client_peer(&program, &args);
    }
    let serve = ["serve", "--http", "127.0.0.1:0"].map(String::from);
    let (_server, url) = peers::start_http_server(&peers::ferry(), &serve, true);
    if cell.wire == Wire::Sse {
        // `ferry serve --http` serves HTTP+SSE at /sse beside /mcp.
        args.extend(["sse".into(), url.replace("/mcp", "/sse")]);
    } else {
        args.extend(["http".into(), url]);
    }
    peers::run_client_peer(&program, &args)
}

/// Ferry's client (the library, pinned to `version`) against a server peer on `wire`.
pub(crate) fn ferry_client(pairing: Pairing, wire: Wire, version: ProtocolVersion) -> Vec<Verdict> {
    let (program, mut args) = match pairing {
        Pairing::TsServer => peers::node("server.mjs"),
        Pairing::PyServer => peers::python("server.py"),
        _ => peers::everything(),
    };
    let profile = match pairing {
        Pairing::Everything => ferry_client::everything(),
        _ => ferry_client::sdk_server(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if wire == Wire::Stdio {
        args.push("stdio".into());
        return runtime.block_on(ferry_client::over_stdio(&program, &args, version, &profile));
    }
    let mode = match (pairing, wire) {
        (Pairing::Everything, Wire::Http) => "streamableHttp",
        (_, Wire::Http) => "http",
        _ => "sse",
    };
    let (_server, url) = if pairing == Pairing::Everything {
        peers::start_everything(mode)
    } else {
        args.extend([mode.into(), "0".into()]);
        peers::start_http_server(&program, &args, false)
    };
    runtime.block_on(ferry_client::over_http(&url, version, &profile))
}
