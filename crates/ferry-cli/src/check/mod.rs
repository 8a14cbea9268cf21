//! `ferry check`: a conformance checker for any MCP server, requirement by requirement,
//! under every revision the server offers.
//!
//! The server is named as every command names it (see `crate::target`): a stdio command
//! (`ferry check -- node server.js`), a Streamable HTTP endpoint (`ferry check --url
//! http://127.0.0.1:8000/mcp`, or https; with `--header`s and the client commands' OAuth),
//! a server of a host's file (`--server NAME`, `-- @NAME`), or nothing: the reference
//! server in this process, checked over an in-memory transport (the stdio transport's
//! requirements are then skipped: there is none; `ferry check -- ferry serve` checks it
//! over stdio). The URL as a positional argument, the form of earlier versions, still
//! works (hidden from the help). For each revision
//! (or the one given with `--revision`) the checker opens a fresh connection, negotiates
//! the revision (`initialize`, or `server/discover` in the stateless era; a server that
//! offers another revision instead does not offer this one), then checks, with raw
//! messages so that it can send malformed ones: the base protocol's error handling, the
//! lifecycle, capability honesty (declared ⇔ implemented), every result against the
//! revision's JSON schema (embedded), pagination, ping, cancellation, progress and
//! logging; over HTTP also status codes, content types, sessions (ids, 400/404, DELETE),
//! the protocol version header, Origin protection and the stateless era's headers. It
//! discovers what the server offers; it depends on no fixture names.
//!
//! Tools are called only when the checker can make up their arguments from the input
//! schema, and by default only tools annotated `readOnlyHint: true`, since a conformance
//! check must not change the world: `--call-tools all` calls the others too, `none` none.
//!
//! The report groups the requirements by spec section, each MUST or SHOULD, pass, fail
//! (with the evidence: what was sent, what came back) or skip (with the reason); `--json`
//! prints it as JSON. Exit codes: 0 no MUST failed; 1 a MUST failed; 2 usage error, or
//! the server could not be started (a child that exited before answering is reported with
//! its status and last stderr lines) or offered no revision; 3 the server refused for
//! want of authorization, and the authorization options could not overcome it.
//!
//! `coverage.rs` maps every server requirement of the test-oriented spec (seed 004) to the
//! check that tests it, or says why none can, and lists the checks beyond it.

mod capabilities;
mod coverage;
mod generate;
mod http;
mod http_peer;
mod http_resume;
mod http_session;
mod jsonrpc;
mod lifecycle;
mod logging;
mod model;
mod pagination;
mod probe;
mod report;
mod schema;
mod shapes;
mod stateless;
mod stateless_http;
mod stdio;
mod subscriptions;
mod target;
mod utilities;
mod versions;

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use ferry::protocol::{Era, ProtocolVersion};

use crate::stderr::note;
use crate::target::{Endpoint, TargetArgs};
use lifecycle::Handshake;
use model::Findings;
use probe::{Probe, ToolPolicy};
use report::{Report, RevisionStatus};
use schema::Schema;
use target::{Target, Timing};

/// `ferry check`.
#[derive(Args)]
pub(crate) struct CheckArgs {
    /// The form of earlier versions: the server's URL, now `--url URL`.
    #[arg(value_name = "URL", hide = true, conflicts_with_all = ["url", "server_name", "command"])]
    positional_url: Option<String>,
    /// Check only this revision (default: every revision the server offers).
    #[arg(long, value_name = "REVISION")]
    revision: Option<ProtocolVersion>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Which tools to call with made-up arguments: `read-only` (annotated readOnlyHint),
    /// `all` (may have side effects!) or `none`.
    #[arg(long, value_enum, default_value = "read-only", value_name = "WHICH")]
    call_tools: CallTools,
    /// Seconds to wait for each response.
    #[arg(long, value_name = "SECONDS", default_value = "10")]
    timeout: f64,
    /// Milliseconds to wait, once the server answered a later request, for something it
    /// must (or must not) send.
    #[arg(long, value_name = "MS", default_value = "150")]
    grace: u64,
    /// Show the server's stderr.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    target: TargetArgs,
}

