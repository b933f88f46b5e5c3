// The MCP SDK by itself, no HTTP server, no Fastify, none of our code: `createMcpHandler(...).fetch` answering the
// bench's tools/call (2026-07-28, stateless) with a constant result (bare-mcp.ts), in a loop, one call at a time
// and ten at a time. Beside it, the same loop over the web `Request` and `Response` alone (a handler that answers
// the constant result itself), to show what is the SDK's and what the web objects'. Per call: CPU µs, and the
// garbage collector's pauses (scavenges, mark-compacts), from perf_hooks. Made to be run as is, or with the SDK
// alone, by whoever looks into the SDK's per-request cost (bench/README.md, "Where things stand").
//
//   node bench/sdk-alone.ts                   # CALLS=20000 by default
//   node --trace-gc bench/sdk-alone.ts        # each scavenge, with what it kept
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { createBareMcpHandler } from './bare-mcp.ts';
import { concurrently } from './concurrently.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from './mcp-call.ts';

const calls = Number(process.env.CALLS ?? 20_000);
const headers = GET_SECTION_HEADERS;
const body = JSON.stringify(getSectionMessage('0195f0a0-0000-7000-8000-000000000000'));

const sdk = createBareMcpHandler();
const constant = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '{}' }], structuredContent: {} } });
type Call = () => Promise<string>;
const loops: Record<string, Call> = {
  // What /mcp hands the SDK: a web Request without a body, and the message already parsed (src/mcp/web-exchange.ts).
  'the SDK': async () => (await sdk.fetch(new Request('http://bench.localhost/mcp', { method: 'POST', headers }), { parsedBody: JSON.parse(body) })).text(),
  'web Request and Response alone': async () => {
    new Request('http://bench.localhost/mcp', { method: 'POST', headers });
    JSON.parse(body);
    return new Response(constant, { headers: { 'content-type': 'application/json' } }).text();
  },
};

const pauses = { minor: 0, major: 0, scavenges: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      pauses.minor += entry.duration;
      pauses.scavenges += 1;
    } else pauses.major += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

process.stdout.write(`Node ${process.version}, ${calls} calls per line, after a warm-up of ${calls / 4}\n`);
for (const concurrency of [1, 10]) {
  for (const [name, call] of Object.entries(loops)) {
    await concurrently(calls / 4, concurrency, call);
    await new Promise((resolve) => setTimeout(resolve, 50));
    Object.assign(pauses, { minor: 0, major: 0, scavenges: 0 });
    const before = process.cpuUsage();
    await concurrently(calls, concurrency, call);
    const used = process.cpuUsage(before);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const perCall = (ms: number) => ((ms * 1000) / calls).toFixed(1);
    process.stdout.write(
      `${name.padEnd(32)} ${String(concurrency).padStart(2)} at a time: ${((used.user + used.system) / calls).toFixed(1).padStart(6)} µs CPU per call; ` +
        `scavenges ${perCall(pauses.minor)} µs per call (${pauses.scavenges}, ${(pauses.scavenges ? pauses.minor / pauses.scavenges : 0).toFixed(1)} ms each), mark-compact ${perCall(pauses.major)} µs per call\n`,
    );
  }
}
await sdk.close();
