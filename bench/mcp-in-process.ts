// The MCP read without sockets: server CPU per call through app.inject for `/mcp tools/call get_section`, the
// SDK alone (bare-mcp.ts) and the REST read, in one process on a fresh SQLite file (or PostgreSQL: `postgres` as
// its argument), CONCURRENCY at a time (default 1), 5 interleaved rounds of BENCH_CALLS calls each (default
// 1,000), the median printed (inject-harness.ts). `mcp − bare` is our share of a tool call: the goal (issue 23)
// is at most one REST read. Ten at a time shows what the SDK's garbage costs the calls in flight beside it
// (bench/README.md, "Where things stand").
//
//   node bench/mcp-in-process.ts [sqlite|postgres]
//   CONCURRENCY=10 node bench/mcp-in-process.ts
import { bootInjectHarness, measureInjected, type InjectCall } from './inject-harness.ts';
import { BARE_MCP_PATH, registerBareMcp } from './bare-mcp.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from './mcp-call.ts';

const { app, fixture: f, close } = await bootInjectHarness(process.argv[2] ?? 'sqlite', registerBareMcp);

const headers = { host: f.host, authorization: `Bearer ${f.apiKey}`, ...GET_SECTION_HEADERS };
const payload = JSON.stringify(getSectionMessage(f.sectionId));
const calls: Record<string, InjectCall> = {
  rest: () => app.inject({ method: 'GET', url: `/api/v1/sections/${f.sectionId}`, headers: { host: f.host, authorization: `Bearer ${f.apiKey}` } }),
  mcp: () => app.inject({ method: 'POST', url: '/mcp', headers, payload }),
  bare: () => app.inject({ method: 'POST', url: BARE_MCP_PATH, headers: { ...headers, authorization: '' }, payload }),
};

const n = Number(process.env.BENCH_CALLS ?? 1000);
const { rest, mcp, bare } = await measureInjected(calls, { count: n, concurrency: Number(process.env.CONCURRENCY ?? 1), warmUp: 200 });
process.stdout.write(`server µs per call (median of 5 rounds of ${n}): REST read ${rest.toFixed(0)}, MCP call ${mcp.toFixed(0)}, SDK alone ${bare.toFixed(0)}; MCP − SDK alone ${(mcp - bare).toFixed(0)} (${((mcp - bare) / rest).toFixed(2)} × the read)\n`);
await close();
