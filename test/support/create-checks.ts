// What the tests of creates in one statement (test/one-statement-creates*.test.ts) hold every POST to: the answer
// read back the same, its one row, its event's data byte for byte, its one success entry naming it; and every
// refusal to its status and code, with nothing left behind.
import assert from 'node:assert/strict';
import type { TestContext } from './harness.ts';
import type { Caller } from './factories.ts';
import type { ApiResponse } from './api-client.ts';
import { writeTraces } from './write-traces.ts';

/** Tables of the organisation's rows whose count a refusal must leave as it was. */
export type CreatedTable = 'enrolments' | 'enrolment_methods' | 'people' | 'sections' | 'lesson_pages' | 'email_messages' | 'activities' | 'wikis' | 'files';

export function createChecks(context: () => { t: TestContext; caller: Caller }) {
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
    const { t, caller } = context();
    return t.api.request({ host: caller.org.address, key: caller.key, method, path, ...(body === undefined ? {} : { body }) });
  };
  const { eventsOf, ...recorded } = writeTraces(context);
  const successEntries = (id: string) => recorded.successEntries(id, ['action', 'status', 'target_type', 'changed_fields']);
  /** What a write of the organisation leaves: rows of each table, events, success entries. */
  const traces = async (tables: readonly CreatedTable[]) => {
    const { t, caller } = context();
    const count = async (query: Promise<Array<{ n: number | string | bigint }>>) => Number((await query)[0].n);
    const db = t.database.db;
    const rows: number[] = [];
    for (const table of tables) rows.push(await count(db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('organisation_id', '=', caller.org.id).execute()));
    return {
      rows,
      events: await count(db.selectFrom('outbox_events').select((eb) => eb.fn.countAll<number>().as('n')).where('organisation_id', '=', caller.org.id).execute()),
      entries: await count(db.selectFrom('audit_events').select((eb) => eb.fn.countAll<number>().as('n')).where('organisation_id', '=', caller.org.id).where('outcome', '=', 'success').execute()),
    };
  };

  /**
   * A create that answers 201: the answer reads back the same by id, its one row, its event `data` (byte for
   * byte), its one success entry naming it (with the fields the body set) as `action` (create<Type> unless given).
   */
  async function created(collection: string, table: CreatedTable, body: Record<string, unknown>, event: { type: string; data: (res: ApiResponse) => Record<string, unknown>; action?: string }) {
    const res = await call('POST', `/${collection}`, body);
    assert.equal(res.status, 201, `${JSON.stringify(body)}: ${res.raw}`);
    assert.deepEqual((await call('GET', `/${collection}/${res.body.id}`)).body, res.body);
    assert.equal((await context().t.database.db.selectFrom(table).select('id').where('id', '=', res.body.id).execute()).length, 1);
    assert.deepEqual(await eventsOf(res.body.id), [{ type: event.type, data: JSON.stringify({ id: res.body.id, ...event.data(res) }) }]);
    const resourceType = event.type.slice(0, event.type.indexOf('.'));
    const action = event.action ?? `create${resourceType.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}`;
    const entries = await successEntries(res.body.id);
    assert.deepEqual(entries.map(({ changed_fields, ...entry }) => entry), [{ action, status: 201, target_type: resourceType }]);
    // The fields the body set, and those its schema's defaults filled in.
    const fields = JSON.parse(entries[0].changed_fields!) as string[];
    assert.ok(Object.keys(body).every((field) => fields.includes(field)), `${entries[0].changed_fields} for ${JSON.stringify(body)}`);
    return res;
  }

  /**
   * A create refused with `status` and `code` (and, for a 422, its one error's pointer), which leaves no row (of
   * `table`, and of each of `alsoTables`), event or success entry.
   */
  async function refused(collection: string, table: CreatedTable | readonly CreatedTable[], body: Record<string, unknown>, status: number, code: string, pointer?: string): Promise<ApiResponse> {
    const tables = typeof table === 'string' ? [table] : table;
    const before = await traces(tables);
    const res = await call('POST', `/${collection}`, body);
    assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.raw}`);
    assert.equal(res.body.code, code);
    if (pointer) assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), [pointer]);
    assert.deepEqual(await traces(tables), before, `${JSON.stringify(body)} left something`);
    return res;
  }

  return { call, eventsOf, successEntries, created, refused };
}
