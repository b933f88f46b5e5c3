// How many promises a request makes, and where: the spread PATCH through app.inject, ten at a time, on a fresh
// SQLite file or PostgreSQL (inject-harness.ts), counted with an async_hooks `init` hook over 2,000 PATCHes after a
// warm-up; then the creation sites of 200 more, by their first three frames. Each promise is at least one microtask
// hop and an allocation: on PostgreSQL a PATCH makes about 78 (12 on SQLite), most of them Kysely's transaction
// and its executor wrapped around the one statement the request sends (bench/README.md, 2026-11-30 third session).
// The harness's own (light-my-request) are among them: about 3. REQUEST=mcp counts an MCP `tools/call get_section`
// instead (the SDK's promises among them), REQUEST=bare-mcp the same call to the SDK alone (bare-mcp.ts),
// REQUEST=read the REST read.
//
//   node bench/promises-per-request.ts sqlite|postgres [sites to print, default 40]
//   REQUEST=mcp node bench/promises-per-request.ts sqlite
import { createHook } from 'node:async_hooks';
import { bootInjectHarness, measureInjected, spreadPatch, type InjectCall } from './inject-harness.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from './mcp-call.ts';
import { BARE_MCP_PATH, registerBareMcp } from './bare-mcp.ts';

const dialect = process.argv[2] ?? 'sqlite';
const shown = Number(process.argv[3] ?? 40);
const kind = process.env.REQUEST ?? 'patch';
const { app, fixture, close } = await bootInjectHarness(dialect, registerBareMcp);
const auth = { host: fixture.host, authorization: `Bearer ${fixture.apiKey}` };
const mcpPayload = JSON.stringify(getSectionMessage(fixture.sectionId));
const requests: Record<string, InjectCall> = {
  patch: spreadPatch(app, fixture),
  read: () => app.inject({ method: 'GET', url: `/api/v1/sections/${fixture.sectionId}`, headers: auth }),
  mcp: () => app.inject({ method: 'POST', url: '/mcp', headers: { ...auth, ...GET_SECTION_HEADERS }, payload: mcpPayload }),
  'bare-mcp': () => app.inject({ method: 'POST', url: BARE_MCP_PATH, headers: { host: fixture.host, ...GET_SECTION_HEADERS }, payload: mcpPayload }),
};
const patch = requests[kind];
if (patch === undefined) throw new Error(`REQUEST must be one of ${Object.keys(requests).join(', ')}`);
await measureInjected({ [kind]: patch }, { count: 2000, concurrency: 10, warmUp: 300 });

let made = 0;
let sampling = false;
const sites = new Map<string, number>();
const siteOf = (stack: string) =>
  stack
    .split('\n')
    .slice(2)
    .filter((line) => !line.includes('node:internal/async_hooks') && !line.includes('promises-per-request'))
    .slice(0, 3)
    .map((line) => line.trim().replace(/^at /, '').replace(`file://${process.cwd()}/`, '').replace(`${process.cwd()}/`, ''))
    .join(' < ');
const hook = createHook({
  init(_id, type) {
    if (type !== 'PROMISE') return;
    made++;
    if (!sampling) return;
    const site = siteOf(new Error().stack ?? '');
    sites.set(site, (sites.get(site) ?? 0) + 1);
  },
});

/** `count` PATCHes, ten at a time. */
async function patches(count: number): Promise<void> {
  let started = 0;
  await Promise.all(Array.from({ length: 10 }, async () => { while (started++ < count) await patch(); }));
}

hook.enable();
await patches(2000);
const perPatch = made / 2000;
sampling = true;
await patches(200);
hook.disable();
process.stdout.write(`${dialect}: ${perPatch.toFixed(1)} promises per ${kind} (app.inject, ten at a time)\n`);
for (const [site, n] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, shown)) process.stdout.write(`${(n / 200).toFixed(2).padStart(6)}  ${site}\n`);
await close();
