// HTTP request-path scenarios: the same server answering bare routes, an authenticated read and authenticated
// writes, so that the ratios of server CPU per request show what tenancy, auth, validation, serialisation
// and the database cost on top of Fastify itself.
import http from 'node:http';
import type { Request } from 'autocannon';
import type { Fixture } from './seed.ts';
import type { Goal, Measurement, Sample, Suite } from './measurement.ts';
import { summarise } from './measurement.ts';
import type { ServerHandle } from './server-process.ts';
import type { BenchSettings } from './settings.ts';
import { measure } from './load.ts';
import { BARE_MCP_PATH } from './bare-mcp.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from './mcp-call.ts';
import type { InProcessResult, InProcessWork } from './in-process.ts';

export interface HttpScenario {
  name: string;
  route: string;
  /** A baseline: the scenarios naming it in `baseline` are divided by it. */
  isBaseline?: boolean;
  /** The scenario this one is divided by: a bare route, or (to compare two ways of one request) another scenario. */
  baseline?: 'bare' | 'bare-patch' | 'read' | 'patch-in-process';
  goal?: Goal;
  /** What autocannon sends; a scenario measured inside the server (`inServer`) sends nothing. */
  requests?(fixture: Fixture): Request[];
  /** Instead of requests: work the server does by itself, measured there, for a floor under a goal. */
  inServer?(server: ServerHandle, settings: BenchSettings): Promise<Sample>;
  /** Runs once before the scenario is measured (e.g. the first request that later ones replay). */
  prepare?(server: ServerHandle): Promise<void>;
  /** Checks after a round that the scenario really did its work; returns what is wrong, if anything. */
  verify?(server: ServerHandle, round: Round): Promise<string | undefined>;
  /** Measured only when BENCH_SCENARIOS names it. */
  onlyWhenNamed?: boolean;
  /** Requests a second from all the connections together; as many as they can answer, when absent. */
  rate?: number;
}

/** A measured round, as a scenario's check sees it. */
interface Round {
  startedAt: string;
  /** 2xx responses the load generator received, warm-up included. */
  ok: number;
  /**
   * Requests still in flight when the warm-up and the measured window ended: autocannon drops them, the
   * server still answers (and commits) them. At most one per connection per window.
   */
  unseen: number;
}

/** Every acknowledged PATCH committed its own change, with one `section.updated` event each. */
function eventsMatch(events: number, round: Round): string | undefined {
  if (events < round.ok) return `${round.ok} PATCHes answered 2xx but only ${events} section.updated events were committed: updates were lost`;
  if (events > round.ok + round.unseen) return `${events} section.updated events for ${round.ok} PATCHes answered 2xx`;
  return undefined;
}

export function authHeaders(fixture: Pick<Fixture, 'host' | 'apiKey'>, extra: Record<string, string> = {}): Record<string, string> {
  // Host selects the organisation (it is served at `localhost`); the URL itself stays 127.0.0.1 so that
  // `localhost` resolving to ::1 cannot miss a server listening on IPv4.
  return { host: fixture.host, authorization: `Bearer ${fixture.apiKey}`, ...extra };
}

