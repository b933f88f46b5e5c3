// Round trips to PostgreSQL per request, counted through the driver's hook (DatabaseOptions.onRoundTrip: a
// socket write the request then waits on). For every resource kind in the registry — a collection with a read
// by id — the read, the list, the create, the PATCH and the delete, each with and without an Idempotency-Key;
// and every bulk operation, whose count must not grow with its number of operations. A round trip added to
// any of them fails here; so does an audit entry that travels alone (it must ride with the COMMIT).
// PostgreSQL only: SQLite has no round trips (the suite runs on both; this file is skipped on SQLite).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { operations } from '../src/all-operations.ts';
import type { Operation } from '../src/operations/operation.ts';
import { dialectUnderTest, startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import type { ApiRequest, ApiResponse } from './support/api-client.ts';
import { exampleBulkRequest, exampleRequest } from './support/examples.ts';

const skip = dialectUnderTest === 'postgres' ? false : 'PostgreSQL only: round trips are counted on PostgreSQL (run with TEST_DATABASE_URL=postgres://…)';

type Action = 'read' | 'list' | 'create' | 'update' | 'delete';
const ACTIONS: Record<string, Action> = { 'GET item': 'read', 'PATCH item': 'update', 'DELETE item': 'delete', 'GET collection': 'list', 'POST collection': 'create' };

/** The goal, met by every request counted here: one round trip, two with an Idempotency-Key. */
const GOAL = { plain: 1, idempotent: 2 };

/** Resource kinds: the collections the registry can read by id, with the operations of the five actions they have. */
function resourceKinds(): Map<string, Array<{ action: Action; op: Operation }>> {
  const kinds = new Map<string, Array<{ action: Action; op: Operation }>>();
  const shaped = operations.flatMap((op) => {
    const m = /^\/(\w+)(\/\{\w+\})?$/.exec(op.path);
    const action = m && ACTIONS[`${op.method} ${m[2] ? 'item' : 'collection'}`];
    return m && action ? [{ collection: m[1], action, op }] : [];
  });
  for (const { collection } of shaped.filter((s) => s.action === 'read')) kinds.set(collection, []);
  for (const s of shaped) kinds.get(s.collection)?.push({ action: s.action, op: s.op });
  return kinds;
}

describe('round trips to PostgreSQL per request', { skip }, () => {
  const counting = new AsyncLocalStorage<string[][]>();
  let t: TestContext;
  let caller: Caller;
  before(async () => {
    t = await startTestApp({ onRoundTrip: (statements) => counting.getStore()?.push(statements) });
    caller = await t.make.caller();
    // The first request verifies the key and notes its use; the requests measured find it verified.
    assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, path: '/me' })).status, 200);
  });
  after(() => t?.close());

  /** The request, and the round trips it waited on before its answer. */
  async function measure(req: ApiRequest): Promise<{ res: ApiResponse; trips: string[][] }> {
    // A write before this one may have moved the organisation's credentials epoch (a role's change does), and
    // the first request after that takes the full path once (src/http/tenancy-cache.ts): the steady state is measured.
    assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, path: '/me' })).status, 200);
    const trips: string[][] = [];
    const res = await counting.run(trips, () => t.api.request({ host: caller.org.address, key: caller.key, ...req }));
    return { res, trips: [...trips] };
  }

  function check(name: string, res: ApiResponse, trips: string[][], goal: number): void {
    assert.ok(res.status < 300, `${name} answered ${res.status}: ${res.raw.slice(0, 300)}`);
    const detail = trips.map((statements, i) => `  ${i + 1}. ${statements.map((s) => s.slice(0, 90)).join(' ; ')}`).join('\n');
    assert.ok(trips.length <= goal, `${name}: ${trips.length} round trips, goal ${goal}:\n${detail}`);
    const auditAlone = trips.find((statements) => statements.every((s) => s.startsWith('insert into "audit_events"')));
    assert.equal(auditAlone, undefined, `${name}: an audit entry costs a round trip of its own:\n${detail}`);
  }

  for (const [kind, actions] of resourceKinds()) {
    describe(kind, () => {
      for (const { op } of actions) {
        const name = `${op.method} ${op.path}`;
        test(name, async () => {
          const example = await exampleRequest(t.make, op, caller.org);
          const { res, trips } = await measure({ method: op.method, path: example.path, ...(op.body ? { body: example.body } : {}) });
          check(name, res, trips, GOAL.plain);
        });
        if (op.idempotency) {
          test(`${name} with Idempotency-Key`, async () => {
            const example = await exampleRequest(t.make, op, caller.org);
            const headers = { 'idempotency-key': `trips-${crypto.randomUUID()}` };
            const { res, trips } = await measure({ method: op.method, path: example.path, headers, ...(op.body ? { body: example.body } : {}) });
            check(`${name} with Idempotency-Key`, res, trips, GOAL.idempotent);
          });
        }
      }
    });
  }

  // Shapes of a create that the examples above do not send, whose premises read more.
  test('POST /users giving a custom role', async () => {
    const role = await t.make.customRole(caller.org);
    const { res, trips } = await measure({ method: 'POST', path: '/users', body: { email: `trips-${crypto.randomUUID()}@example.edu`, name: 'Custom', roles: [role.key] } });
    check('POST /users giving a custom role', res, trips, GOAL.plain);
  });

  test('POST /lesson_pages placed after a page, and before the first', async () => {
    const lesson = await t.make.lesson(caller.org);
    const page = await t.make.lessonPage(caller.org, { lesson_id: lesson.id });
    for (const after of [page.id, null]) {
      const { res, trips } = await measure({ method: 'POST', path: '/lesson_pages', body: { lesson_id: lesson.id, title: 'Placed', after_page_id: after } });
      check(`POST /lesson_pages after_page_id ${after}`, res, trips, GOAL.plain);
    }
  });

  // A tool call runs its operation's pipeline inside the /mcp request (src/mcp/tool-call.ts), its organisation's
  // check riding with its first statement as a REST request's does (src/mcp/mcp-routes.ts).
  test('MCP tools/call: a read and a PATCH, one round trip each', async () => {
    const section = await t.make.section(caller.org);
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'trips', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const callTool = (name: string, args: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { host: caller.org.address, authorization: `Bearer ${caller.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: envelope } }),
      });
    // The first call reads the MCP settings (then cached under the credentials epoch).
    assert.equal((await callTool('get_section', { id: section.id })).statusCode, 200);
    for (const [name, args] of [['get_section', { id: section.id }], ['update_section', { id: section.id, title: 'By tool' }]] as const) {
      const trips: string[][] = [];
      // Awaited inside: inject() dispatches the request when it is awaited, and the count is of this context.
      const res = await counting.run(trips, async () => await callTool(name, args));
      const result = res.json().result;
      assert.ok(res.statusCode === 200 && result._meta['atrium/status'] === 200, `${name} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      const detail = trips.map((statements, i) => `  ${i + 1}. ${statements.map((q) => q.slice(0, 90)).join(' ; ')}`).join('\n');
      assert.equal(trips.length, GOAL.plain, `${name}: ${trips.length} round trips, goal ${GOAL.plain}:\n${detail}`);
    }
  });

  describe('bulk', () => {
    for (const op of operations.filter((o) => o.bulk)) {
      test(`${op.method} ${op.path}: round trips for 10 operations and for 100`, async () => {
        const counts: number[] = [];
        for (const size of [10, 100]) {
          const example = await exampleBulkRequest(t.make, op, caller.org, size);
          const headers = { 'idempotency-key': `trips-${crypto.randomUUID()}` };
          const { res, trips } = await measure({ method: op.method, path: example.path, headers, body: example.body });
          assert.ok(res.status < 300, `${op.path} answered ${res.status}: ${res.raw.slice(0, 300)}`);
          assert.ok(res.body.results.every((r: { status: number }) => r.status < 300), `${op.path}: ${JSON.stringify(res.body.results.find((r: { status: number }) => r.status >= 300))}`);
          counts.push(trips.length);
        }
        const report = `${op.path}: ${counts[0]} round trips for 10 operations, ${counts[1]} for 100`;
        // The same for 100 operations as for 10: nothing is sent per operation.
        assert.equal(counts[1], counts[0], report);
      });
    }
  });
});
