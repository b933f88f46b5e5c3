// POST /lesson_pages/bulk runs in batch (domain/bulk/bulk-engine.ts, lesson-pages.store.ts): what its operations
// name read in one statement, every operation decided in memory over a store whose writes are queued, the writes
// made in a few multi-row statements. These hold it to the one-by-one run: the same declaration without its batch
// is served beside it (`/lesson_pages_one_by_one/bulk`), and the same request, sent to each in two organisations
// set up alike at the same instants, must leave the same answers, pages (and their order), events, tombstones and
// audit entries, ids apart. On both databases; and, on PostgreSQL, a batch refused by the unique key of an
// external id another transaction took meanwhile runs one by one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledQuery } from 'kysely';
import { dialectUnderTest, manualClock, startTestApp, type TestContext } from '../../../test/support/harness.ts';
import { newId } from '../../ids.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { bulkOperation } from '../bulk/bulk.operation.ts';
import { lessonPagesBulk } from './lesson-pages.operations.ts';

const ONE_BY_ONE = 'lesson_pages_one_by_one';
const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The real declaration, its batch left out: every request runs its operations one by one. */
const oneByOne = bulkOperation({
  ...lessonPagesBulk,
  id: 'bulkLessonPagesOneByOne',
  collection: ONE_BY_ONE,
  executors(ctx, body) {
    const { batch: _batch, ...executors } = lessonPagesBulk.executors(ctx, body);
    return executors;
  },
});

type Setup = Awaited<ReturnType<typeof setUp>>;
/** What a request names, by the names `setUp` gave each organisation's records. */
type Operations = (s: Setup) => unknown[];

let t: TestContext;
const clock = manualClock(new Date('2026-11-20T09:00:00.000Z'));
/** The statements the app runs while `recording` is set. */
let recording: CompiledQuery[] | undefined;

const call = (c: Caller, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers?: Record<string, string>) =>
  t.api.request({ host: c.org.address, key: c.key, method, path, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });

const page = (lessonId: string, title: string, extra: Record<string, unknown> = {}) => ({ lesson_id: lessonId, title, ...extra });
const question = (lessonId: string, title: string, jumpTo: string) =>
  page(lessonId, title, { page_type: 'multichoice', answers: [{ text: 'Yes', score: 1, jump_to: jumpTo }, { text: 'No', jump_to: 'this_page' }] });

/** An organisation with two lessons and their pages, a deleted lesson, a wiki, a deleted page, a question type switched off. */
async function setUp() {
  const c = await t.make.caller();
  const course = await t.make.course(c.org);
  const lesson = async (name: string) => (await t.make.lesson(c.org, { course_id: course.id, name })).id;
  const [l1, l2, gone] = [await lesson('One'), await lesson('Two'), await lesson('Gone')];
  const wiki = (await t.make.activity(c.org, { course_id: course.id })).id;
  const made = async (body: unknown) => {
    const res = await call(c, 'POST', '/lesson_pages', body);
    assert.equal(res.status, 201, res.raw);
    return res.body.id as string;
  };
  const p1 = await made(page(l1, 'P1', { external_id: 'p1' }));
  const p2 = await made(page(l1, 'P2'));
  const p3 = await made(page(l1, 'P3', { external_id: 'p3' }));
  const dead = await made(page(l1, 'Dead', { external_id: 'dead' }));
  assert.equal((await call(c, 'DELETE', `/lesson_pages/${dead}`)).status, 204);
  const q1 = await made(page(l2, 'Q1', { external_id: 'q1' }));
  const q2 = await made(question(l2, 'Q2', q1));
  const orphan = await made(page(gone, 'Orphan', { external_id: 'orphan' }));
  assert.equal((await call(c, 'DELETE', `/activities/${gone}`)).status, 204);
  await t.app.services.extensions.setEnabled(t.database.db, c.org.id, 'qtype_essay', false);
  return { c, names: { course: course.id, l1, l2, gone, wiki, p1, p2, p3, dead, q1, q2, orphan, org: c.org.id, person: c.personId, unknown: UNKNOWN } };
}

