//! The client commands: `ferry tools|resources|templates|prompts`, `ferry call`, `ferry
//! read`, `ferry prompt`, `ferry complete`, `ferry ping`, `ferry discover`.
//!
//! Every command names its server the same way (see `crate::target`): `--url URL` talks to
//! a Streamable HTTP server (or a 2024-11-05 HTTP+SSE one), `-- command args...` runs a
//! stdio server as a child process, `--server NAME` is either, as a host's file says; with
//! none the command talks to the reference server in-process.
//! A server at `--url` that answers 401 is authorized with OAuth (see `oauth`): a person
//! approves the printed URL in a browser (or `--client-credentials` for a machine), and
//! the tokens are kept for the next command.
//! Results go to stdout (human output, or the raw result with `--json`); errors, what the
//! server asks, the wire trace (`-v`) and the progress bar go to stderr.
//!
//! Exit codes: 0 success; 1 a JSON-RPC error, a tool result with `isError`, or the server
//! could not be reached (a child that exited before answering is reported with its status
//! and its last stderr lines); 2 a usage error; 3 the server refused for want of authorization
//! (HTTP 401/403), or the authorization failed; 130 interrupted (Ctrl-C cancels the call in
//! flight, then the connection is closed and a child server shut down).

pub(crate) mod answers;
pub(crate) mod args;
pub(crate) mod auth;
pub(crate) mod oauth;
pub(crate) mod output;
mod render;
pub(crate) mod target;
mod tasks;
pub(crate) mod trace;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgGroup, Args, Subcommand};
use ferry::client::{CallOptions, Client, ClientError};
use ferry::engine::Transport;
use ferry::protocol::ProtocolVersion;
use ferry::protocol::methods::ServerNotification;
use ferry::protocol::types::{JsonObject, Reference};
use serde_json::{Value, json};

use render::Saver;

/// A client command.
#[derive(Subcommand)]
pub(crate) enum ClientCommand {
    /// List the server's tools.
    Tools(Common),
    /// List the server's resources.
    Resources(Common),
    /// List the server's resource templates.
    Templates(Common),
    /// List the server's prompts.
    Prompts(Common),
    /// Call a tool: `ferry call echo text=hi`.
    Call(CallArgs),
    /// Read a resource: `ferry read server://info`.
    Read(ReadArgs),
    /// Get a prompt: `ferry prompt code_review code='x = 1'`.
    Prompt(PromptArgs),
    /// Complete an argument: `ferry complete --prompt code_review language=ru`.
    Complete(CompleteArgs),
    /// Check that the server answers.
    Ping(Common),
    /// Show what the server is: identity, revision, capabilities, instructions.
    Discover(Common),
    /// Follow the tasks of an HTTP session (2025-11-25) that `ferry call --task --detach`
    /// left running: `ferry tasks result TASK --session ID --url URL`.
    Tasks(tasks::TasksArgs),
}

