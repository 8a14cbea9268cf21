// A stdio server for the probe tests: `node server.js MODE LOG [DELAY_MS]`. Every message
// it reads is appended to LOG as `<ms since epoch> <method, or "response">`.
//
// MODE `silent`: a session-era server that ignores what it does not know, `server/discover`
// included (no answer at all), and answers `initialize`, `ping` and `tools/list`.
// MODE `slow-session`: a session-era server slow to answer its first message: it refuses
// `server/discover` (-32601) DELAY_MS after reading it, logging `answered server/discover`
// as it does, then serves as `silent` does.
// MODE `slow-stateless`: a stateless-era server slow to answer its first message: it
// answers `server/discover` DELAY_MS after reading it (logged as above), then refuses
// `initialize` (the connection serves 2026-07-28 now, as the Python SDK does), and answers
// `tools/list`.
'use strict';
const fs = require('fs');
const readline = require('readline');

const [mode, log, delay] = process.argv.slice(2);
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const tools = { tools: [{ name: 'hello', inputSchema: { type: 'object' } }] };
let queue = Promise.resolve();

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  fs.appendFileSync(log, `${Date.now()} ${message.method || 'response'}\n`);
  // One message at a time, in order, as a single-threaded server reads them.
  queue = queue.then(() => handle(message));
});

async function handle({ id, method }) {
  if (id === undefined || method === undefined) return;
  const result = (result) => send({ jsonrpc: '2.0', id, result });
  const error = (code, text) => send({ jsonrpc: '2.0', id, error: { code, message: text } });
  const answered = () => fs.appendFileSync(log, `${Date.now()} answered ${method}\n`);
  const slowly = () => new Promise((done) => setTimeout(done, Number(delay || 0)));
  if (mode === 'slow-session' && method === 'server/discover') {
    await slowly();
    error(-32601, 'Method not found');
    answered();
    return;
  }
  if (mode === 'silent' || mode === 'slow-session') {
    if (method === 'initialize') {
      result({
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'silent', version: '1' },
      });
    } else if (method === 'ping') {
      result({});
    } else if (method === 'tools/list') {
      result(tools);
    }
    return;
  }
  if (method === 'server/discover') {
    await slowly();
    result({
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'slow-stateless', version: '1' } },
    });
    answered();
  } else if (method === 'initialize') {
    error(-32022, 'connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted');
  } else if (method === 'tools/list') {
    result(tools);
  } else {
    error(-32601, 'Method not found');
  }
}
