import { StatementSync } from 'node:sqlite';
import { bootInjectHarness } from './inject-harness.ts';
import { registerBareMcp } from './bare-mcp.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from './mcp-call.ts';
const seen: string[] = [];
for (const m of ['all', 'get', 'run', 'iterate'] as const) {
  const orig = (StatementSync.prototype as any)[m];
  (StatementSync.prototype as any)[m] = function (this: StatementSync, ...a: unknown[]) { seen.push(m + ' ' + this.sourceSQL.slice(0, 150)); return orig.apply(this, a); };
}
const { app, fixture: f, close } = await bootInjectHarness('sqlite', registerBareMcp);
const headers = { host: f.host, authorization: `Bearer ${f.apiKey}`, ...GET_SECTION_HEADERS };
const payload = JSON.stringify(getSectionMessage(f.sectionId));
for (let i = 0; i < 5; i++) await app.inject({ method: 'POST', url: '/mcp', headers, payload });
for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url: `/api/v1/sections/${f.sectionId}`, headers: { host: f.host, authorization: `Bearer ${f.apiKey}` } });
seen.length = 0;
const r = await app.inject({ method: 'POST', url: '/mcp', headers, payload });
console.log('MCP', r.statusCode, r.body.length, r.headers['content-type']); console.log(seen.join('\n')); seen.length = 0;
const r2 = await app.inject({ method: 'GET', url: `/api/v1/sections/${f.sectionId}`, headers: { host: f.host, authorization: `Bearer ${f.apiKey}` } });
console.log('REST', r2.statusCode, r2.body.length); console.log(seen.join('\n'));
console.log(r.body.slice(0, 800));
await close();
