// Every list query stays on an index, so that no change can silently make a list's cost grow with its table
// (bench/README.md shows the same plans at a million rows). Registry-driven: each list operation is requested
// with each of its variants — the first page, the next page through its cursor, `updated_since` (or `since`),
// `include_deleted`, and every filter it declares — and each SELECT the request ran is explained
// (`EXPLAIN QUERY PLAN` on SQLite; `EXPLAIN` on PostgreSQL, told to avoid sequential scans and sorts if it can
// at all, since on a table of a few rows it prefers them). A full table scan, a full index scan or a sort of
// the rows found fails the test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type CompiledQuery } from 'kysely';
import { operations } from '../src/all-operations.ts';
import type { Operation } from '../src/operations/operation.ts';
import { explain, growingSteps } from '../src/db/query-plans.ts';
import { outboxRepository } from '../src/events/outbox.ts';
import { dialectUnderTest, startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { exampleRequest } from './support/examples.ts';

const queryParameters = (op: Operation): string[] => Object.keys((op.query as { properties?: object } | undefined)?.properties ?? {});
const listOperations = operations.filter((op) => op.method === 'GET' && queryParameters(op).includes('cursor'));
const paging = new Set(['limit', 'cursor', 'include_deleted', 'updated_since', 'since']);
const LONG_AGO = '2000-01-01T00:00:00.000Z';

describe('every list query uses an index', () => {
  let t: TestContext;
  let c: Caller;
  let captured: CompiledQuery[] = [];
  before(async () => {
    t = await startTestApp({ onQuery: (query) => void captured.push(query) });
    c = await t.make.caller();
  });
  after(() => t.close());

  const get = (path: string) => t.api.request({ host: c.org.address, key: c.key, path });

  /** The list's path, with at least two rows behind it (so that a first page of one row has a next page). */
  async function pathWithTwoRows(op: Operation): Promise<string> {
    const [, collection, sub] = op.path.split('/');
    if (op.path.includes('{')) return (await exampleRequest(t.make, op, c.org)).path; // nested lists: their examples hold several rows
    const make = t.make.resourceFor[collection];
    assert.ok(make, `no factory for ${collection}: add it to resourceFor in test/support/factories.ts`);
    const rows = [await make(c.org), await make(c.org)];
    if (sub === 'deletions') {
      for (const row of rows) assert.equal((await t.api.request({ host: c.org.address, key: c.key, method: 'DELETE', path: `/${collection}/${row.id}` })).status, 204);
    }
    return op.path;
  }

  /** Requests a first page of one row and, when there is one, the next page; returns whether there was. */
  async function walk(path: string, query: Record<string, string>): Promise<boolean> {
    const first = await get(`${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams({ ...query, limit: '1' })}`);
    assert.equal(first.status, 200, `${path} ${JSON.stringify(query)}: ${first.raw}`);
    const cursor = first.body.page.next_cursor as string | null;
    if (cursor) assert.equal((await get(`${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams({ ...query, limit: '1', cursor })}`)).status, 200);
    return cursor !== null;
  }

  for (const op of listOperations) {
    test(`${op.method} ${op.path}`, async () => {
      const path = await pathWithTwoRows(op);
      const parameters = queryParameters(op);
      const first = (await get(path)).body.data[0] as Record<string, unknown>;
      const variants: Array<Record<string, string>> = [{}];
      if (parameters.includes('updated_since')) variants.push({ updated_since: LONG_AGO });
      if (parameters.includes('since')) variants.push({ since: LONG_AGO });
      if (parameters.includes('include_deleted')) variants.push({ include_deleted: 'true' }, { include_deleted: 'true', updated_since: LONG_AGO });
      // A filter gets the value the first row has, so that it matches at least that row.
      for (const filter of parameters.filter((p) => !paging.has(p))) {
        const value = first[filter];
        if (typeof value === 'string') variants.push({ [filter]: value }, ...(parameters.includes('updated_since') ? [{ [filter]: value, updated_since: LONG_AGO }] : []));
      }

      const problems: string[] = [];
      for (const variant of variants) {
        captured = [];
        const paged = await walk(path, variant);
        if (Object.keys(variant).length === 0) assert.ok(paged, `${op.path} has two rows, so its first page of one must have a next page`);
        const selects = captured.filter((q) => /^\s*select\b/i.test(q.sql));
        for (const query of selects) {
          const plan = await explain(t.database.db, dialectUnderTest, query, { preferIndexes: true });
          const growing = growingSteps(dialectUnderTest, plan);
          if (growing.length > 0) problems.push(`${JSON.stringify(variant)}: ${query.sql}\n    ${plan.join('\n    ')}`);
        }
      }
      assert.ok(problems.length === 0, `queries of ${op.id} whose cost grows with the table:\n${problems.join('\n')}`);
    });
  }
});

// Every write inserts an outbox event, and each index of the outbox is one more b-tree that insert writes (on
// SQLite, more WAL pages per commit): it keeps one index besides its primary key, the one its only range reader
// uses, the dispatcher's scan of what is not yet fanned out (which the backlog gauge reads too).
describe('the outbox keeps only the index its reader uses', () => {
  let t: TestContext;
  let captured: CompiledQuery[] = [];
  before(async () => {
    t = await startTestApp({ onQuery: (query) => void captured.push(query) });
  });
  after(() => t.close());

  test('the dispatcher claims pending events through outbox_events_pending (SQLite); no other index is there', async () => {
    const { db } = t.database;
    captured = [];
    await db.transaction().execute((tx) => outboxRepository.claimUndispatched(tx, 10));
    const [claim] = captured.filter((q) => /^\s*select\b/i.test(q.sql) && q.sql.includes('outbox_events'));
    assert.ok(claim, 'the claim ran a select on the outbox');
    // SQLite plans as if every table were large. PostgreSQL, on a test's few rows, walks the primary key in
    // order and filters, even told to prefer indexes: the plan says nothing there until a backlog of
    // dispatched events makes that the slower choice.
    if (dialectUnderTest === 'sqlite') {
      const plan = await explain(db, dialectUnderTest, claim, { preferIndexes: true });
      assert.deepEqual(growingSteps(dialectUnderTest, plan), [], plan.join('\n'));
      assert.ok(plan.some((line) => line.includes('outbox_events_pending')), plan.join('\n'));
    }

    const indexes =
      dialectUnderTest === 'sqlite'
        ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'outbox_events' and sql is not null`.execute(db)).rows
        : (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'outbox_events' and schemaname = current_schema() and indexname <> 'outbox_events_pkey'`.execute(db)).rows;
    assert.deepEqual(indexes.map((i) => i.name), ['outbox_events_pending']);
  });
});
