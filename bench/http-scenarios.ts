// HTTP request-path scenarios: the same server answering a bare route, an authenticated read and an
// authenticated write, so the ratios show what tenancy, auth, validation, serialisation and the database
// cost on top of Fastify itself.
import http from 'node:http';
import type { Request } from 'autocannon';
import type { Fixture } from './seed.ts';
import type { Goal, Measurement, Sample, Suite } from './measurement.ts';
import { summarise } from './measurement.ts';
import type { ServerHandle } from './server-process.ts';
import type { BenchSettings } from './settings.ts';
import { measure } from './load.ts';

export interface HttpScenario {
  name: string;
  route: string;
  /** The scenario the others are divided by (exactly one per suite). */
  baseline?: boolean;
  goal?: Goal;
  requests(fixture: Fixture): Request[];
  /** Runs once before the scenario is measured (e.g. the first request that later ones replay). */
  prepare?(server: ServerHandle): Promise<void>;
  /** Checks after the run that the scenario really did its work; returns what is wrong, if anything. */
  verify?(server: ServerHandle, startedAt: string): Promise<string | undefined>;
}

function authHeaders(fixture: Fixture, extra: Record<string, string> = {}): Record<string, string> {
  // Host selects the organisation (it is served at `localhost`); the URL itself stays 127.0.0.1 so that
  // `localhost` resolving to ::1 cannot miss a server listening on IPv4.
  return { host: fixture.host, authorization: `Bearer ${fixture.apiKey}`, ...extra };
}

async function requestJson(server: ServerHandle, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: unknown }> {
  const { fixture } = server;
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

const bare: HttpScenario = {
  name: 'bare',
  route: 'GET /healthz',
  baseline: true,
  requests: () => [{ method: 'GET', path: '/healthz' }],
};

const readSection: HttpScenario = {
  name: 'read',
  route: 'GET /api/v1/sections/{id}',
  goal: { minRatio: 0.6, dialects: ['sqlite'] },
  requests: (fixture) => [{ method: 'GET', path: `/api/v1/sections/${fixture.sectionId}`, headers: authHeaders(fixture) }],
};

// A title that differs from every earlier one: with 10 connections a plain A/B alternation would often
// send the title the section already has, and the service skips such no-op PATCHes without writing.
let patchCount = 0;
const patchSection: HttpScenario = {
  name: 'patch',
  route: 'PATCH /api/v1/sections/{id}',
  goal: { minRatio: 0.35, dialects: ['sqlite'] },
  requests: (fixture) => [
    {
      method: 'PATCH',
      path: `/api/v1/sections/${fixture.sectionId}`,
      headers: authHeaders(fixture, { 'content-type': 'application/json' }),
      setupRequest: (request) => {
        patchCount += 1;
        return { ...request, body: JSON.stringify({ title: `Week ${patchCount % 2 === 0 ? 'A' : 'B'} #${patchCount}` }) };
      },
    },
  ],
  async verify(server, startedAt) {
    const { status, body } = await requestJson(server, `/api/v1/sections/${server.fixture.sectionId}`);
    const section = body as { title?: string; updated_at?: string } | undefined;
    if (status !== 200) return `reading the section back answered ${status}`;
    if (!/^Week [AB] #\d+$/.test(section?.title ?? '') || !section?.updated_at || section.updated_at < startedAt) {
      return `the section was not updated by the run (title ${JSON.stringify(section?.title)}, updated_at ${section?.updated_at})`;
    }
    return undefined;
  },
};

// The same PATCH with a fresh Idempotency-Key per request: the record is written in the PATCH's transaction.
let idempotentCount = 0;
const patchWithFreshKey: HttpScenario = {
  name: 'patch-idempotent',
  route: 'PATCH /api/v1/sections/{id} + new Idempotency-Key',
  requests: (fixture) => [
    {
      method: 'PATCH',
      path: `/api/v1/sections/${fixture.sectionId}`,
      headers: authHeaders(fixture, { 'content-type': 'application/json' }),
      setupRequest: (request) => {
        idempotentCount += 1;
        const key = `bench-${process.pid}-${Date.now()}-${idempotentCount}`;
        return { ...request, headers: { ...request.headers, 'idempotency-key': key }, body: JSON.stringify({ title: `Idem #${idempotentCount}` }) };
      },
    },
  ],
};

// A retry of a completed request: answered from the record, without touching the section. The first request
// is sent before measuring: concurrent first requests with one key are (rightly) 409 in_progress.
const replayHeaders = { 'content-type': 'application/json', 'idempotency-key': `bench-replay-${process.pid}` };
const replayBody = JSON.stringify({ title: 'Replayed' });
const replayedPatch: HttpScenario = {
  name: 'patch-replay',
  route: 'PATCH /api/v1/sections/{id} replayed',
  async prepare(server) {
    const first = await requestJson(server, `/api/v1/sections/${server.fixture.sectionId}`, { method: 'PATCH', headers: replayHeaders, body: replayBody });
    if (first.status !== 200) throw new Error(`the first PATCH to replay answered ${first.status}`);
  },
  requests: (fixture) => [
    { method: 'PATCH', path: `/api/v1/sections/${fixture.sectionId}`, headers: authHeaders(fixture, replayHeaders), body: replayBody },
  ],
};

export const httpScenarios: HttpScenario[] = [bare, readSection, patchSection, patchWithFreshKey, replayedPatch];

export const httpSuite: Suite = {
  name: 'http',
  async run(server: ServerHandle, settings: BenchSettings, progress: (text: string) => void): Promise<Measurement[]> {
    const selected = httpScenarios.filter((s) => !settings.scenarios || settings.scenarios.has(s.name));
    const samples = new Map<HttpScenario, Sample[]>(selected.map((s) => [s, []]));
    const problems = new Map<HttpScenario, string>();
    // Rounds interleave the scenarios (bare, read, patch, bare, read, …) so that a slow spell of a shared
    // machine lands on every scenario alike instead of on whichever happened to run then.
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of selected) {
        progress(`${settings.rounds > 1 ? `round ${round}/${settings.rounds} ` : ''}${scenario.route}: ${settings.warmupSeconds} s warm-up, ${settings.seconds} s measured`);
        const startedAt = new Date().toISOString();
        await scenario.prepare?.(server);
        samples.get(scenario)!.push(await measure(server, scenario.requests(server.fixture), settings));
        const problem = await scenario.verify?.(server, startedAt);
        if (problem && !problems.has(scenario)) problems.set(scenario, problem);
      }
    }
    const results: Measurement[] = selected.map((scenario) => ({
      dialect: server.dialect,
      suite: this.name,
      scenario: scenario.name,
      route: scenario.route,
      ...summarise(samples.get(scenario)!),
      baseline: scenario.baseline === true,
      ratio: undefined,
      goal: scenario.goal,
      problem: problems.get(scenario),
    }));
    const base = results.find((m) => m.baseline);
    for (const m of results) m.ratio = base ? m.median.requestsPerSecond / base.median.requestsPerSecond : undefined;
    return results;
  },
};
