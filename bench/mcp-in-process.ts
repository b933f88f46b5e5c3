// The MCP read without sockets: server CPU per call through app.inject for `/mcp tools/call get_section`, the
// SDK alone (bare-mcp.ts) and the REST read, in one process on a fresh SQLite file, 5 interleaved rounds of
// BENCH_CALLS calls each (default 1,000), the median printed. `mcp − bare` is our share of a tool call: the
// goal (issue 23) is at most one REST read. Steadier than the socket figures on a shared machine, and runs on
// an older checkout as it is (copy the file there) to compare two commits.
//
//   node bench/mcp-in-process.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { sqliteFileFor } from '../src/runtime.ts';
import { seed } from './seed.ts';
import { BARE_MCP_PATH, registerBareMcp } from './bare-mcp.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-mcp-bench-'));
const config = loadConfig({ LOG_LEVEL: 'silent', DEV_BOOTSTRAP: 'false', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: '1000000', CONCURRENCY_LIMIT: '100000' });
const database = openDatabase({ sqliteFile: sqliteFileFor(config) });
await migrateToLatest(database.db);
const app = await buildApp({ config, database, clock: systemClock, extraRoutes: (a: FastifyInstance) => registerBareMcp(a) });
const f = await seed(app.services, database.db);

const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const headers = { host: f.host, authorization: `Bearer ${f.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_section' };
const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_section', arguments: { id: f.sectionId }, _meta: envelope } });
const calls: Record<string, () => Promise<{ statusCode: number; body: string }>> = {
  rest: () => app.inject({ method: 'GET', url: `/api/v1/sections/${f.sectionId}`, headers: { host: f.host, authorization: `Bearer ${f.apiKey}` } }),
  mcp: () => app.inject({ method: 'POST', url: '/mcp', headers, payload }),
  bare: () => app.inject({ method: 'POST', url: BARE_MCP_PATH, headers: { ...headers, authorization: '' }, payload }),
};
for (const [name, call] of Object.entries(calls)) {
  const res = await call();
  if (res.statusCode !== 200) throw new Error(`${name} answered ${res.statusCode}: ${res.body}`);
}

const n = Number(process.env.BENCH_CALLS ?? 1000);
const micros: Record<string, number[]> = { rest: [], mcp: [], bare: [] };
for (let round = 0; round < 5; round++) {
  for (const [name, call] of Object.entries(calls)) {
    for (let i = 0; i < 200; i++) await call();
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) await call();
    const used = process.cpuUsage(before);
    micros[name].push((used.user + used.system) / n);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const [rest, mcp, bare] = [median(micros.rest), median(micros.mcp), median(micros.bare)];
process.stdout.write(`server µs per call (median of 5 rounds of ${n}): REST read ${rest.toFixed(0)}, MCP call ${mcp.toFixed(0)}, SDK alone ${bare.toFixed(0)}; MCP − SDK alone ${(mcp - bare).toFixed(0)} (${((mcp - bare) / rest).toFixed(2)} × the read)\n`);
await app.close();
await database.close();
fs.rmSync(dir, { recursive: true, force: true });
