// An MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk), the peer of
// Ferry's client in the interop matrix. It offers what the matrix's checks need, under the
// same names as Ferry's reference server: `echo`, `add` (structured output), `countdown`
// (progress; cancellable), `cancellations` (how many calls it saw cancelled), `sample`
// (asks the client's model), `elicit` (asks the user), `roots` (asks for the client's
// roots), the resource `server://info` and the prompt `code_review`.
//
//   node server.mjs stdio          newline-delimited JSON-RPC on stdin/stdout
//   node server.mjs http [PORT]    Streamable HTTP on 127.0.0.1 (PORT 0 or absent: any);
//                                  prints `listening http://127.0.0.1:PORT/mcp` on stdout
//   node server.mjs sse [PORT]     the 2024-11-05 HTTP+SSE transport: GET /sse, POST
//                                  /messages; prints `listening http://127.0.0.1:PORT/sse`
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

let cancelled = 0;

function build() {
  const server = new McpServer({ name: "ts-sdk-interop-server", version: "1.0.0" });

  server.registerTool(
    "echo",
    { description: "Send the text back.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );

  server.registerTool(
    "add",
    {
      description: "Add two numbers (structured output).",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => {
      const result = { sum: a + b };
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    },
  );

  server.registerTool(
    "countdown",
    {
      description: "Count down, reporting progress at each step; honours cancellation.",
      inputSchema: { steps: z.number().int(), interval_ms: z.number().int().optional() },
    },
    async ({ steps, interval_ms }, extra) => {
      const token = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        const aborted = await new Promise((resolve) => {
          if (extra.signal.aborted) return resolve(true);
          const timer = setTimeout(() => resolve(false), interval_ms ?? 100);
          extra.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        if (aborted) {
          cancelled += 1;
          return { content: [{ type: "text", text: "cancelled" }], isError: true };
        }
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: step, total: steps, message: `step ${step} of ${steps}` },
          });
        }
      }
      return { content: [{ type: "text", text: `counted ${steps} steps` }] };
    },
  );

  server.registerTool(
    "cancellations",
    { description: "How many countdowns saw their cancellation.", inputSchema: {} },
    async () => ({ content: [{ type: "text", text: String(cancelled) }], structuredContent: { cancelled } }),
  );

  server.registerTool(
    "sample",
    { description: "Ask the client's model a question (sampling).", inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      const result = await extra.sendRequest(
        {
          method: "sampling/createMessage",
          params: { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 50 },
        },
        CreateMessageResultSchema,
      );
      const content = Array.isArray(result.content) ? result.content : [result.content];
      const text = content.filter((c) => c.type === "text").map((c) => c.text).join("");
      return { content: [{ type: "text", text: `${result.model} says: ${text}` }] };
    },
  );

  server.registerTool(
    "elicit",
    { description: "Ask the user for their name and favourite colour (form).", inputSchema: { message: z.string() } },
    async ({ message }, extra) => {
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message,
            requestedSchema: {
              type: "object",
              properties: { name: { type: "string" }, colour: { type: "string" } },
              required: ["name"],
            },
          },
        },
        ElicitResultSchema,
      );
      const text =
        answer.action === "accept"
          ? `accepted: name=${answer.content?.name}, colour=${answer.content?.colour}`
          : answer.action;
      return { content: [{ type: "text", text }] };
    },
  );

  server.registerTool("roots", { description: "List the client's roots.", inputSchema: {} }, async (_args, extra) => {
    const { roots } = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
    const lines = roots.map((r) => (r.name ? `${r.name}: ${r.uri}` : r.uri));
    return { content: [{ type: "text", text: `${roots.length} roots\n${lines.join("\n")}` }] };
  });

  server.registerResource(
    "info",
    "server://info",
    { title: "Server information", mimeType: "application/json" },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ name: "ts-sdk-interop-server" }) }],
    }),
  );

  server.registerPrompt(
    "code_review",
    {
      description: "Ask for a review of a piece of code.",
      argsSchema: { code: z.string(), language: z.string().optional() },
    },
    ({ code, language }) => ({
      messages: [
        { role: "user", content: { type: "text", text: `Please review this ${language ?? "the code"}:\n\n${code}` } },
      ],
    }),
  );

  return server;
}

/// Serve `handle(req, res, body)` on 127.0.0.1 and announce `path`'s URL.
function listen(port, path, handle) {
  const http = createServer(async (req, res) => {
    try {
      let body;
      if (req.method === "POST") {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      }
      await handle(req, res, body);
    } catch (error) {
      console.error(error);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  http.listen(port, "127.0.0.1", () => {
    process.stdout.write(`listening http://127.0.0.1:${http.address().port}${path}\n`);
  });
}

function serveHttp(port) {
  const sessions = new Map();
  listen(port, "/mcp", async (req, res, body) => {
    if (!req.url.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport && !id && body && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await build().connect(transport);
    }
    if (!transport) {
      res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no such session" } }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
}

function serveSse(port) {
  const sessions = new Map();
  listen(port, "/sse", async (req, res, body) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      res.on("close", () => sessions.delete(transport.sessionId));
      await build().connect(transport);
    } else if (req.method === "POST" && url.pathname === "/messages") {
      const transport = sessions.get(url.searchParams.get("sessionId"));
      if (!transport) {
        res.writeHead(404).end("no such session");
        return;
      }
      await transport.handlePostMessage(req, res, body);
    } else {
      res.writeHead(req.url.startsWith("/sse") ? 405 : 404).end();
    }
  });
}

const [mode, port] = process.argv.slice(2);
if (mode === "stdio") {
  await build().connect(new StdioServerTransport());
} else if (mode === "http") {
  serveHttp(Number(port ?? 0));
} else if (mode === "sse") {
  serveSse(Number(port ?? 0));
} else {
  console.error("usage: node server.mjs stdio | http [PORT] | sse [PORT]");
  process.exit(2);
}