/// The options every client command takes.
#[derive(Args, Clone)]
pub(crate) struct Common {
    /// Print the raw JSON result on stdout instead of human output.
    #[arg(long)]
    json: bool,
    /// Speak exactly this protocol revision, e.g. 2025-06-18 (default: negotiate).
    #[arg(long, value_name = "REVISION")]
    protocol_version: Option<ProtocolVersion>,
    /// Timeout of each request in seconds (default 60); progress restarts it for `call`.
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    timeout: Option<Duration>,
    /// How long the `server/discover` probe waits for an answer, in seconds, before
    /// `initialize` is sent too (default 3; an HTTP server's probe waits for its answer, up
    /// to --timeout); a late answer to the probe still counts; 0 sends no probe.
    #[arg(long, value_name = "SECONDS", value_parser = seconds_or_zero)]
    probe_timeout: Option<Duration>,
    /// The largest message accepted from the server, in bytes (default 64 MiB: answers
    /// carry files and images); a larger answer fails its call at once.
    #[arg(long, value_name = "BYTES", default_value_t = ferry::protocol::jsonrpc::DEFAULT_CLIENT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// Trace every message on stderr (`-->` sent, `<--` received).
    #[arg(short, long)]
    verbose: bool,
    /// Answer the server's sampling requests with this text (otherwise they are declined).
    #[arg(long, value_name = "TEXT")]
    sampling_reply: Option<String>,
    /// Accept the server's elicitation requests with this JSON object (otherwise they are
    /// declined).
    #[arg(long, value_name = "JSON", value_parser = args::json_object)]
    elicit_reply: Option<JsonObject>,
    /// Offer this root to the server (repeatable; a path becomes a file:// URI).
    #[arg(long = "root", value_name = "URI")]
    roots: Vec<String>,
    /// Save images, audio and binary resources in this directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Export OpenTelemetry traces and metrics of the requests to this OTLP/HTTP collector
    /// (JSON bodies), e.g. http://127.0.0.1:4318; each request carries its trace context
    /// to the server in `_meta`.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// The server (last: its options are listed under headings of their own).
    #[command(flatten)]
    pub(crate) target: crate::target::TargetArgs,
    /// The HTTP session to take up instead of starting one (`ferry tasks --session`).
    #[arg(skip)]
    session: Option<String>,
    /// Leave the HTTP session open at the end (`--detach`, `--session`).
    #[arg(skip)]
    keep_session: bool,
}

/// `ferry call`.
#[derive(Args)]
pub(crate) struct CallArgs {
    /// The tool.
    tool: String,
    /// Arguments: a value is JSON when it parses as JSON (unless the tool's schema says
    /// string), otherwise a string.
    #[arg(value_name = "KEY=VALUE")]
    arguments: Vec<String>,
    /// The arguments as one JSON object instead.
    #[arg(long = "args", value_name = "JSON", conflicts_with = "arguments")]
    json_args: Option<String>,
    /// Run the call as a task (2025-11-25, the revision then spoken unless
    /// --protocol-version says otherwise): its progress and status are shown until it
    /// ends, then its result.
    #[arg(long)]
    task: bool,
    /// How long the server should keep the task, in seconds (it may keep it less).
    #[arg(long, value_name = "SECONDS", value_parser = seconds, requires = "task")]
    ttl: Option<Duration>,
    /// Print the task and its HTTP session and exit, leaving both on the server (follow
    /// it with `ferry tasks`); needs an HTTP server.
    #[arg(long, requires = "task")]
    detach: bool,
    #[command(flatten)]
    common: Common,
}

/// `ferry read`.
#[derive(Args)]
pub(crate) struct ReadArgs {
    /// The resource's URI.
    uri: String,
    #[command(flatten)]
    common: Common,
}

/// `ferry prompt`.
#[derive(Args)]
pub(crate) struct PromptArgs {
    /// The prompt.
    name: String,
    /// Arguments (strings).
    #[arg(value_name = "KEY=VALUE")]
    arguments: Vec<String>,
    #[command(flatten)]
    common: Common,
}

/// `ferry complete`.
#[derive(Args)]
#[command(group(ArgGroup::new("reference").required(true).args(["prompt", "template"])))]
pub(crate) struct CompleteArgs {
    /// Complete an argument of this prompt.
    #[arg(long, value_name = "NAME")]
    prompt: Option<String>,
    /// Complete a variable of this resource template.
    #[arg(long, value_name = "URI", alias = "resource")]
    template: Option<String>,
    /// The argument and what is typed so far: `language=ru` (`language` for nothing yet).
    #[arg(value_name = "ARG=VALUE")]
    argument: String,
    /// Arguments already chosen (repeatable).
    #[arg(long = "context", value_name = "KEY=VALUE")]
    context: Vec<String>,
    #[command(flatten)]
    common: Common,
}

