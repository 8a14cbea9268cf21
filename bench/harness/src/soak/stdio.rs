//! The stdio side of the soak: one long-lived `ferry serve` and one client taking turns
//! through what stdio has (calls in both eras, a cancelled countdown, an `input_required`
//! round, a `subscriptions/listen` opened and cancelled).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::Tally;

const STEP: Duration = Duration::from_secs(15);

/// `ferry serve` on stdio.
pub(crate) struct Server {
    child: Child,
    pub(crate) pid: u32,
}

/// The client's ends of the server's pipes, and the latest `server://info` it read.
pub(crate) struct Client {
    stdin: ChildStdin,
    incoming: mpsc::Receiver<Value>,
    pub(crate) info: Arc<Mutex<Option<Value>>>,
    next_id: u64,
}

impl Server {
    pub(crate) fn start(ferry: &str) -> Result<Server, String> {
        let child = Command::new(ferry)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{ferry} serve: {e}"))?;
        let pid = child.id().ok_or("the stdio server ended at once")?;
        Ok(Server { child, pid })
    }

    pub(crate) fn client(&mut self) -> Result<Client, String> {
        let stdin = self.child.stdin.take().ok_or("stdin taken")?;
        let stdout = self.child.stdout.take().ok_or("stdout taken")?;
        let (tx, incoming) = mpsc::channel(1024);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message = serde_json::from_str(&line)
                    .unwrap_or_else(|e| json!({"unparsable": line, "error": e.to_string()}));
                if tx.send(message).await.is_err() {
                    return;
                }
            }
        });
        Ok(Client {
            stdin,
            incoming,
            info: Arc::default(),
            next_id: 1,
        })
    }

    pub(crate) fn stop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Client {
    async fn write(&mut self, message: &Value) -> Result<(), String> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("stdin: {e}"))
    }

    async fn receive(&mut self) -> Result<Value, String> {
        match tokio::time::timeout(STEP, self.incoming.recv()).await {
            Err(_) => Err(format!("nothing from the server in {STEP:?}")),
            Ok(None) => Err("the server closed its stdout".into()),
            Ok(Some(message)) if message.get("unparsable").is_some() => {
                Err(format!("not JSON on stdout: {message}"))
            }
            Ok(Some(message)) => Ok(message),
        }
    }

    /// Send a request and read until its answer (what comes before it is passed to `seen`).
    async fn call(
        &mut self,
        method: &str,
        params: Value,
        mut seen: impl FnMut(&Value),
    ) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let message = self.receive().await?;
            if message["id"] == id && message.get("method").is_none() {
                return match message.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(format!("{method}: {message}")),
                };
            }
            seen(&message);
        }
    }

    pub(crate) async fn initialize(&mut self) -> Result<(), String> {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"}});
        self.call("initialize", params, |_| {}).await?;
        self.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }
}

fn stateless(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    });
    params
}

/// The stdio client's turns until the deadline (initialized already).
/// Gives the client back, so that the server lives on for the last reading.
pub(crate) async fn worker(
    mut client: Client,
    deadline: Instant,
    pause: Duration,
    tally: Arc<Tally>,
) -> Client {
    let mut turn = 0usize;
    while Instant::now() < deadline {
        let (kind, outcome) = match turn % 4 {
            0 => ("stdio.calls", calls(&mut client, turn).await),
            1 => ("stdio.cancel", cancel(&mut client).await),
            2 => ("stdio.stateless", stateless_round(&mut client, turn).await),
            _ => ("stdio.listen", listen(&mut client).await),
        };
        let broken = outcome.is_err();
        tally.record(kind, outcome);
        if broken {
            // The exchange is out of step or the server is gone: no point going on.
            return client;
        }
        turn += 1;
        tokio::time::sleep(pause).await;
    }
    client
}

async fn calls(client: &mut Client, turn: usize) -> Result<(), String> {
    for i in 0..5 {
        let text = format!("stdio {turn} {i}");
        let params = json!({"name": "echo", "arguments": {"text": text}});
        let result = client.call("tools/call", params, |_| {}).await?;
        if result["content"][0]["text"] != text.as_str() {
            return Err(format!("echo: {result}"));
        }
    }
    client.refresh_info().await
}

impl Client {
    /// Read `server://info` again (kept for the sampler).
    pub(crate) async fn refresh_info(&mut self) -> Result<(), String> {
        let read = self
            .call("resources/read", json!({"uri": "server://info"}), |_| {})
            .await?;
        let text = read["contents"][0]["text"].as_str().unwrap_or_default();
        let info = serde_json::from_str(text).map_err(|e| format!("server://info: {e}"))?;
        *self.info.lock().unwrap() = Some(info);
        Ok(())
    }
}

/// A countdown cancelled after its first progress: no result for it, and the next call
/// is answered.
async fn cancel(client: &mut Client) -> Result<(), String> {
    let id = client.next_id;
    client.next_id += 1;
    client
        .write(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "countdown", "arguments": {"steps": 7, "interval_ms": 40},
            "_meta": {"progressToken": format!("p{id}")}}}),
        )
        .await?;
    loop {
        let message = client.receive().await?;
        if message["method"] == "notifications/progress" {
            break;
        }
        if message["id"] == id {
            return Err(format!("countdown answered before any progress: {message}"));
        }
    }
    client
        .write(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "soak"}}),
        )
        .await?;
    // Longer than the countdown would have run: its result must not come.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut finished = false;
    client
        .call(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "after"}}),
            |m| {
                finished |= m["id"] == id && m.get("result").is_some();
            },
        )
        .await?;
    if finished {
        return Err("the cancelled countdown finished".into());
    }
    Ok(())
}

async fn stateless_round(client: &mut Client, turn: usize) -> Result<(), String> {
    let text = format!("stateless {turn}");
    let params = stateless(json!({"name": "echo", "arguments": {"text": text}}));
    let result = client.call("tools/call", params, |_| {}).await?;
    if result["content"][0]["text"] != text.as_str() {
        return Err(format!("stateless echo: {result}"));
    }
    let elicit = stateless(json!({"name": "elicit", "arguments": {"message": "Who are you?"}}));
    let first = client.call("tools/call", elicit.clone(), |_| {}).await?;
    let retry = super::answer_elicitation(elicit, &first)?;
    let done = client.call("tools/call", retry, |_| {}).await?;
    if done["resultType"] != "complete" || done["isError"] == true {
        return Err(format!("elicit retried: {done}"));
    }
    Ok(())
}

/// A `subscriptions/listen` acknowledged, then cancelled (on stdio a listener ends so).
async fn listen(client: &mut Client) -> Result<(), String> {
    let id = client.next_id;
    client.next_id += 1;
    let params = stateless(json!({"notifications": {"toolsListChanged": true}}));
    client
        .write(
            &json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": params}),
        )
        .await?;
    loop {
        let message = client.receive().await?;
        if message["method"] == "notifications/subscriptions/acknowledged" {
            break;
        }
        if message["id"] == id {
            return Err(format!("listen answered: {message}"));
        }
    }
    client
        .write(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}}),
        )
        .await
}
