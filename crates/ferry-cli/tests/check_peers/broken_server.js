// A deliberately non-conformant MCP server for `ferry check`'s tests (Node.js, stdio).
// It gets the handshake, ping and parse errors right, and breaks five MUSTs:
//  - unknown methods are answered with an empty result instead of error -32601;
//  - it writes a line that is not JSON to stdout after `initialized`;
//  - it declares no capability, yet answers tools/list;
//  - after `initialized` it sends tools/list_changed (tools.listChanged is not declared)
//    and a notification with an id.
"use strict";
const readline = require("node:readline");

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    return;
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    send({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } });
    return;
  }
  const { id, method, params } = message;
  if (id === undefined) {
    if (method === "notifications/initialized") {
      process.stdout.write("broken server: initialized\n");
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      send({ jsonrpc: "2.0", id: "n1", method: "notifications/message", params: { level: "error", data: "x" } });
    }
    return; // notifications and responses
  }
  switch (method) {
    case "initialize":
      send({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: (params && params.protocolVersion) === "2025-06-18" ? "2025-06-18" : "2025-06-18",
          capabilities: {},
          serverInfo: { name: "broken", version: "0.0.1" },
        },
      });
      return;
    case "tools/list":
      send({ jsonrpc: "2.0", id, result: { tools: [] } });
      return;
    default:
      send({ jsonrpc: "2.0", id, result: {} });
  }
});