impl Common {
    /// The same options aimed at another server (`ferry inspect`: a server the person
    /// named in the page): an HTTP URL with its headers, or a stdio command.
    pub(crate) fn retarget(
        &self,
        url: Option<String>,
        headers: Vec<(String, String)>,
        command: Vec<String>,
    ) -> Common {
        Common {
            target: self.target.retarget(url, headers, command),
            ..self.clone()
        }
    }

    /// `--root`, as given.
    pub(crate) fn roots(&self) -> &[String] {
        &self.roots
    }

    /// `--timeout`, if given.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// `--probe-timeout`, if given.
    pub(crate) fn probe_timeout(&self) -> Option<Duration> {
        self.probe_timeout
    }

    /// The options of the one-shot commands that `ferry inspect` has no use for, by
    /// name, when given (the page shows results, answers the server and saves files).
    pub(crate) fn one_shot_options(&self) -> Vec<&'static str> {
        let given = [
            (self.json, "--json"),
            (self.out.is_some(), "--out"),
            (self.sampling_reply.is_some(), "--sampling-reply"),
            (self.elicit_reply.is_some(), "--elicit-reply"),
            // (The inspector's connections are not traced.)
            (self.otlp.is_some(), "--otlp"),
        ];
        given
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect()
    }
}

/// A number of seconds, zero included (`--probe-timeout 0`: no probe).
fn seconds_or_zero(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("expected a number of seconds (0 or more), got {text:?}"))
}

/// A positive number of seconds.
pub(crate) fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("expected a positive number of seconds, got {text:?}"))
}

/// What a command does once connected, its arguments checked.
enum Operation {
    Tools,
    Resources,
    Templates,
    Prompts,
    Call {
        tool: String,
        arguments: Arguments,
        task: Option<tasks::AsTask>,
    },
    Tasks(tasks::TaskOperation),
    Read(String),
    Prompt(String, BTreeMap<String, String>),
    Complete(Reference, String, String, Option<BTreeMap<String, String>>),
    Ping,
    Discover,
}

/// A tool's arguments: pairs to type with the tool's schema, or a JSON object.
enum Arguments {
    Pairs(Vec<(String, String)>),
    Json(JsonObject),
}

/// How a command ended.
enum Outcome {
    Done,
    Failed,
    Unauthorized,
    Interrupted,
}

impl ClientCommand {
    /// The common options and the operation; a usage error is a message.
    fn split(self) -> Result<(Common, Operation), String> {
        Ok(match self {
            ClientCommand::Tools(c) => (c, Operation::Tools),
            ClientCommand::Resources(c) => (c, Operation::Resources),
            ClientCommand::Templates(c) => (c, Operation::Templates),
            ClientCommand::Prompts(c) => (c, Operation::Prompts),
            ClientCommand::Ping(c) => (c, Operation::Ping),
            ClientCommand::Discover(c) => (c, Operation::Discover),
            ClientCommand::Call(a) => {
                let arguments = match &a.json_args {
                    Some(text) => Arguments::Json(
                        args::json_object(text).map_err(|e| format!("--args: {e}"))?,
                    ),
                    None => Arguments::Pairs(args::pairs(&a.arguments)?),
                };
                let tool = a.tool;
                let mut common = a.common;
                let task = a.task.then(|| {
                    common
                        .protocol_version
                        .get_or_insert(ProtocolVersion::V2025_11_25);
                    common.keep_session = a.detach;
                    tasks::AsTask {
                        ttl: a.ttl,
                        detach: a.detach,
                    }
                });
                (
                    common,
                    Operation::Call {
                        tool,
                        arguments,
                        task,
                    },
                )
            }
            ClientCommand::Tasks(a) => {
                use tasks::{TaskOperation as Op, TasksAction as Action};
                let (session, mut common, operation) = match a.action {
                    Action::List(l) => (l.session, l.common, Op::List),
                    Action::Get(t) => (t.session, t.common, Op::Get(t.task)),
                    Action::Result(t) => (t.session, t.common, Op::Result(t.task)),
                    Action::Cancel(t) => (t.session, t.common, Op::Cancel(t.task)),
                };
                common
                    .protocol_version
                    .get_or_insert(ProtocolVersion::V2025_11_25);
                common.session = Some(session);
                common.keep_session = true;
                (common, Operation::Tasks(operation))
            }
            ClientCommand::Read(a) => (a.common, Operation::Read(a.uri)),
            ClientCommand::Prompt(a) => {
                let arguments = args::strings(&a.arguments)?;
                (a.common, Operation::Prompt(a.name, arguments))
            }
            ClientCommand::Complete(a) => {
                let reference = match (a.prompt, a.template) {
                    (Some(name), _) => Reference::prompt(name),
                    (None, Some(uri)) => Reference::resource(uri),
                    (None, None) => return Err("--prompt or --template is required".into()),
                };
                let (name, value) = match a.argument.split_once('=') {
                    Some((name, value)) => (name.to_owned(), value.to_owned()),
                    None => (a.argument.clone(), String::new()),
                };
                if name.is_empty() {
                    return Err(format!("expected ARG=VALUE, got {:?}", a.argument));
                }
                let context = (!a.context.is_empty())
                    .then(|| args::strings(&a.context))
                    .transpose()?;
                (
                    a.common,
                    Operation::Complete(reference, name, value, context),
                )
            }
        })
    }
}

