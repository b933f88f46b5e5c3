// Runs fuzz cases (fuzz-requests.ts) against a real app and says what each answer broke. The properties:
//   - never a 5xx, and every answer one the OpenAPI document promises for the operation;
//   - every refusal a problem document whose code is in the catalog, with the catalog's status and category,
//     and a status that the spec's table allows for that category;
//   - `errors` only on validation problems, and then pointers into the body that was sent (for a missing
//     member: its parent is in the body);
//   - a refused write changes nothing: the organisation's rows (and the deployment's platform templates)
//     are the same before and after.
import { sql } from 'kysely';
import { errorCatalog, type ErrorCode } from '../../src/errors/error-catalog.ts';
import type { Operation } from '../../src/operations/operation.ts';
import { operations } from '../../src/all-operations.ts';
import { createContractChecker } from './contract.ts';
import { exampleRequest } from './examples.ts';
import type { Caller } from './factories.ts';
import { buildRequest, type BuiltRequest, type FuzzCase } from './fuzz-requests.ts';
import { startTestApp, type TestContext } from './harness.ts';

// spec: Errors — the status each category may answer with.
const STATUSES_OF: Record<string, number[]> = {
  validation: [422],
  authentication: [401],
  authorization: [403],
  not_found: [404],
  conflict: [409],
  precondition: [412],
  quota: [402, 413],
  rate_limit: [429],
  upstream: [502, 504],
  internal: [500],
};
// Written by a successful authentication in the background, whatever the request then does.
const VOLATILE_COLUMNS = new Set(['last_used_at']);
const CASES_PER_ORGANISATION = 40;

export interface Campaign {
  t: TestContext;
  /** What the answer to `c` broke; empty when it held every property. */
  run(c: FuzzCase): Promise<string[]>;
  close(): Promise<void>;
}

function resolves(body: unknown, pointer: string): boolean {
  if (pointer === '') return true;
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = body;
  for (const part of parts.slice(0, -1)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return node !== null && typeof node === 'object';
}

function checkProblem(req: BuiltRequest, status: number, text: string): string[] {
  let problem: { code?: string; category?: string; errors?: Array<{ path: string }> };
  try {
    problem = JSON.parse(text);
  } catch {
    return [`${status} body is not JSON: ${text.slice(0, 200)}`];
  }
  const out: string[] = [];
  const entry = errorCatalog[problem.code as ErrorCode];
  if (!entry) return [`code ${problem.code} is not in the catalog`];
  if (entry.status !== status || entry.category !== problem.category) out.push(`${problem.code}: answered ${status} ${problem.category}, the catalog says ${entry.status} ${entry.category}`);
  if (!STATUSES_OF[problem.category ?? '']?.includes(status)) out.push(`category ${problem.category} answered with ${status}: not in the spec's table`);
  if (problem.errors !== undefined) {
    if (problem.category !== 'validation') out.push(`${problem.code} carries errors but is no validation problem`);
    if (problem.errors.length === 0) out.push(`${problem.code} has an empty errors list`);
    for (const e of problem.errors) if (req.json !== undefined && !resolves(req.json, e.path)) out.push(`errors[].path ${e.path} does not point into the body sent`);
  }
  if (problem.code === 'validation.invalid_body' && !problem.errors?.length) out.push('validation.invalid_body without errors');
  return out;
}

export async function startCampaign(): Promise<Campaign> {
  // Limits high enough never to trip: a refusal for the rate would hide what the case is about.
  const t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000', CONCURRENCY_LIMIT: '100000' } });
  // The organisation the cases run in is replaced every CASES_PER_ORGANISATION cases: examples add resources
  // to it, and some have limits (50 storage targets).
  let owner: Caller = await t.make.caller();
  let noScopes = await t.make.caller({ org: owner.org, scopes: ['audit:read'] });
  let cases = 0;
  const stranger: Caller = await t.make.caller();
  const noApiPlan = await t.make.caller({ plan: 'no-api' });
  const foreignId = (await t.make.section(stranger.org)).id;
  const contract = createContractChecker(operations);
  const byId = new Map<string, Operation>(operations.map((op) => [op.id, op]));

  const tables = (await t.database.db.introspection.getTables()).filter((table) => !table.isView);
  const tenantTables = tables.filter((table) => table.columns.some((c) => c.name === 'organisation_id')).map((table) => table.name);
  const platformTables = tables.filter((table) => table.name.startsWith('platform_')).map((table) => table.name);

  async function snapshot(organisationId: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const rowsText = (rows: Array<Record<string, unknown>>) =>
      rows
        .map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([k]) => !VOLATILE_COLUMNS.has(k)))))
        .sort()
        .join('\n');
    for (const table of tenantTables) {
      const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where organisation_id = ${organisationId}`.execute(t.database.db);
      // A refused write is itself recorded in the audit log (outcome refused or failed); it must leave no success entry.
      out.set(table, rowsText(table === 'audit_events' ? rows.rows.filter((row) => row.outcome === 'success') : rows.rows));
    }
    for (const table of platformTables) out.set(table, rowsText((await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(t.database.db)).rows));
    return out;
  }

  async function run(c: FuzzCase): Promise<string[]> {
    const op = byId.get(c.operation);
    if (!op) return [`no operation ${c.operation}`];
    if (++cases % CASES_PER_ORGANISATION === 0) {
      owner = await t.make.caller();
      noScopes = await t.make.caller({ org: owner.org, scopes: ['audit:read'] });
    }
    const example = await exampleRequest(t.make, op, owner.org, c.mutation.kind === 'foreign-resource' ? stranger.org : owner.org);
    const req = buildRequest(c, {
      op,
      example,
      key: owner.key,
      host: owner.org.address,
      foreignId,
      credentials: { stranger: stranger.key, noScopes: noScopes.key, noApiPlan: { key: noApiPlan.key, host: noApiPlan.org.address } },
    });
    const before = op.writes ? await snapshot(owner.org.id) : undefined;
    const res = await t.app.inject({ method: req.method as 'GET', url: req.url, headers: req.headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
    const out: string[] = [];
    if (res.statusCode >= 500) out.push(`answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    out.push(...contract(req.method, req.url, res.statusCode, res.headers, res.body));
    if (res.statusCode >= 400) out.push(...checkProblem(req, res.statusCode, res.body));
    if (before && res.statusCode >= 400) {
      const after = await snapshot(owner.org.id);
      const changed = [...after].filter(([table, rows]) => before.get(table) !== rows).map(([table]) => table);
      if (changed.length > 0) out.push(`refused write (${res.statusCode}) changed ${changed.join(', ')}`);
    }
    return out.map((problem) => `${req.method} ${req.url.slice(0, 200)} → ${res.statusCode}: ${problem}`);
  }

  return { t, run, close: () => t.close() };
}
