// A deliberately non-conformant Streamable HTTP MCP server for `ferry check`'s tests
// (Node.js, session era 2025-06-18 only, on 127.0.0.1, port 0; prints its URL on stdout).
// It gets the handshake, ping, tools and progress right, and breaks these rules:
//  - a foreign Origin is served (MUST be 403);
//  - an unknown session id is served (MUST be 404), and DELETE ends nothing;
//  - the Accept header is ignored (SHOULD be 406);
//  - resuming a stream with Last-Event-ID replays it from the start (repeats events), and
//    adds a progress notification of another request (another stream's message);
//  - initialize 2024-11-05 is answered with 2025-03-26, which it does not serve either;
//  - it answers resources/subscribe although it does not declare resources.subscribe;
//  - its `chatty` tool logs at every level whatever logging/setLevel said.
"use strict";
const http = require("node:http");

const SESSION = "broken-session";
const sse = (res) => res.writeHead(200, { "content-type": "text/event-stream" });
const event = (res, id, message) => res.write(`id: ${id}\ndata: ${JSON.stringify(message)}\n\n`);
const json = (res, status, message, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(message));
};
// The events of the last tools/call stream, for replay.
let last = [];

function call(res, id, token) {
  const events = [1, 2, 3].map((n) => ({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: token, progress: n, total: 3 },
  }));
  events.push({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } });
  last = events;
  sse(res);
  let n = 0;
  const next = () => {
    if (res.destroyed) return;
    if (n === events.length) return res.end();
    event(res, `e${n + 1}`, events[n]);
    n += 1;
    setTimeout(next, 100);
  };
  next();
}

function chatty(res, id) {
  sse(res);
  for (const level of ["debug", "info", "warning", "error"]) {
    const log = { jsonrpc: "2.0", method: "notifications/message", params: { level, data: level } };
    res.write(`data: ${JSON.stringify(log)}\n\n`);
  }
  const done = { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "logged" }] } };
  res.end(`data: ${JSON.stringify(done)}\n\n`);
}

function answer(res, message) {
  const { id, method, params } = message;
  if (id === undefined || method === undefined) {
    res.writeHead(202); // notifications and responses
    return res.end();
  }
  const result = (result, headers) => json(res, 200, { jsonrpc: "2.0", id, result }, headers);
  switch (method) {
    case "initialize":
      if (params && params.protocolVersion === "2024-11-05") {
        return result({ protocolVersion: "2025-03-26", capabilities: {}, serverInfo: { name: "broken-http", version: "0.0.1" } });
      }
      return result(
        {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {}, logging: {}, resources: {} },
          serverInfo: { name: "broken-http", version: "0.0.1" },
        },
        { "mcp-session-id": SESSION },
      );
    case "ping":
    case "logging/setLevel":
    case "resources/subscribe":
    case "resources/unsubscribe":
      return result({});
    case "resources/list":
      return result({ resources: [{ uri: "broken://a", name: "a" }] });
    case "resources/templates/list":
      return result({ resourceTemplates: [] });
    case "resources/read":
      return result({ contents: [{ uri: "broken://a", text: "a" }] });
    case "tools/list":
      return result({
        tools: [
          { name: "count", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
          { name: "chatty", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
        ],
      });
    case "tools/call": {
      const token = params && params._meta && params._meta.progressToken;
      if (params && params.name === "chatty") return chatty(res, id);
      if (params && params.name === "count" && token !== undefined) return call(res, id, token);
      if (params && params.name === "count") return result({ content: [{ type: "text", text: "done" }] });
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32602, message: "Unknown tool" } });
    }
    default:
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  }
}

const server = http.createServer((req, res) => {
  if (req.method === "DELETE") return json(res, 200, {});
  if (req.method === "GET") {
    if (!req.headers["last-event-id"]) return json(res, 405, {});
    sse(res);
    const foreign = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "other", progress: 1 } };
    event(res, "x1", foreign);
    last.forEach((message, n) => event(res, `e${n + 1}`, message));
    return res.end();
  }
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    }
    if (Array.isArray(message) || typeof message !== "object" || message === null) {
      return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } });
    }
    if (message.method !== "initialize" && !req.headers["mcp-session-id"]) {
      return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "No session" } });
    }
    answer(res, message);
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}/mcp`);
});
