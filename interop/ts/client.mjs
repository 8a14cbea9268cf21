// An MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk), the peer of
// Ferry's server in the interop matrix. It connects, runs the matrix's checks against
// Ferry's reference server and prints one JSON verdict per check on stdout
// (`{"check": ..., "ok": ..., "detail": ...}`); it exits 1 if any check failed.
//
//   node client.mjs stdio COMMAND [ARGS...]   spawn a stdio server
//   node client.mjs http URL                  a Streamable HTTP server
//   node client.mjs sse URL                   a 2024-11-05 HTTP+SSE server (its GET URL)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, ...target] = process.argv.slice(2);
const transports = {
  stdio: () => new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" }),
  http: () => new StreamableHTTPClientTransport(new URL(target[0])),
  sse: () => new SSEClientTransport(new URL(target[0])),
};
const transport = transports[mode]?.();
if (!transport) {
  console.error("usage: node client.mjs stdio COMMAND [ARGS...] | http URL | sse URL");
  process.exit(2);
}

const client = new Client(
  { name: "ts-sdk-interop-client", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
  role: "assistant",
  content: { type: "text", text: `canned answer to ${request.params.messages[0].content.text}` },
  model: "ts-sdk-client",
  stopReason: "endTurn",
}));
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { name: "Ada", colour: "teal" },
}));
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: "file:///interop-root", name: "interop" }],
}));

let failed = false;
function verdict(check, ok, detail) {
  if (!ok) failed = true;
  process.stdout.write(JSON.stringify({ check, ok, detail }) + "\n");
}
async function check(name, body) {
  try {
    const [ok, detail] = await body();
    verdict(name, ok, detail);
  } catch (error) {
    verdict(name, false, String(error?.stack ?? error));
  }
}
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

// What arrives on the wire, seen before the SDK handles it: the revision `initialize`
// agreed, and progress notifications. (The SDK hands notifications to their handlers a
// microtask later but settles responses at once, so when the last progress notification
// and the response arrive in one read — stdio — `onprogress` misses it: the progress check
// counts the wire and requires `onprogress` to have seen a prefix of it.)
let negotiated;
const wireProgress = [];
const start = transport.start.bind(transport);
transport.start = async () => {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.result?.protocolVersion) negotiated = message.result.protocolVersion;
    if (message.method === "notifications/progress") wireProgress.push(message.params);
    deliver(message, extra);
  };
  return start();
};

await client.connect(transport);
const server = client.getServerVersion();
verdict("connect", negotiated === "2025-11-25", `protocol ${negotiated} with ${server?.name}`);

await check("tools", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  const missing = ["echo", "add", "countdown", "sample"].filter((n) => !names.includes(n));
  const echoed = text(await client.callTool({ name: "echo", arguments: { text: "hello" } }));
  return [missing.length === 0 && echoed === "hello", `missing ${missing}; echo gave ${echoed}`];
});

await check("structured_output", async () => {
  const result = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  return [result.structuredContent?.sum === 42, JSON.stringify(result.structuredContent)];
});

await check("resources", async () => {
  const { resources } = await client.listResources();
  const read = await client.readResource({ uri: "server://info" });
  const ok = resources.some((r) => r.uri === "server://info") && read.contents[0]?.uri === "server://info";
  return [ok, read.contents[0]?.text?.slice(0, 80)];
});

await check("prompts", async () => {
  const prompt = await client.getPrompt({ name: "code_review", arguments: { code: "x = 1", language: "rust" } });
  const body = JSON.stringify(prompt.messages);
  return [body.includes("x = 1") && body.includes("rust"), body.slice(0, 120)];
});

await check("progress", async () => {
  const seen = [];
  wireProgress.length = 0;
  const result = await client.callTool({ name: "countdown", arguments: { steps: 3, interval_ms: 10 } }, undefined, {
    onprogress: (p) => seen.push(p.progress),
  });
  const wire = wireProgress.map((p) => p.progress);
  const ok =
    JSON.stringify(wire) === "[1,2,3]" &&
    seen.length >= 1 &&
    seen.every((p, i) => p === wire[i]) &&
    text(result) === "counted 3 steps";
  return [ok, `on the wire ${JSON.stringify(wire)}, onprogress ${JSON.stringify(seen)}; ${text(result)}`];
});

await check("cancellation", async () => {
  const abort = new AbortController();
  let progressed = 0;
  const call = client.callTool({ name: "countdown", arguments: { steps: 1000, interval_ms: 50 } }, undefined, {
    signal: abort.signal,
    onprogress: () => {
      progressed += 1;
      abort.abort("the matrix cancels");
    },
  });
  const outcome = await call.then(
    (result) => `a result: ${JSON.stringify(result)}`,
    (error) => (abort.signal.aborted ? "cancelled" : `an error: ${error}`),
  );
  // The server's tool sees the cancellation (Ferry's reference server counts them in
  // server://info; the notification is on its way, so ask until it has arrived).
  let seen = 0;
  for (let attempt = 0; attempt < 200 && seen < 1; attempt++) {
    const info = await client.readResource({ uri: "server://info" });
    seen = JSON.parse(info.contents[0].text).countdowns_cancelled ?? 0;
    if (seen < 1) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // The connection carries on after the cancellation.
  const after = text(await client.callTool({ name: "echo", arguments: { text: "still here" } }));
  const ok = outcome === "cancelled" && progressed >= 1 && seen >= 1 && after === "still here";
  return [ok, `${outcome}; the server saw ${seen} cancellation(s); then ${after}`];
});

await check("sampling", async () => {
  const result = await client.callTool({ name: "sample", arguments: { prompt: "ping?" } });
  const got = text(result);
  return [got.includes("ts-sdk-client") && got.includes("canned answer to ping?"), got];
});

await check("elicitation", async () => {
  const result = await client.callTool({ name: "elicit", arguments: { message: "Who are you?" } });
  const got = text(result);
  return [got.includes("Ada") && got.includes("teal"), got];
});

await check("roots", async () => {
  const got = text(await client.callTool({ name: "roots", arguments: {} }));
  return [got.includes("file:///interop-root"), got];
});

await client.close();
process.exit(failed ? 1 : 0);