/// Run a client command.
pub(crate) async fn run(command: ClientCommand) -> ExitCode {
    let (common, operation) = match command.split() {
        Ok(split) => split,
        Err(usage) => {
            output::note(&format!(
                "error: {usage}\n\nFor more information, try '--help'."
            ));
            return ExitCode::from(2);
        }
    };
    let telemetry = match common.otlp.as_deref().map(|url| {
        ferry::otel::init_otlp(url, "ferry-cli").map_err(|e| format!("--otlp {url:?}: {e}"))
    }) {
        None => None,
        Some(Ok(telemetry)) => Some(telemetry),
        Some(Err(usage)) => {
            output::note(&format!("error: {usage}"));
            return ExitCode::from(2);
        }
    };
    // A named server's entry, read once: the target and the client's options (its era).
    let started = common
        .target
        .resolve(common.verbose)
        .and_then(|resolved| Ok((target::start(&common, &resolved)?, resolved)));
    let started = started.and_then(|(started, resolved)| {
        let http = matches!(resolved.endpoint, crate::target::Endpoint::Http { .. });
        if common.keep_session && !http {
            return Err(
                "--detach and --session need an HTTP server (--url, or a named HTTP \
                        server): a task of a stdio server ends with it"
                    .to_owned(),
            );
        }
        Ok((started, resolved))
    });
    let ((target, transport), resolved) = match started {
        Ok(started) => started,
        Err(e) => {
            output::note(&format!("ferry: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let outcome = tokio::select! {
        outcome = perform(&common, &resolved, operation, transport, &target) => outcome,
        () = interrupt => Outcome::Interrupted,
    };
    output::clear_progress();
    let interrupted = matches!(outcome, Outcome::Interrupted);
    if interrupted {
        output::note("ferry: interrupted; the request in flight was cancelled");
    }
    target.close(interrupted).await;
    // The spans and metrics not yet sent, once the client and its connection are gone.
    if let Some(telemetry) = telemetry
        && let Err(e) = telemetry.shutdown().await
    {
        output::note(&format!("ferry: {e}"));
    }
    match outcome {
        Outcome::Done => ExitCode::SUCCESS,
        Outcome::Failed => ExitCode::FAILURE,
        Outcome::Unauthorized => ExitCode::from(auth::EXIT_UNAUTHORIZED),
        Outcome::Interrupted => ExitCode::from(130),
    }
}

async fn perform(
    common: &Common,
    resolved: &crate::target::Resolved,
    operation: Operation,
    transport: Transport,
    target: &target::Target,
) -> Outcome {
    let client = match target.connect(common, resolved, transport).await {
        Ok(client) => client,
        Err(target::Unconnected::Child(why)) => {
            output::note(&format!("ferry: {why}"));
            return Outcome::Failed;
        }
        Err(target::Unconnected::Client(e)) => {
            if let Some(why) = target.auth_failure(&e) {
                output::note(&format!("ferry: authorization failed: {why}"));
                return Outcome::Unauthorized;
            }
            output::client_error("connecting", &e, false);
            if let Some(status) = target.child_status() {
                output::note(&format!("ferry: {status}"));
            }
            return Outcome::Failed;
        }
    };
    let logs = print_logs(&client);
    let outcome = match execute(common, operation, &client, target).await {
        Ok(outcome) => outcome,
        Err((what, error)) => match target.auth_failure(&error) {
            Some(why) => {
                output::note(&format!("ferry: {what}: authorization failed: {why}"));
                Outcome::Unauthorized
            }
            None => {
                output::client_error(&what, &error, common.json);
                Outcome::Failed
            }
        },
    };
    logs.abort();
    outcome
}

/// The server's log messages on stderr.
fn print_logs(client: &Client) -> tokio::task::JoinHandle<()> {
    let mut notifications = client.notifications();
    tokio::spawn(async move {
        while let Ok(notification) = notifications.recv().await {
            if let ServerNotification::LoggingMessage(log) = notification {
                let level = serde_json::to_value(log.level).unwrap_or_default();
                let level = level.as_str().unwrap_or("log");
                let data = match &log.data {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                match &log.logger {
                    Some(logger) => output::note(&format!("[{level}] {logger}: {data}")),
                    None => output::note(&format!("[{level}] {data}")),
                }
            }
        }
    })
}

type Failure = (String, ClientError);

fn failed(what: impl Into<String>) -> impl FnOnce(ClientError) -> Failure {
    move |e| (what.into(), e)
}

async fn execute(
    common: &Common,
    operation: Operation,
    client: &Client,
    target: &target::Target,
) -> Result<Outcome, Failure> {
    let as_json = common.json;
    match operation {
        Operation::Tools => {
            let tools = client
                .list_all_tools()
                .await
                .map_err(failed("tools/list"))?;
            if as_json {
                output::json(&json!({ "tools": tools }));
            } else {
                render::tools(&tools);
            }
        }
        Operation::Resources => {
            let resources = client
                .list_all_resources()
                .await
                .map_err(failed("resources/list"))?;
            if as_json {
                output::json(&json!({ "resources": resources }));
            } else {
                render::resources(&resources);
            }
        }
        Operation::Templates => {
            let templates = client
                .list_all_resource_templates()
                .await
                .map_err(failed("resources/templates/list"))?;
            if as_json {
                output::json(&json!({ "resourceTemplates": templates }));
            } else {
                render::templates(&templates);
            }
        }
        Operation::Prompts => {
            let prompts = client
                .list_all_prompts()
                .await
                .map_err(failed("prompts/list"))?;
            if as_json {
                output::json(&json!({ "prompts": prompts }));
            } else {
                render::prompts(&prompts);
            }
        }
        Operation::Call {
            tool,
            arguments,
            task,
        } => {
            let arguments = call_arguments(client, &tool, arguments).await?;
            return match task {
                Some(how) => {
                    tasks::call(common, client, &tool, arguments, &how, target.session_id()).await
                }
                None => call(common, client, &tool, arguments).await,
            };
        }
        Operation::Tasks(operation) => return tasks::run(common, client, operation).await,
        Operation::Read(uri) => {
            let result = client
                .read_resource(&uri)
                .await
                .map_err(failed("resources/read"))?;
            if as_json {
                output::json(&result);
            } else {
                let stem = uri.rsplit(['/', ':']).find(|s| !s.is_empty());
                let stem = stem.map(|s| s.split('.').next().unwrap_or(s));
                let mut saver = Saver::new(common.out.as_deref(), stem.unwrap_or("resource"));
                render::read(&result, &mut saver);
                return Ok(saved(&saver));
            }
        }
        Operation::Prompt(name, arguments) => {
            let result = client
                .get_prompt(&name, arguments)
                .await
                .map_err(failed("prompts/get"))?;
            if as_json {
                output::json(&result);
            } else {
                let mut saver = Saver::new(common.out.as_deref(), &name);
                render::prompt(&result, &mut saver);
                return Ok(saved(&saver));
            }
        }
        Operation::Complete(reference, argument, value, context) => {
            let result = client
                .complete(reference, &argument, &value, context)
                .await
                .map_err(failed("completion/complete"))?;
            if as_json {
                output::json(&result);
            } else {
                render::completion(&result);
            }
        }
        Operation::Ping => {
            let started = std::time::Instant::now();
            client.ping().await.map_err(failed("ping"))?;
            let elapsed = started.elapsed();
            if as_json {
                output::json(&json!({}));
            } else {
                render::pong(client, elapsed);
            }
        }
        Operation::Discover => return discover(common, client).await,
    }
    Ok(Outcome::Done)
}

fn saved(saver: &Saver) -> Outcome {
    if saver.failed {
        Outcome::Failed
    } else {
        Outcome::Done
    }
}

/// A tool's arguments as JSON: pairs typed by the tool's schema (listed for that).
async fn call_arguments(
    client: &Client,
    tool: &str,
    arguments: Arguments,
) -> Result<Value, Failure> {
    Ok(match arguments {
        Arguments::Json(object) => Value::Object(object),
        Arguments::Pairs(pairs) if pairs.is_empty() => json!({}),
        Arguments::Pairs(pairs) => {
            // The schema decides string or JSON; an unknown tool is the server's to refuse.
            let tools = client
                .list_all_tools()
                .await
                .map_err(failed("tools/list"))?;
            let schema = tools
                .iter()
                .find(|t| t.name == tool)
                .map(|t| &t.input_schema);
            args::tool_arguments(&pairs, schema)
        }
    })
}

async fn call(
    common: &Common,
    client: &Client,
    tool: &str,
    arguments: Value,
) -> Result<Outcome, Failure> {
    let (updates, progress) = tokio::sync::mpsc::channel(64);
    let bar = output::progress(progress);
    let options = CallOptions {
        progress: Some(updates),
        reset_timeout_on_progress: true,
        ..Default::default()
    };
    let result = client.call_tool_with(tool, arguments, options).await;
    // Every update was handed over before the call returned; let the bar take them.
    let _ = bar.await;
    output::clear_progress();
    let result = result.map_err(failed(format!("tools/call {tool}")))?;
    let mut saver = Saver::new(common.out.as_deref(), tool);
    if common.json {
        output::json(&result);
    } else {
        render::call(&result, &mut saver);
    }
    if result.is_error == Some(true) {
        output::note(&format!(
            "ferry: the tool {tool} reported an error (isError)"
        ));
        return Ok(Outcome::Failed);
    }
    Ok(saved(&saver))
}

async fn discover(common: &Common, client: &Client) -> Result<Outcome, Failure> {
    let discovered = if client.version().has(ferry::protocol::Feature::Discover) {
        Some(client.discover().await.map_err(failed("server/discover"))?)
    } else {
        None
    };
    if common.json {
        match &discovered {
            Some(result) => output::json(result),
            // The session era has no discover: what `initialize` said, in its shape.
            None => output::json(&json!({
                "protocolVersion": client.version().as_str(),
                "capabilities": client.server_capabilities(),
                "serverInfo": client.server_info(),
                "instructions": client.instructions(),
            })),
        }
    } else {
        render::discovered(client, discovered.as_ref());
    }
    Ok(Outcome::Done)
}