/// `--call-tools`.
#[derive(Clone, Copy, ValueEnum)]
enum CallTools {
    ReadOnly,
    All,
    None,
}

/// Run `ferry check`.
pub(crate) async fn run(args: CheckArgs) -> ExitCode {
    let Some(request) = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|d| !d.is_zero())
    else {
        note!("ferry check: --timeout must be a positive number of seconds");
        return ExitCode::from(2);
    };
    let named = match &args.positional_url {
        Some(url) => args
            .target
            .retarget(Some(url.clone()), Vec::new(), Vec::new()),
        None => args.target.clone(),
    };
    let resolved = match named.resolve(args.verbose) {
        Ok(resolved) => resolved,
        Err(e) => {
            note!("ferry check: {e}");
            return ExitCode::from(2);
        }
    };
    let target = match &resolved.endpoint {
        Endpoint::Http { url, headers } => {
            match crate::client::target::gate(&resolved, url, headers) {
                Ok(gate) => Target::Http {
                    url: url.clone(),
                    headers: headers.clone(),
                    gate,
                },
                Err(e) => {
                    note!("ferry check: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        Endpoint::Stdio { command: words, .. } => match resolved.child_command() {
            Some(command) => Target::Stdio {
                words: words.clone(),
                command,
                show_stderr: args.verbose,
            },
            None => {
                note!("ferry check: the command after `--` is empty");
                return ExitCode::from(2);
            }
        },
        Endpoint::InProcess => Target::InProcess,
    };
    let timing = Timing {
        request,
        grace: Duration::from_millis(args.grace),
        connect: resolved.connect_timeout(request),
    };
    let tools = match args.call_tools {
        CallTools::ReadOnly => ToolPolicy::ReadOnly,
        CallTools::All => ToolPolicy::All,
        CallTools::None => ToolPolicy::None,
    };
    let revisions: Vec<ProtocolVersion> = match args.revision {
        Some(revision) => vec![revision],
        // The stateless era first: its discovery tells which session revisions to expect.
        None => ProtocolVersion::ALL.into_iter().rev().collect(),
    };
    let report = match check(&target, &revisions, timing, tools).await {
        Ok(report) => report,
        Err(e) => {
            note!("ferry check: {e}");
            return ExitCode::from(2);
        }
    };
    // The report is best effort too: a reader that hung up (`ferry check ... | head`) must
    // not turn the verdict into a panic; the exit code still says it.
    let mut stdout = std::io::stdout().lock();
    let _ = if args.json {
        writeln!(stdout, "{:#}", report.json())
    } else {
        write!(stdout, "{}", report.text())
    };
    drop(stdout);
    if report.revisions.iter().all(|r| r.not_offered.is_some()) {
        if let Some(why) = target.refusal() {
            note!("ferry check: authorization failed: {why}");
            return ExitCode::from(crate::client::auth::EXIT_UNAUTHORIZED);
        }
        note!("ferry check: the server offered none of the revisions tried");
        return ExitCode::from(2);
    }
    if report.must_failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Check every revision in `revisions`, in order.
async fn check(
    target: &Target,
    revisions: &[ProtocolVersion],
    timing: Timing,
    tools: ToolPolicy,
) -> Result<Report, String> {
    let mut findings = Findings::default();
    let mut statuses = Vec::new();
    // What the run sees of versions (what server/discover claims, what is accepted).
    let mut seen = versions::Seen::default();
    let mut session_accepted = false;
    let mut cancel_in_flight = true;
    // Whether the server has answered (written anything) on any connection yet.
    let mut heard = false;
    for &revision in revisions {
        seen.tried.push(revision);
        let mut conn = target.open(timing)?;
        let mut schema = Schema::of(revision);
        let capabilities = match revision.era() {
            Era::Stateless => {
                match stateless::discover(&mut conn, revision, &mut schema, &mut findings).await {
                    Some((capabilities, supported)) => {
                        seen.claimed = Some(supported);
                        Ok(capabilities)
                    }
                    None => Err("server/discover was not answered with a result".to_owned()),
                }
            }
            Era::Session => {
                match lifecycle::handshake(&mut conn, revision, &mut schema, &mut findings).await {
                    Handshake::Accepted { capabilities } => Ok(capabilities),
                    Handshake::CounterOffer(offered) => {
                        let why = format!("initialize offered {offered} instead");
                        seen.offers.push((revision.as_str().to_owned(), offered));
                        Err(why)
                    }
                    Handshake::Failed(evidence) => {
                        let expected = seen
                            .claimed
                            .as_ref()
                            .is_none_or(|c| c.iter().any(|v| v == revision.as_str()));
                        if expected {
                            lifecycle::record_failure(revision, evidence.clone(), &mut findings);
                        }
                        Err(evidence)
                    }
                }
            }
        };
        // A child that exited before it ever answered (or never answered in time) cannot
        // be checked: said at once, with its own words.
        if let Some(why) = conn.unstarted.take().filter(|_| !heard) {
            conn.close().await;
            return Err(why);
        }
        heard |= conn.heard;
        let capabilities = match capabilities {
            Ok(capabilities) => capabilities,
            Err(why) => {
                conn.close().await;
                statuses.push(RevisionStatus {
                    revision: revision.as_str(),
                    not_offered: Some(why),
                });
                continue;
            }
        };
        session_accepted |= revision.era() == Era::Session;
        seen.accepted.push((revision, capabilities.clone()));
        statuses.push(RevisionStatus {
            revision: revision.as_str(),
            not_offered: None,
        });
        let mut probe = Probe {
            conn,
            revision,
            capabilities,
            schema,
            findings: &mut findings,
            tools,
            progress_tokens: Vec::new(),
            level_set_at: None,
            slow_tool: None,
            resumable_call: None,
            logging_tool: None,
            cancel_in_flight,
        };
        run_checks(&mut probe).await;
        cancel_in_flight = probe.cancel_in_flight;
        probe.conn.close().await;
    }
    if session_accepted {
        let mut conn = target.open(timing)?;
        if let Some(offer) = lifecycle::fresh_connection_checks(&mut conn, &mut findings).await {
            seen.offers.push(offer);
        }
        conn.close().await;
    }
    versions::check(target, timing, &seen, &mut findings).await;
    statuses.sort_by_key(|s| s.revision);
    Ok(Report {
        target: target.describe(),
        revisions: statuses,
        findings,
        requests_sent: target::requests_sent(),
    })
}

/// Every check of one revision on its negotiated connection.
async fn run_checks(probe: &mut Probe<'_>) {
    http::after_handshake(probe);
    if probe.stateless() {
        // Every tool call asks for log messages at warning and above.
        if probe.declares("logging") {
            probe.level_set_at = Some(0);
        }
        stateless::check(probe).await;
    } else {
        capabilities::logging(probe).await;
        utilities::ping(probe).await;
    }
    jsonrpc::check(probe).await;
    let inventory = capabilities::check(probe).await;
    shapes::exercise(probe, &inventory).await;
    subscriptions::check(probe, &inventory).await;
    logging::invalid_level(probe).await;
    utilities::cancellation(probe).await;
    if !probe.stateless() {
        lifecycle::second_initialize(&mut probe.conn, probe.revision, probe.findings).await;
    }
    // Whatever is still on its way.
    let grace = probe.conn.timing.grace;
    let _ = probe.conn.drain(grace).await;
    shapes::notifications(probe);
    utilities::progress(probe);
    logging::messages(probe);
    logging::filtering(probe).await;
    capabilities::client_capabilities(probe);
    capabilities::list_changed(probe);
    if probe.conn.http.is_some() {
        http::check(probe).await;
    } else if probe.conn.in_process() {
        stdio::not_checked(probe);
    } else {
        stdio::check(probe);
    }
}
