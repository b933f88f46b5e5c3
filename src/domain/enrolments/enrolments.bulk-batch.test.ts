// POST /enrolments/bulk runs in batch (domain/bulk/bulk-engine.ts): every operation decided in memory, the
// writes made in a few multi-row statements. These hold it to what the one-by-one path answered: operations of
// one request that name the same enrolment see each other's effect and write one row each; a failure in the
// middle fails alone; an atomic request writes all or nothing (also when the server is killed with -9 while
// writing); its statements do not grow with its operations;
// and a batch refused by a constraint (another request wrote meanwhile) falls back to the one-by-one path.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import http from 'node:http';
import { dialectUnderTest, startTestApp, type TestContext } from '../../../test/support/harness.ts';
import { startServerProcess } from '../../../test/support/server-process.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { newId } from '../../ids.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

interface Result {
  ref: string;
  status: number;
  unchanged?: true;
  data?: { id: string; role: string; status: string; deleted_at: string | null };
  error?: { code: string; detail: string };
}

describe('bulk enrolments in batch', () => {
  let t: TestContext;
  /** The statements the app runs while `recording` is set. */
  let recording: CompiledQuery[] | undefined;
  before(async () => {
    t = await startTestApp({ onQuery: (q) => recording?.push(q) });
  });
  after(() => t.close());

  const bulk = (c: Caller, body: unknown, key: string = randomUUID()) =>
    t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/enrolments/bulk', body, headers: { 'idempotency-key': key } });
  const rowsOf = (c: Caller) => t.database.db.selectFrom('enrolments').selectAll().where('organisation_id', '=', c.org.id).orderBy('id').execute();
  const eventsOf = (c: Caller) =>
    t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', c.org.id).where('type', 'like', 'enrolment.%').orderBy('id').execute();
  const outcomes = (results: Result[]) => results.map((r) => [r.ref, r.status, r.error?.code ?? (r.unchanged ? 'unchanged' : undefined)]);

  async function setup(people = 2) {
    const c = await t.make.caller();
    const course = await t.make.course(c.org);
    const method = await t.make.enrolmentMethod(c.org, { course_id: course.id });
    const users = [];
    for (let i = 0; i < people; i++) users.push(await t.make.person(c.org, { roles: [] }));
    const data = (user: { id: string }, extra: Record<string, unknown> = {}) => ({ course_id: course.id, user_id: user.id, enrolment_method_id: method.id, ...extra });
    return { c, course, method, users, data };
  }

  test('operations on one external id in one request see each other and leave one row each, with every event in order', async () => {
    const { c, users, data } = await setup(3);
    const [ada, bob, cy] = users;
    const before = (await bulk(c, { operations: [{ ref: 'z', op: 'upsert', external_id: 'z', data: data(cy) }] })).body.results[0].data;
    const res = await bulk(c, {
      operations: [
        { ref: 'x1', op: 'upsert', external_id: 'x', data: data(ada) },
        { ref: 'x2', op: 'create', external_id: 'x', data: data(bob) },
        { ref: 'x3', op: 'upsert', external_id: 'x', data: data(ada) },
        { ref: 'x4', op: 'upsert', external_id: 'x', data: data(ada, { role: 'teacher' }) },
        { ref: 'y1', op: 'create', external_id: 'y', data: data(bob) },
        { ref: 'y2', op: 'update', external_id: 'y', data: { status: 'suspended' } },
        { ref: 'y3', op: 'delete', external_id: 'y' },
        { ref: 'y4', op: 'update', external_id: 'y', data: { role: 'teacher' } },
        { ref: 'y5', op: 'create', external_id: 'y2', data: data(bob) },
        { ref: 'z1', op: 'update', external_id: 'z', data: { status: 'suspended', ends_at: '2027-06-30T23:59:59+02:00' } },
        { ref: 'z2', op: 'upsert', external_id: 'z', data: data(cy, { status: 'suspended', role: 'teacher', starts_at: '2027-01-10T08:00:00Z' }) },
      ],
    });
    assert.deepEqual(outcomes(res.body.results), [
      ['x1', 201, undefined],
      ['x2', 409, 'resource.external_id_taken'],
      ['x3', 200, 'unchanged'],
      ['x4', 200, undefined],
      ['y1', 201, undefined],
      ['y2', 200, undefined],
      ['y3', 204, undefined],
      ['y4', 409, 'enrolment.deleted'],
      ['y5', 201, undefined],
      ['z1', 200, undefined],
      ['z2', 200, undefined],
    ]);
    const rows = await rowsOf(c);
    const byExt = new Map(rows.map((r) => [r.external_id, r]));
    assert.equal(rows.length, 4);
    assert.deepEqual([byExt.get('x')!.role, byExt.get('x')!.person_id, byExt.get('x')!.deleted_at], ['teacher', ada.id, null]);
    assert.deepEqual([byExt.get('y')!.status, byExt.get('y')!.role], ['suspended', 'student']);
    assert.notEqual(byExt.get('y')!.deleted_at, null);
    assert.equal(byExt.get('y2')!.deleted_at, null, 'a new enrolment of the same person through the same method, once the first ended');
    const z = byExt.get('z')!;
    assert.deepEqual([z.id, z.status, z.role, z.starts_at, z.ends_at], [before.id, 'suspended', 'teacher', '2027-01-10T08:00:00.000Z', '2027-06-30T21:59:59.000Z']);
    // What the API answered is what was stored.
    const answered = res.body.results as Result[];
    assert.deepEqual([answered[3].data!.role, answered[10].data!.role, answered[10].data!.status], ['teacher', 'teacher', 'suspended']);
    const tombstones = await t.database.db.selectFrom('deletions').select('resource_id').where('organisation_id', '=', c.org.id).execute();
    assert.deepEqual(tombstones.map((d) => d.resource_id), [byExt.get('y')!.id]);
    const events = (await eventsOf(c)).slice(1).map((e) => [e.type, JSON.parse(e.data).id]);
    assert.deepEqual(events, [
      ['enrolment.created', byExt.get('x')!.id],
      ['enrolment.updated', byExt.get('x')!.id],
      ['enrolment.created', byExt.get('y')!.id],
      ['enrolment.updated', byExt.get('y')!.id],
      ['enrolment.deleted', byExt.get('y')!.id],
      ['enrolment.created', byExt.get('y2')!.id],
      ['enrolment.updated', before.id],
      ['enrolment.updated', before.id],
    ]);
  });

  test('a missing or removed user in the middle of a batch fails that operation alone with its code', async () => {
    const { c, users, data } = await setup(3);
    await t.app.services.people.remove(c.org.id, users[2].id);
    const res = await bulk(c, {
      operations: [
        { ref: 'a', op: 'upsert', external_id: 'a', data: data(users[0]) },
        { ref: 'missing', op: 'upsert', external_id: 'm', data: data({ id: UNKNOWN }) },
        { ref: 'gone', op: 'create', data: data(users[2]) },
        { ref: 'b', op: 'upsert', external_id: 'b', data: data(users[1]) },
      ],
    });
    assert.deepEqual(outcomes(res.body.results), [
      ['a', 201, undefined],
      ['missing', 422, 'validation.invalid_body'],
      ['gone', 409, 'user.deleted'],
      ['b', 201, undefined],
    ]);
    assert.match(res.body.results[1].error.detail, /^\/operations\/1\/data\/user_id: /);
    assert.deepEqual(res.body.summary, { total: 4, succeeded: 2, failed: 2 });
    assert.deepEqual((await rowsOf(c)).map((r) => r.external_id).sort(), ['a', 'b']);
    assert.deepEqual((await eventsOf(c)).map((e) => e.type), ['enrolment.created', 'enrolment.created']);
  });

  test('atomic: all written together, or, at the first failure, nothing (not even the earlier operations’ changes)', async () => {
    const { c, users, data } = await setup(3);
    const ok = await bulk(c, { atomic: true, operations: users.map((u, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `r${i}`, data: data(u) })) });
    assert.deepEqual(ok.body.summary, { total: 3, succeeded: 3, failed: 0 });
    const rows = await rowsOf(c);
    const events = await eventsOf(c);
    assert.deepEqual([rows.length, events.length], [3, 3]);
    const failed = await bulk(c, {
      atomic: true,
      operations: [
        { ref: 'change', op: 'upsert', external_id: 'r0', data: data(users[0], { role: 'teacher' }) },
        { ref: 'end', op: 'delete', external_id: 'r1' },
        { ref: 'bad', op: 'update', external_id: 'r2', data: { starts_at: '2027-02-01T00:00:00Z', ends_at: '2027-01-01T00:00:00Z' } },
      ],
    });
    assert.deepEqual(outcomes(failed.body.results), [
      ['change', 409, 'bulk.rolled_back'],
      ['end', 409, 'bulk.rolled_back'],
      ['bad', 422, 'validation.invalid_body'],
    ]);
    assert.deepEqual(await rowsOf(c), rows);
    assert.deepEqual(await eventsOf(c), events);
  });

  test('a retry with the Idempotency-Key replays; a resend of the roster with a new key changes nothing and emits nothing', async () => {
    const { c, users, data } = await setup(4);
    const roster = { operations: users.map((u, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `r${i}`, data: data(u) })) };
    const key = randomUUID();
    const first = await bulk(c, roster, key);
    const retry = await bulk(c, roster, key);
    assert.equal(retry.headers['idempotency-replayed'], 'true');
    assert.equal(retry.raw, first.raw);
    const rows = await rowsOf(c);
    const events = await eventsOf(c);
    assert.deepEqual([rows.length, events.length], [4, 4]);
    const resend = await bulk(c, roster);
    assert.deepEqual((resend.body.results as Result[]).map((r) => [r.status, r.unchanged]), users.map(() => [200, true]));
    assert.deepEqual(await rowsOf(c), rows);
    assert.deepEqual(await eventsOf(c), events);
  });

  test('a large answer is recorded compressed and replayed byte for byte', async () => {
    const { c, users, data } = await setup(60);
    const roster = { operations: users.map((u, i) => ({ ref: `big${i}`, op: 'upsert', external_id: `big${i}`, data: data(u) })) };
    const key = randomUUID();
    const first = await bulk(c, roster, key);
    assert.ok(first.raw.length > 16 * 1024, `an answer of ${first.raw.length} characters`);
    const record = await t.database.db.selectFrom('idempotency_records').select(['response_body', 'response_body_packed']).where('idempotency_key', '=', key).executeTakeFirstOrThrow();
    assert.equal(record.response_body, null);
    assert.ok(record.response_body_packed !== null && record.response_body_packed.byteLength < first.raw.length / 3);
    const retry = await bulk(c, roster, key);
    assert.equal(retry.headers['idempotency-replayed'], 'true');
    assert.equal(retry.raw, first.raw);
  });

  test('the statements of a request do not grow with its operations', async () => {
    const { c, users, data } = await setup(60);
    // Compared by their SQL, so that a failure shows which statement one request ran and the other did not.
    const statementsOf = async (ops: unknown[]) => {
      recording = [];
      const res = await bulk(c, { operations: ops });
      // A list of parameters, of rows of them, or of a batch UPDATE's cases, is one `…` whatever its length.
      const texts = recording.map((q) => q.sql.replace(/\((?:\?|\$\d+)(?:, (?:\?|\$\d+))*\)/g, '(…)').replace(/\(…\)(?:, \(…\))+/g, '(…)').replace(/(?:when "id" = (?:\?|\$\d+) then (?:\?|\$\d+) )+/g, 'when … ').replace(/\$\d+/g, '?')).sort();
      recording = undefined;
      assert.equal(res.body.summary.failed, 0);
      return texts;
    };
    const upserts = (from: number, to: number, extra = {}) => users.slice(from, to).map((u, i) => ({ ref: `r${from + i}`, op: 'upsert', external_id: `r${from + i}`, data: data(u, extra) }));
    // The caller's credential is read once, then cached: not a statement of the requests compared.
    await bulk(c, { operations: [{ ref: 'warm-up', op: 'delete', id: UNKNOWN }] });
    // Creating 10 or 50; finding 10 or 50 unchanged; changing 10 or 50.
    assert.deepEqual(await statementsOf(upserts(0, 50)), await statementsOf(upserts(50, 60)));
    assert.deepEqual(await statementsOf(upserts(0, 50)), await statementsOf(upserts(50, 60)));
    assert.deepEqual(await statementsOf(upserts(0, 50, { role: 'teacher' })), await statementsOf(upserts(50, 60, { role: 'teacher' })));
  });

  const onPostgres = { skip: dialectUnderTest !== 'postgres' && 'needs two transactions at once (PostgreSQL)' };

  /**
   * Runs `write` in another transaction held open while `request` is sent: the request's batch reads before
   * that write commits and then waits on its lock (a unique key, a row); the other transaction then commits.
   */
  async function meanwhile<T>(write: (trx: typeof t.database.db) => Promise<unknown>, request: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const writtenNow = new Promise<void>((resolve) => (written = resolve));
    const other = t.database.db.transaction().execute(async (trx) => {
      await write(trx);
      written();
      await held;
    });
    await writtenNow;
    const answer = request();
    for (let i = 0; i < 200; i++) {
      const waiting = await t.database.db.selectFrom('pg_stat_activity' as never).select((eb) => eb.fn.countAll<number>().as('n')).where('wait_event_type' as never, '=', 'Lock' as never).executeTakeFirstOrThrow();
      if (Number(waiting.n) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    release();
    await other;
    return answer;
  }

  test('a batch INSERT refused by a unique key (another request took the external id meanwhile) runs one by one: the clash fails alone', onPostgres, async () => {
    const { c, course, method, users, data } = await setup(2);
    const [ada, bob] = users;
    const at = new Date().toISOString();
    const res = await meanwhile(
      (trx) =>
        trx
          .insertInto('enrolments')
          .values({ id: newId(), organisation_id: c.org.id, enrolment_method_id: method.id, course_id: course.id, person_id: bob.id, external_id: 'x', role: 'student', status: 'active', starts_at: null, ends_at: null, created_at: at, updated_at: at, deleted_at: null })
          .execute(),
      () => bulk(c, { operations: [{ ref: 'x', op: 'upsert', external_id: 'x', data: data(ada) }, { ref: 'y', op: 'upsert', external_id: 'y', data: data(ada, { role: 'teacher' }) }] }),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(outcomes(res.body.results), [
      ['x', 422, 'validation.invalid_body'],
      ['y', 201, undefined],
    ]);
    assert.match(res.body.results[0].error.detail, /keeps its user_id/);
    const rows = await rowsOf(c);
    assert.deepEqual(rows.map((r) => [r.external_id, r.person_id]).sort(), [['x', bob.id], ['y', ada.id]]);
    assert.deepEqual((await eventsOf(c)).map((e) => [e.type, JSON.parse(e.data).id]), [['enrolment.created', rows.find((r) => r.external_id === 'y')!.id]]);
  });

  test('a batch UPDATE that finds its row ended meanwhile runs one by one: that operation alone reports enrolment.deleted', onPostgres, async () => {
    const { c, users, data } = await setup(2);
    await bulk(c, { operations: users.map((u, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `r${i}`, data: data(u) })) });
    const before = await rowsOf(c);
    const ended = new Date().toISOString();
    const res = await meanwhile(
      (trx) => trx.updateTable('enrolments').set({ deleted_at: ended }).where('organisation_id', '=', c.org.id).where('external_id', '=', 'r0').execute(),
      () => bulk(c, { operations: users.map((u, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `r${i}`, data: data(u, { role: 'teacher' }) })) }),
    );
    assert.deepEqual(outcomes(res.body.results), [
      ['r0', 409, 'enrolment.deleted'],
      ['r1', 200, undefined],
    ]);
    const after = await rowsOf(c);
    assert.deepEqual(after.map((r) => [r.external_id, r.role, r.deleted_at === null]), [['r0', 'student', false], ['r1', 'teacher', true]]);
    assert.deepEqual((await eventsOf(c)).slice(before.length).map((e) => e.type), ['enrolment.updated']);
  });

  test('kill -9 while atomic batches are being written: each request left all its enrolments, events and record, or none', async () => {
    const { c, users, data } = await setup(40);
    const server = startServerProcess(t.processEnv);
    const url = new URL(await server.url);
    const send = (k: number) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ atomic: true, operations: users.map((u, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `k${k}-${i}`, data: data(u, { role: k % 2 === 0 ? 'student' : 'teacher' }) })) });
        const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: '/api/v1/enrolments/bulk', headers: { host: c.org.address, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', 'idempotency-key': `kill-${k}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(body);
      });
    // Requests one after another (the enrolments of each are ended before the next, whose pairs must be free),
    // each a first sync of its own external ids. Once three have answered, the server is killed at a random
    // moment of the time one takes: during the next request's reads, its writes or its commit.
    let sent = 0;
    let lastMs = 0;
    let answered!: () => void;
    const threeAnswered = new Promise<void>((resolve) => (answered = resolve));
    const running = (async () => {
      for (let k = 0; ; k++) {
        sent = k + 1;
        const started = performance.now();
        if ((await send(k)) !== 200) return;
        lastMs = performance.now() - started;
        if (k === 2) answered();
        await t.database.db.updateTable('enrolments').set({ deleted_at: new Date().toISOString() }).where('organisation_id', '=', c.org.id).where('deleted_at', 'is', null).execute();
      }
    })()
      .catch(() => {})
      .finally(() => answered());
    await threeAnswered;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * lastMs));
    await server.stop('SIGKILL');
    await running;
    assert.ok(sent >= 4);
    for (let k = 0; k < sent; k++) {
      const rows = await t.database.db.selectFrom('enrolments').select('id').where('organisation_id', '=', c.org.id).where('external_id', 'like', `k${k}-%`).execute();
      const events = (await eventsOf(c)).filter((e) => rows.some((r) => r.id === JSON.parse(e.data).id));
      const record = await t.database.db.selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', '=', `kill-${k}`).execute();
      assert.ok(rows.length === 0 || rows.length === users.length, `request ${k}: ${rows.length} of ${users.length} enrolments`);
      assert.deepEqual([events.length, record.length], rows.length === 0 ? [0, 0] : [users.length, 1], `request ${k}`);
    }
  });
});
