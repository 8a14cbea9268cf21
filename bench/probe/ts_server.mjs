// A minimal server on the official TypeScript SDK over stdio, as its README shows:
// McpServer, one tool with a zod schema, StdioServerTransport.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod/v4';

const server = new McpServer({ name: 'ts-minimal', version: '1.0.0' });
server.registerTool(
    'echo',
    { description: 'Echo the text back', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] })
);
await server.connect(new StdioServerTransport());
