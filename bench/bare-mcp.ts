// The MCP baseline (issue 12): the official SDK alone, served the way /mcp serves it (createMcpHandler, a
// low-level Server made per request, src/mcp/web-exchange.ts between it and a Fastify route), with
// one tool that answers a constant result: no tenancy, no credential, no settings, no REST dispatch, no
// database. What it costs per request is the floor any tools/call served through the SDK pays on this
// machine, to set beside the REST read and the real `mcp-read`.
import type { FastifyInstance } from 'fastify';
import { createMcpHandler, Server, type CallToolResult } from '@modelcontextprotocol/server';
import { webRequestOf, writeWebResponse } from '../src/mcp/web-exchange.ts';

export const BARE_MCP_PATH = '/bench/mcp';

/** A result shaped like get_section's: the section as text and as structuredContent. */
const section = { id: '0195f0a0-0000-7000-8000-000000000000', course_id: '0195f0a0-0000-7000-8000-000000000001', title: 'Section', position: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(section) }], structuredContent: section };

/** The SDK's handler with a low-level Server made per request, as /mcp makes it, and one constant tool. */
export function createBareMcpHandler() {
  return createMcpHandler(() => {
    const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler('tools/list', async () => ({ tools: [] }));
    server.setRequestHandler('tools/call', async () => result);
    return server;
  });
}

export function registerBareMcp(app: FastifyInstance): void {
  const handler = createBareMcpHandler();
  app.addHook('onClose', async () => handler.close());
  app.post(BARE_MCP_PATH, async (request, reply) => {
    const abort = new AbortController();
    const response = await handler.fetch(webRequestOf(request, abort.signal), { parsedBody: request.body });
    reply.hijack();
    await writeWebResponse(response, reply.raw, abort);
  });
}