describe('POST /lesson_pages/bulk in batch: what the one-by-one run answers and leaves', () => {
  before(async () => {
    t = await startTestApp({ clock, operations: [oneByOne], onQuery: (q) => recording?.push(q) });
  });
  after(() => t.close());

  /**
   * Everything a request left in its organisation, ids named: each id `setUp` made by its name, any other by
   * the order it first appears in (the same in both organisations when the same happened in the same order).
   */
  async function traces(s: Setup, response: unknown, since: { events: number; tombstones: number }) {
    const db = t.database.db;
    const org = s.c.org.id;
    const pages = await db.selectFrom('lesson_pages').selectAll().where('organisation_id', '=', org).orderBy('lesson_id').orderBy('sort_key').orderBy('id').execute();
    const events = await db.selectFrom('outbox_events').select(['type', 'occurred_at', 'data']).where('organisation_id', '=', org).where('type', 'like', 'lesson_page.%').orderBy('id').execute();
    const tombstones = await db.selectFrom('deletions').select(['resource_type', 'resource_id', 'external_id', 'deleted_at']).where('organisation_id', '=', org).orderBy('id').execute();
    const audit = await db
      .selectFrom('audit_events')
      .select(['actor_type', 'actor_id', 'credential_kind', 'via', 'action', 'target_type', 'target_id', 'outcome', 'status', 'changed_fields'])
      .where('organisation_id', '=', org)
      .where('action', 'like', 'bulkLessonPages%')
      .orderBy('id')
      .execute();
    const text = JSON.stringify({
      response,
      events: events.slice(since.events),
      tombstones: tombstones.slice(since.tombstones),
      audit: audit.map((a) => ({ ...a, action: 'bulkLessonPages' })),
      // In lesson order, lessons by name: what a list of the lesson shows.
      pages,
    });
    const named = new Map(Object.entries(s.names).map(([name, id]) => [id, name]));
    let n = 0;
    const normalised = JSON.parse(text.replace(UUIDS, (id) => named.get(id) ?? (named.set(id, `new-${++n}`), named.get(id)!)));
    normalised.pages.sort((a: { lesson_id: string; sort_key: string }, b: { lesson_id: string; sort_key: string }) => (a.lesson_id + a.sort_key < b.lesson_id + b.sort_key ? -1 : 1));
    return normalised;
  }

  /** `operations` sent in batch to one organisation and one by one to another, set up alike: the same outcome. */
  async function sameBothWays(operations: Operations, options: { atomic?: boolean; rounds?: number } = {}) {
    const outcomes = [];
    for (const path of ['/lesson_pages/bulk', `/${ONE_BY_ONE}/bulk`]) {
      clock.set(new Date('2026-11-20T09:00:00.000Z'));
      const s = await setUp();
      const before = await traces(s, [], { events: 0, tombstones: 0 });
      const since = { events: before.events.length, tombstones: before.tombstones.length };
      const answers = [];
      for (let round = 0; round < (options.rounds ?? 1); round++) {
        clock.set(new Date(`2026-11-21T10:00:0${round}.000Z`));
        recording = [];
        const res = await call(s.c, 'POST', path, { ...(options.atomic ? { atomic: true } : {}), operations: operations(s) }, { 'idempotency-key': `k-${crypto.randomUUID()}` });
        const statements = recording.map((q) => q.sql);
        recording = undefined;
        assert.equal(res.status, 200, res.raw);
        // The batch ran (not the one-by-one run, whose savepoints are one per operation or one for all), and only
        // on the batch's endpoint.
        const oneByOneRun = statements.some((q) => /savepoint "?bulk_(operation|atomic)/.test(q));
        assert.equal(oneByOneRun, path !== '/lesson_pages/bulk', statements.join('\n'));
        answers.push(res.body);
      }
      outcomes.push(await traces(s, answers, since));
    }
    const [batch, single] = outcomes;
    assert.deepEqual(batch, single);
    return batch;
  }

  const codes = (outcome: { response: Array<{ results: Array<{ ref: string; status: number; error?: { code: string } }> }> }, round = 0) =>
    outcome.response[round].results.map((r) => `${r.ref} ${r.status}${r.error ? ` ${r.error.code}` : ''}`);

  test('creates, moves, upserts and deletes in one and two lessons, with every refusal, each seeing what the earlier ones wrote', async () => {
    const outcome = await sameBothWays(({ names: n }) => [
      { ref: 'end', op: 'create', external_id: 'c1', data: page(n.l1, 'At the end') },
      { ref: 'after-p1', op: 'create', data: page(n.l1, 'After P1', { after_page_id: n.p1 }) },
      { ref: 'first', op: 'create', data: page(n.l1, 'First', { after_page_id: null }) },
      { ref: 'question', op: 'create', data: question(n.l2, 'Question', n.q1) },
      { ref: 'jump-dead', op: 'create', data: question(n.l1, 'Jump to a deleted page', n.dead) },
      { ref: 'jump-other-lesson', op: 'create', data: question(n.l1, 'Jump to another lesson', n.q1) },
      { ref: 'gone-lesson', op: 'create', data: page(n.gone, 'Gone') },
      { ref: 'wiki', op: 'create', data: page(n.wiki, 'Wiki') },
      { ref: 'absent-lesson', op: 'create', data: page(UNKNOWN, 'Absent') },
      { ref: 'taken', op: 'create', external_id: 'p1', data: page(n.l1, 'Taken') },
      { ref: 'after-taken', op: 'create', data: page(n.l1, 'After the taken one') },
      { ref: 'essay-off', op: 'create', data: page(n.l1, 'Essay', { page_type: 'essay' }) },
      { ref: 'bad-answers', op: 'create', data: page(n.l1, 'True or false', { page_type: 'truefalse', answers: [{ text: 'Only one' }] }) },
      { ref: 'rename', op: 'update', id: n.p2, data: { title: 'P2 renamed' } },
      { ref: 'p3-first', op: 'update', id: n.p3, data: { after_page_id: null } },
      { ref: 'p1-after-p3', op: 'update', external_id: 'p1', data: { after_page_id: n.p3 } },
      { ref: 'c1-after-p2', op: 'update', external_id: 'c1', data: { title: 'Moved', after_page_id: n.p2 } },
      { ref: 'c1-where-it-is', op: 'update', external_id: 'c1', data: { after_page_id: n.p2 } },
      { ref: 'same-title', op: 'update', id: n.p2, data: { title: 'P2 renamed' } },
      { ref: 'dead', op: 'update', id: n.dead, data: { title: 'Too late' } },
      { ref: 'absent', op: 'update', id: UNKNOWN, data: { title: 'Nobody' } },
      { ref: 'absent-ext', op: 'update', external_id: 'nobody', data: { title: 'Nobody' } },
      { ref: 'after-itself', op: 'update', id: n.p1, data: { after_page_id: n.p1 } },
      { ref: 'after-other-lesson', op: 'update', id: n.p2, data: { after_page_id: n.q1 } },
      { ref: 'orphan', op: 'update', external_id: 'orphan', data: { title: 'Orphan renamed' } },
      { ref: 'to-essay', op: 'update', id: n.q1, data: { page_type: 'essay' } },
      { ref: 'q2-answers', op: 'update', id: n.q2, data: { answers: [{ text: 'Back', jump_to: n.q1 }, { text: 'Dead', jump_to: n.p1 }] } },
      { ref: 'q1-upsert', op: 'upsert', external_id: 'q1', data: page(n.l2, 'Q1 upserted', { after_page_id: n.q2 }) },
      { ref: 'q1-other-lesson', op: 'upsert', external_id: 'q1', data: page(n.l1, 'Q1 moved') },
      { ref: 'new-upsert', op: 'upsert', external_id: 'u1', data: page(n.l1, 'Upserted', { after_page_id: n.p3 }) },
      { ref: 'same-upsert', op: 'upsert', external_id: 'u1', data: page(n.l1, 'Upserted') },
      { ref: 'orphan-upsert', op: 'upsert', external_id: 'orphan', data: page(n.gone, 'Orphan upserted') },
      { ref: 'delete-p3', op: 'delete', id: n.p3 },
      { ref: 'delete-p3-again', op: 'delete', external_id: 'p3' },
      { ref: 'delete-u1', op: 'delete', external_id: 'u1' },
      { ref: 'after-deleted', op: 'create', data: page(n.l1, 'After a deleted page', { after_page_id: n.p3 }) },
      { ref: 'end-again', op: 'create', external_id: 'c2', data: page(n.l1, 'At the end again') },
      { ref: 'c1-again', op: 'create', external_id: 'c1', data: page(n.l2, 'Taken in this request') },
      { ref: 'p1-first', op: 'update', id: n.p1, data: { after_page_id: null } },
      { ref: 'delete-dead', op: 'delete', id: n.dead },
      { ref: 'delete-orphan', op: 'delete', id: n.orphan },
      { ref: 'delete-absent', op: 'delete', id: UNKNOWN },
    ]);
    assert.deepEqual(codes(outcome), [
      'end 201',
      'after-p1 201',
      'first 201',
      'question 201',
      'jump-dead 422 validation.invalid_body',
      'jump-other-lesson 422 validation.invalid_body',
      'gone-lesson 409 activity.deleted',
      'wiki 422 validation.invalid_body',
      'absent-lesson 422 validation.invalid_body',
      'taken 409 resource.external_id_taken',
      'after-taken 201',
      'essay-off 409 extension.disabled',
      'bad-answers 422 validation.invalid_body',
      'rename 200',
      'p3-first 200',
      'p1-after-p3 200',
      'c1-after-p2 200',
      'c1-where-it-is 200',
      'same-title 200',
      'dead 409 lesson_page.deleted',
      'absent 404 lesson_page.not_found',
      'absent-ext 404 lesson_page.not_found',
      'after-itself 422 validation.invalid_body',
      'after-other-lesson 422 validation.invalid_body',
      'orphan 409 activity.deleted',
      'to-essay 409 extension.disabled',
      'q2-answers 422 validation.invalid_body',
      'q1-upsert 200',
      'q1-other-lesson 422 validation.invalid_body',
      'new-upsert 201',
      'same-upsert 200',
      'orphan-upsert 409 activity.deleted',
      'delete-p3 204',
      'delete-p3-again 409 lesson_page.deleted',
      'delete-u1 204',
      'after-deleted 422 validation.invalid_body',
      'end-again 201',
      'c1-again 409 resource.external_id_taken',
      'p1-first 200',
      'delete-dead 409 lesson_page.deleted',
      'delete-orphan 409 activity.deleted',
      'delete-absent 404 lesson_page.not_found',
    ]);
    // The order the lesson ends in, as both runs left it.
    const lessonOne = outcome.pages.filter((p: { lesson_id: string }) => p.lesson_id === 'l1').map((p: { title: string; deleted_at: string | null }) => `${p.title}${p.deleted_at ? ' (deleted)' : ''}`);
    // `c1-after-p2` found the page already right after P2 (P3 moved, Dead deleted): only its title changed; `p1-first`
    // found P1 already first of the live pages; `after-taken` came after the key the refused `taken` was given.
    assert.deepEqual(lessonOne, ['P3 (deleted)', 'Upserted (deleted)', 'P1', 'First', 'After P1', 'P2 renamed', 'Dead (deleted)', 'Moved', 'After the taken one', 'At the end again']);
    assert.deepEqual(outcome.pages.filter((p: { lesson_id: string }) => p.lesson_id === 'l1').map((p: { sort_key: string }) => p.sort_key), ['Zy', 'ZyG', 'ZyV', 'Zz', 'a0V', 'a1', 'a3', 'a4', 'a6', 'a7']);
    assert.equal(outcome.tombstones.length, 2);
  });

  test('the same request twice: the second finds the pages the first made, by their external ids', async () => {
    const outcome = await sameBothWays(
      ({ names: n }) => [
        { ref: 'a', op: 'upsert', external_id: 'a', data: page(n.l1, 'A') },
        { ref: 'b', op: 'upsert', external_id: 'b', data: page(n.l2, 'B', { after_page_id: null }) },
        { ref: 'c', op: 'upsert', external_id: 'c', data: question(n.l2, 'C', n.q1) },
        { ref: 'move-a', op: 'update', external_id: 'a', data: { after_page_id: n.p1 } },
      ],
      { rounds: 2 },
    );
    assert.deepEqual(codes(outcome, 0), ['a 201', 'b 201', 'c 201', 'move-a 200']);
    assert.deepEqual(codes(outcome, 1), ['a 200', 'b 200', 'c 200', 'move-a 200']);
  });

  test('atomic: all written together, or, at the first failure, nothing', async () => {
    const ok = await sameBothWays(
      ({ names: n }) => [
        { ref: 'a', op: 'create', external_id: 'a', data: page(n.l1, 'A', { after_page_id: n.p2 }) },
        { ref: 'b', op: 'update', id: n.p1, data: { title: 'P1 renamed', after_page_id: n.p3 } },
        { ref: 'c', op: 'delete', id: n.p2 },
        { ref: 'd', op: 'upsert', external_id: 'q1', data: page(n.l2, 'Q1 again') },
      ],
      { atomic: true },
    );
    assert.deepEqual(codes(ok), ['a 201', 'b 200', 'c 204', 'd 200']);
    const failed = await sameBothWays(
      ({ names: n }) => [
        { ref: 'a', op: 'create', data: page(n.l1, 'A') },
        { ref: 'b', op: 'delete', id: n.p2 },
        { ref: 'bad', op: 'update', id: n.p1, data: { after_page_id: n.p2 } },
        { ref: 'later', op: 'create', data: page(n.l2, 'Later') },
      ],
      { atomic: true },
    );
    assert.deepEqual(codes(failed), ['a 409 bulk.rolled_back', 'b 409 bulk.rolled_back', 'bad 422 validation.invalid_body', 'later 409 bulk.rolled_back']);
    assert.deepEqual(failed.events, []);
  });

  test('a hundred creates in two lessons, some placed after a page', async () => {
    const outcome = await sameBothWays(({ names: n }) =>
      Array.from({ length: 100 }, (_, i) => ({ ref: `r${i}`, op: 'create', data: page([n.l1, n.l2][i % 2], `Page ${i}`, i % 7 === 3 ? { after_page_id: [n.p1, n.q1][i % 2] } : {}) })),
    );
    assert.equal(outcome.response[0].summary.succeeded, 100);
  });

  test('an external id another transaction takes while the batch reads: the batch INSERT is refused, and the operations run one by one', { skip: dialectUnderTest !== 'postgres' && 'needs two transactions at once (PostgreSQL)' }, async () => {
    clock.set(new Date('2026-11-22T08:00:00.000Z'));
    const { c, names: n } = await setUp();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const writtenNow = new Promise<void>((resolve) => (written = resolve));
    const at = clock.now().toISOString();
    const other = t.database.db.transaction().execute(async (trx) => {
      const row = { id: newId(), organisation_id: c.org.id, external_id: 'x', created_at: at, updated_at: at, deleted_at: null };
      await trx.insertInto('lesson_pages').values({ ...row, lesson_id: n.l1, course_id: n.course, title: 'Meanwhile', page_type: 'content', contents: null, answers: '[]', sort_key: 'a9' }).execute();
      written();
      await held;
    });
    await writtenNow;
    const answer = call(c, 'POST', '/lesson_pages/bulk', { operations: [{ ref: 'x', op: 'create', external_id: 'x', data: page(n.l1, 'X') }, { ref: 'y', op: 'create', data: page(n.l1, 'Y') }] }, { 'idempotency-key': `k-${crypto.randomUUID()}` });
    // The batch's INSERT waits on the other transaction's key; then that one commits.
    let waited = false;
    for (let i = 0; i < 200 && !waited; i++) {
      const waiting = await t.database.db.selectFrom('pg_stat_activity' as never).select((eb) => eb.fn.countAll<number>().as('n')).where('wait_event_type' as never, '=', 'Lock' as never).executeTakeFirstOrThrow();
      waited = Number(waiting.n) > 0;
      if (!waited) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    release();
    assert.ok(waited, 'the batch never waited on the other transaction');
    await other;
    const res = await answer;
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.results.map((r: { ref: string; status: number; error?: { code: string } }) => [r.ref, r.status, r.error?.code ?? null]), [['x', 409, 'resource.external_id_taken'], ['y', 201, null]]);
    // One by one, the lesson is read again, with the page the other transaction added (a9); the refused create
    // took the key after it (aA), as it would have in a batch, and Y the next.
    assert.equal(res.body.results[1].data.sort_key, 'aB');
    const titles = await t.database.db.selectFrom('lesson_pages').select('title').where('organisation_id', '=', c.org.id).where('lesson_id', '=', n.l1).orderBy('sort_key').execute();
    assert.deepEqual(titles.map((r) => r.title), ['P1', 'P2', 'P3', 'Dead', 'Meanwhile', 'Y']);
    const events = await t.database.db.selectFrom('outbox_events').select('data').where('organisation_id', '=', c.org.id).where('type', '=', 'lesson_page.created').execute();
    assert.equal(events.filter((e) => JSON.parse(e.data).id === res.body.results[1].data.id).length, 1);
    assert.equal(events.filter((e) => /"X"/.test(JSON.parse(e.data).summary)).length, 0);
  });
});
