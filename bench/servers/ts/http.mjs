// The echo server on the official TypeScript SDK over Streamable HTTP, with sessions, as
// its simpleStreamableHttp.ts example does (minus OAuth, logging and the event store):
// createMcpExpressApp, one StreamableHTTPServerTransport and McpServer per session.
// Usage: node http.mjs PORT
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

function getServer() {
    const server = new McpServer({ name: 'ts-echo', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Echo the text back', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    return server;
}

const transports = new Map();
const app = createMcpExpressApp();

app.post('/mcp', async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
        if (sessionId || !isInitializeRequest(req.body)) {
            res.status(sessionId ? 404 : 400).json({
                jsonrpc: '2.0',
                error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
                id: null
            });
            return;
        }
        transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: id => transports.set(id, transport)
        });
        transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
        await getServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
});

const session = async (req, res) => {
    const transport = transports.get(req.headers['mcp-session-id']);
    if (!transport) {
        res.status(400).send('Invalid or missing session ID');
        return;
    }
    await transport.handleRequest(req, res);
};
app.get('/mcp', session);
app.delete('/mcp', session);

app.listen(Number(process.argv[2] ?? 3000), '127.0.0.1');