export async function requestJson(
  server: ServerHandle,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; fixture?: Pick<Fixture, 'host' | 'apiKey'> } = {},
): Promise<{ status: number; body: unknown }> {
  const fixture = init.fixture ?? server.fixture;
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method: init.method ?? 'GET', headers: authHeaders(fixture, init.headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const json = { 'content-type': 'application/json' };

const bare: HttpScenario = {
  name: 'bare',
  route: 'GET /healthz',
  isBaseline: true,
  requests: () => [{ method: 'GET', path: '/healthz' }],
};

// The same JSON body the PATCH scenarios send, parsed by Fastify and answered with a small JSON object.
const barePatch: HttpScenario = {
  name: 'bare-patch',
  route: 'PATCH /bench/bare (JSON body)',
  isBaseline: true,
  requests: () => [{ method: 'PATCH', path: '/bench/bare', headers: json, body: JSON.stringify({ title: 'Week A #1234' }) }],
};

// The bare PATCH held to BARE_PATCH_PACED_RATE requests a second, about what PostgreSQL's PATCH answers
// (`BENCH_SCENARIOS=bare-patch,bare-patch-paced,patch`): the same route and the same ten connections, on a server
// with time to spare, mostly idle. autocannon sends each tick's share of the rate together, so the server is woken
// once a burst, not once a request as PostgreSQL's PATCH wakes it (its sleeps/req say so): it measures what an
// idle server's route costs, not what waking for each request does (bench/README.md, 2026-11-30 third session).
const BARE_PATCH_PACED_RATE = 3_000;
const barePatchPaced: HttpScenario = {
  ...barePatch,
  name: 'bare-patch-paced',
  route: `PATCH /bench/bare (JSON body), ${BARE_PATCH_PACED_RATE.toLocaleString('en')} a second`,
  isBaseline: false,
  baseline: 'bare-patch',
  onlyWhenNamed: true,
  rate: BARE_PATCH_PACED_RATE,
};

// The bare route plus a fixed amount of pure CPU in its handler (`BENCH_SCENARIOS=bare,bare-work-10,bare-work-20,…`):
// what a request that does N µs of work more than the bare route costs in this run, against which a ratio goal
// can be read. The server pays more than N for it: the slower the answer, the more the load generator idles, and
// each answer then wakes it (bench/README.md, "The price of a microsecond").
const BARE_WORK_MICROS = [5, 10, 15, 20, 25, 30, 40];
const bareWork = BARE_WORK_MICROS.map(
  (us): HttpScenario => ({ name: `bare-work-${us}`, route: `GET /bench/work (${us} µs of CPU)`, baseline: 'bare', onlyWhenNamed: true, requests: () => [{ method: 'GET', path: `/bench/work?us=${us}` }] }),
);

const readSection: HttpScenario = {
  name: 'read',
  route: 'GET /api/v1/sections/{id}',
  baseline: 'bare',
  // Issue 23's goal for the whole request (its own share, at most 1 x, is printed under the table: issue-goals.ts).
  goal: { sqlite: 2.5, postgres: 3.5 },
  requests: (fixture) => [{ method: 'GET', path: `/api/v1/sections/${fixture.sectionId}`, headers: authHeaders(fixture) }],
};

// Titles that differ from every earlier one: the service skips a PATCH that changes nothing, so each request
// must really change the row to measure a write.
let titleCount = 0;
const nextTitle = () => `Week ${++titleCount % 2 === 0 ? 'A' : 'B'} #${titleCount}`;

/** What a round of PATCHes left behind, asked of the server: its events and the sections' titles. */
async function sectionUpdates(server: ServerHandle, since: string, sectionId?: string) {
  return (await server.command(`section-updates ${since}${sectionId ? ` ${sectionId}` : ''}`)) as { events: number; title?: string | null; latestTitles?: string[] };
}

// The goal's case: requests spread over 1,000 sections, so that concurrent writes rarely meet on a row.
let spreadCount = 0;
const patchSpread: HttpScenario = {
  name: 'patch',
  route: 'PATCH /api/v1/sections/{id}, over 1,000 sections',
  baseline: 'bare-patch',
  // Issue 23's goal for the whole request (its own share, at most 1.5 x, is printed under the table: issue-goals.ts).
  goal: { sqlite: 3, postgres: 5 },
  requests: (fixture) => [
    {
      method: 'PATCH',
      path: `/api/v1/sections/${fixture.sectionId}`,
      headers: authHeaders(fixture, json),
      setupRequest: (request) => {
        const id = fixture.spreadSectionIds[spreadCount++ % fixture.spreadSectionIds.length];
        return { ...request, path: `/api/v1/sections/${id}`, body: JSON.stringify({ title: nextTitle() }) };
      },
    },
  ],
  async verify(server, round) {
    return eventsMatch((await sectionUpdates(server, round.startedAt)).events, round);
  },
};

/**
 * A floor under a request's goal: the request's database work done by the server itself, as many at a time as the
 * load has connections, without the request around it (bench/in-process.ts), after a warm-up. Divided by the
 * bare route, it is the share of the budget the database takes on its own.
 */
async function measureInProcess(server: ServerHandle, settings: BenchSettings, kind: InProcessWork): Promise<Sample> {
  const run = async (seconds: number) => (await server.command(`in-process ${kind} ${seconds} ${settings.connections}`)) as unknown as InProcessResult;
  const warmup = await run(settings.warmupSeconds);
  const r = await run(settings.seconds);
  return {
    requestsPerSecond: r.done / r.seconds,
    requests: r.done,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    non2xx: 0,
    errors: 0,
    // Every unit of work succeeded (a failure fails the command); counted as the HTTP scenarios count their 2xx
    // responses, warm-up included, for the PATCH's events check.
    statusCounts: { '2xx': warmup.done + r.done },
    serverCpu: r.cpuMicros / 1e6 / r.seconds,
    serverMicrosPerRequest: r.cpuMicros / Math.max(1, r.done),
    serverUserMicrosPerRequest: r.userMicros / Math.max(1, r.done),
    loadCpu: 0,
    sleepsPerRequest: r.sleeps / Math.max(1, r.done),
  };
}

const readInProcess: HttpScenario = {
  name: 'read-in-process',
  route: "the read's database work alone, in the server (no HTTP)",
  baseline: 'bare',
  inServer: (server, settings) => measureInProcess(server, settings, 'read'),
};

/** The PATCH's transaction run in the server, checked like the PATCH's requests: one event per transaction. */
const patchTransactionInProcess = (name: string, route: string, baseline: HttpScenario['baseline'], kind: InProcessWork): HttpScenario => ({
  name,
  route,
  baseline,
  inServer: (server, settings) => measureInProcess(server, settings, kind),
  async verify(server, round) {
    return eventsMatch((await sectionUpdates(server, round.startedAt)).events, round);
  },
});

const patchInProcess = patchTransactionInProcess('patch-in-process', "the PATCH's transaction alone, in the server (no HTTP)", 'bare-patch', 'patch');
// Beside patch-in-process in the same run: what the audit entry adds to a write, with no HTTP around it.
const patchAuditedInProcess = patchTransactionInProcess('patch-audited-in-process', "the PATCH's transaction with its audit entry, in the server (no HTTP)", 'patch-in-process', 'patch-audited');

// Contention: every request on one row. It must not collapse: no deadlock, no 5xx (any non-2xx fails the
// run), and no lost update — checked after the round.
const patchOneRow: HttpScenario = {
  name: 'patch-one-row',
  route: 'PATCH /api/v1/sections/{id}, all on one section',
  baseline: 'bare-patch',
  requests: (fixture) => [
    {
      method: 'PATCH',
      path: `/api/v1/sections/${fixture.sectionId}`,
      headers: authHeaders(fixture, json),
      setupRequest: (request) => ({ ...request, body: JSON.stringify({ title: nextTitle() }) }),
    },
  ],
  // No lost update: each 2xx committed its own change, and the row holds the title of the change committed last.
  async verify(server, round) {
    const { events, title, latestTitles } = await sectionUpdates(server, round.startedAt, server.fixture.sectionId);
    const problem = eventsMatch(events, round);
    if (problem) return problem;
    if (!latestTitles!.includes(title!)) return `the section's title ${JSON.stringify(title)} is not the one its last committed change gave (${JSON.stringify(latestTitles)})`;
    return undefined;
  },
};

// The same PATCH with a fresh Idempotency-Key per request: the record is written in the PATCH's transaction.
let idempotentCount = 0;
const patchWithFreshKey: HttpScenario = {
  name: 'patch-idempotent',
  route: 'PATCH /api/v1/sections/{id} + new Idempotency-Key, over 1,000 sections',
  baseline: 'bare-patch',
  requests: (fixture) => [
    {
      method: 'PATCH',
      path: `/api/v1/sections/${fixture.sectionId}`,
      headers: authHeaders(fixture, json),
      setupRequest: (request) => {
        idempotentCount += 1;
        const id = fixture.spreadSectionIds[idempotentCount % fixture.spreadSectionIds.length];
        const key = `bench-${process.pid}-${Date.now()}-${idempotentCount}`;
        return { ...request, path: `/api/v1/sections/${id}`, headers: { ...request.headers, 'idempotency-key': key }, body: JSON.stringify({ title: nextTitle() }) };
      },
    },
  ],
};

// A retry of a completed request: answered from the record, without touching the section. The first request
// is sent before measuring: concurrent first requests with one key are (rightly) 409 in_progress.
const replayHeaders = { ...json, 'idempotency-key': `bench-replay-${process.pid}` };
const replayBody = JSON.stringify({ title: 'Replayed' });
const replayedPatch: HttpScenario = {
  name: 'patch-replay',
  route: 'PATCH /api/v1/sections/{id} replayed',
  baseline: 'bare-patch',
  async prepare(server) {
    const first = await requestJson(server, `/api/v1/sections/${server.fixture.sectionId}`, { method: 'PATCH', headers: replayHeaders, body: replayBody });
    if (first.status !== 200) throw new Error(`the first PATCH to replay answered ${first.status}`);
  },
  requests: (fixture) => [
    { method: 'PATCH', path: `/api/v1/sections/${fixture.sectionId}`, headers: authHeaders(fixture, replayHeaders), body: replayBody },
  ],
};

// OAuth 2 (issue 11): the token endpoint (client credentials), and the same read as `read` with an access token
// instead of the API key. Goal: the token read costs no more server CPU than the key read.
const basicAuth = (fixture: Fixture) => `Basic ${Buffer.from(`${fixture.oauthClientId}:${fixture.oauthClientSecret}`).toString('base64')}`;
const tokenEndpoint: HttpScenario = {
  name: 'oauth-token',
  route: 'POST /oauth/token (client credentials)',
  baseline: 'bare-patch',
  requests: (fixture) => [
    { method: 'POST', path: '/oauth/token', headers: { host: fixture.host, authorization: basicAuth(fixture), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=courses:read' },
  ],
};

let accessToken = '';
const readWithToken: HttpScenario = {
  name: 'read-oauth',
  route: 'GET /api/v1/sections/{id} with an OAuth access token',
  baseline: 'read',
  goal: { sqlite: 1, postgres: 1 },
  async prepare(server) {
    const res = await rawPost(server, '/oauth/token', { authorization: basicAuth(server.fixture), 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials');
    accessToken = (JSON.parse(res) as { access_token: string }).access_token;
  },
  requests: (fixture) => [{ method: 'GET', path: `/api/v1/sections/${fixture.sectionId}`, headers: { host: fixture.host, authorization: `Bearer ${accessToken}` } }],
};

// MCP (issue 12): tools/call of the read tool (revision 2026-07-28, stateless), divided by the same REST read.
// Its goal (issue 23, replacing issue 12's 1.5 ×): at most `bare-mcp` plus one REST read, a sum no row's ratio
// can show: the run prints it under the table (issue-goals.ts).
/** tools/call get_section of the seeded section, posted to `path` with `headers`. */
export function getSectionCall(fixture: Fixture, path: string, headers: Record<string, string>): Request[] {
  return [{ method: 'POST', path, headers: { ...headers, ...GET_SECTION_HEADERS }, body: JSON.stringify(getSectionMessage(fixture.sectionId)) }];
}

const mcpRead: HttpScenario = {
  name: 'mcp-read',
  route: 'POST /mcp tools/call get_section',
  baseline: 'read',
  requests: (fixture) => getSectionCall(fixture, '/mcp', authHeaders(fixture)),
};

// The SDK's floor: the same tools/call to the SDK alone answering a constant section (bench/bare-mcp.ts), no
// credential; divided by the REST read like mcp-read, so the table shows how many REST reads the SDK itself
// costs.
const bareMcp: HttpScenario = {
  name: 'bare-mcp',
  route: 'POST /bench/mcp: the SDK alone, constant tool',
  baseline: 'read',
  requests: (fixture) => getSectionCall(fixture, BARE_MCP_PATH, { host: fixture.host }),
};

/** A POST whose answer is text, for the requests a scenario prepares with (not the API key's JSON calls). */
function rawPost(server: ServerHandle, path: string, headers: Record<string, string>, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method: 'POST', headers: { host: server.fixture.host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${path} answered ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export const httpScenarios: HttpScenario[] = [bare, ...bareWork, barePatch, barePatchPaced, readSection, readInProcess, patchSpread, patchInProcess, patchAuditedInProcess, patchOneRow, patchWithFreshKey, replayedPatch, tokenEndpoint, readWithToken, mcpRead, bareMcp];

const okResponses = (sample: Sample) => Object.entries(sample.statusCounts).reduce((n, [status, count]) => n + (status.startsWith('2') ? count : 0), 0);

/** Each row's server µs/request divided by its baseline's, on the same database and in the same run. */
export function withRatios(results: Measurement[]): Measurement[] {
  for (const m of results) {
    const base = results.find((b) => b.scenario === m.baselineName && b.dialect === m.dialect);
    m.ratio = base ? m.median.serverMicrosPerRequest / base.median.serverMicrosPerRequest : undefined;
  }
  return results;
}

export const httpSuite: Suite = {
  name: 'http',
  async run(server: ServerHandle, settings: BenchSettings, progress: (text: string) => void): Promise<Measurement[]> {
    const selected = httpScenarios.filter((s) => (settings.scenarios ? settings.scenarios.has(s.name) : !s.onlyWhenNamed));
    const samples = new Map<HttpScenario, Sample[]>(selected.map((s) => [s, []]));
    const problems = new Map<HttpScenario, string>();
    // Rounds interleave the scenarios (bare, read, patch, bare, read, …) so that a slow spell of a shared
    // machine lands on every scenario alike instead of on whichever happened to run then.
    const [firstLevel, ...otherLevels] = settings.logLevels;
    const atOtherLevels = new Map<HttpScenario, Map<string, Array<{ micros: number; lines: number }>>>(selected.map((s) => [s, new Map(otherLevels.map((l) => [l, []]))]));
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of selected) {
        // Each scenario at each log level in turn; work done in the server without a request logs nothing.
        for (const level of scenario.inServer ? [firstLevel] : settings.logLevels) {
          await server.command(`log-level ${level}`);
          progress(`${settings.rounds > 1 ? `round ${round}/${settings.rounds} ` : ''}${scenario.route} at ${level}: ${settings.warmupSeconds} s warm-up, ${settings.seconds} s measured`);
          const startedAt = new Date().toISOString();
          await scenario.prepare?.(server);
          const linesBefore = server.logLines();
          const sample = scenario.inServer
            ? await scenario.inServer(server, settings)
            : await measure(server, scenario.requests!(server.fixture), settings, { profileName: `${server.dialect}-${scenario.name}-${level}-r${round}`, rate: scenario.rate });
          const problem = await scenario.verify?.(server, { startedAt, ok: okResponses(sample), unseen: 2 * settings.connections });
          if (problem && !problems.has(scenario)) problems.set(scenario, problem);
          if (level === firstLevel) samples.get(scenario)!.push(sample);
          else {
            const responses = Object.values(sample.statusCounts).reduce((n, c) => n + c, 0);
            atOtherLevels.get(scenario)!.get(level)!.push({ micros: sample.serverMicrosPerRequest, lines: (server.logLines() - linesBefore) / Math.max(1, responses) });
          }
        }
      }
    }
    await server.command(`log-level ${firstLevel}`);
    const medianOf = (runs: Array<{ micros: number; lines: number }>) => [...runs].sort((a, b) => a.micros - b.micros)[Math.floor((runs.length - 1) / 2)];
    return withRatios(
      selected.map((scenario) => ({
        dialect: server.dialect,
        suite: this.name,
        scenario: scenario.name,
        route: scenario.route,
        ...summarise(samples.get(scenario)!),
        isBaseline: scenario.isBaseline === true,
        baselineName: scenario.baseline,
        ratio: undefined,
        goal: scenario.goal,
        problem: problems.get(scenario),
        atLogLevels: [...atOtherLevels.get(scenario)!].filter(([, runs]) => runs.length > 0).map(([level, runs]) => ({ level, microsPerRequest: medianOf(runs).micros, logLinesPerRequest: medianOf(runs).lines })),
      })),
    );
  },
};
