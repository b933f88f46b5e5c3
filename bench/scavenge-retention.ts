// What outlives a scavenge though nothing refers to it any more: per call, the KB that V8's young-generation
// collections promote to the old generation, where only a full collection frees them (every line's garbage is
// freed by one; bench/README.md, "Where things stand"). One call at a time, nothing in flight: a line above
// zero is garbage kept alive by a dead object in the old generation. First the SDK and what is under it, by
// themselves (made to be handed upstream with its figures); then the app on a fresh SQLite file, over one
// keep-alive socket: /healthz, the REST read, /mcp tools/call and the SDK alone behind Fastify (bare-mcp.ts).
//
//   node --expose-gc bench/scavenge-retention.ts
import net from 'node:net';
import v8 from 'node:v8';
import * as z from 'zod/v4';
import { PerRequestHTTPServerTransport, Server, classifyInboundRequest, isJSONRPCResultResponse } from '@modelcontextprotocol/server';
import { BARE_MCP_PATH, createBareMcpHandler, registerBareMcp } from './bare-mcp.ts';
import { bootInjectHarness } from './inject-harness.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from './mcp-call.ts';

const exposedGc = (globalThis as { gc?: (options?: object) => void }).gc;
if (!exposedGc) throw new Error('run it as node --expose-gc bench/scavenge-retention.ts');
const gc = exposedGc;
const oldSpaceKb = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size / 1024;

const message = (id = '0195f0a0-0000-7000-8000-000000000000') => getSectionMessage(id);
const headers = GET_SECTION_HEADERS;
const classified = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', mcpNameHeader: 'get_section', body: message() });
if (classified.kind !== 'modern') throw new Error('the bench message is not a 2026-07-28 request');
const serverWithTool = () => {
  const server = new Server({ name: 'bench', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/call', async () => ({ content: [{ type: 'text', text: '{}' }] }));
  return server;
};
const sdk = createBareMcpHandler();
const literal = z.object({ jsonrpc: z.literal('2.0'), result: z.object({}) });
const withGetter = (payload: unknown) => {
  let error: unknown;
  return { success: false, get error() { return (error ??= payload); } };
};
const withMethod = (payload: unknown) => ({ success: false, error: () => payload });
/** The same lazy `error`, on a prototype: what zod's own comment calls the faster alternative. */
class Failure {
  readonly success = false;
  #payload: unknown;
  constructor(payload: unknown) {
    this.#payload = payload;
  }
  get error() {
    return this.#payload;
  }
}

const cases: Record<string, () => unknown> = {
  // The JavaScript underneath: an object literal with a getter whose closure is new on each call.
  'object literal with a getter': () => withGetter(new Array(100).fill(1)).success,
  'object literal with a method (control)': () => withMethod(new Array(100).fill(1)).success,
  'a class with the getter on its prototype (control)': () => new Failure(new Array(100).fill(1)).success,
  // zod 4.6's safeParse answers a failure with such a literal (v4/core/parse.js, failure()).
  'zod safeParse that fails': () => literal.safeParse(message()).success,
  'zod safeParse that passes (control)': () => literal.safeParse({ jsonrpc: '2.0', result: {} }).success,
  // The SDK tests each inbound message against the response schemas first: two failing parses, twice a call.
  "the SDK's isJSONRPCResultResponse(request)": () => isJSONRPCResultResponse(message()),
  'the SDK: Server made and connected': async () => serverWithTool().connect(new PerRequestHTTPServerTransport({ classification: classified.classification })),
  'the SDK: createMcpHandler().fetch, tools/call': async () =>
    (await sdk.fetch(new Request('http://bench.localhost/mcp', { method: 'POST', headers }), { parsedBody: message() })).text(),
};

/** KB per call that two scavenges after `count` calls promote, after a warm-up and a full collection. */
async function promotedPerCall(call: () => unknown, count: number): Promise<number> {
  for (let i = 0; i < count * 4; i++) await call();
  gc();
  gc({ type: 'minor' });
  const before = oldSpaceKb();
  for (let i = 0; i < count; i++) await call();
  await new Promise((resolve) => setTimeout(resolve, 20));
  // Two: the first moves the survivors within the young generation, the second promotes them.
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  const promoted = (oldSpaceKb() - before) / count;
  gc();
  return promoted;
}

const line = (name: string, kb: number) => process.stdout.write(`${name.padEnd(52)} ${kb.toFixed(2).padStart(6)} KB\n`);
process.stdout.write(`Node ${process.version}: KB per call promoted by scavenges, one call at a time\n`);
for (const [name, call] of Object.entries(cases)) line(name, await promotedPerCall(call, 500));
await sdk.close();

// The app, over a socket: the client is a bare socket writing the same bytes each time, so that what is
// promoted is the server's.
const { app, fixture: f, close } = await bootInjectHarness('sqlite', registerBareMcp);
const { port } = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
const mcpRequest = (path: string, authorization: string) => {
  const body = JSON.stringify(message(f.sectionId));
  const head = Object.entries({ host: f.host, ...(authorization ? { authorization } : {}), ...headers, 'content-length': String(Buffer.byteLength(body)) }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST ${path} HTTP/1.1\r\n${head.join('')}\r\n${body}`;
};
const requests: Record<string, Buffer> = {
  'GET /healthz': Buffer.from(`GET /healthz HTTP/1.1\r\nhost: ${f.host}\r\n\r\n`),
  'GET /api/v1/sections/{id}': Buffer.from(`GET /api/v1/sections/${f.sectionId} HTTP/1.1\r\nhost: ${f.host}\r\nauthorization: Bearer ${f.apiKey}\r\n\r\n`),
  'POST /mcp tools/call get_section': Buffer.from(mcpRequest('/mcp', `Bearer ${f.apiKey}`)),
  'the same to the SDK alone (bare-mcp.ts)': Buffer.from(mcpRequest(BARE_MCP_PATH, '')),
};
const socket = net.connect(Number(port), '127.0.0.1');
await new Promise((resolve) => socket.once('connect', resolve));
let received = '';
let answered: (() => void) | undefined;
socket.on('data', (chunk: Buffer) => {
  received += chunk.toString('latin1');
  const headEnd = received.indexOf('\r\n\r\n');
  if (headEnd < 0) return;
  // Every answer here says its length (the SDK's too: src/mcp/web-exchange.ts).
  const length = /\r\ncontent-length: (\d+)\r\n/i.exec(received.slice(0, headEnd + 2));
  if (!received.startsWith('HTTP/1.1 200') || !length) throw new Error(`answered: ${received.slice(0, 300)}`);
  if (received.length < headEnd + 4 + Number(length[1])) return;
  received = '';
  answered?.();
});
const send = (bytes: Buffer) =>
  new Promise<void>((resolve) => {
    answered = resolve;
    socket.write(bytes);
  });
process.stdout.write(`\nThe app on SQLite, over one socket, one request at a time\n`);
for (const [name, bytes] of Object.entries(requests)) line(name, await promotedPerCall(() => send(bytes), 300));
socket.destroy();
await close();
