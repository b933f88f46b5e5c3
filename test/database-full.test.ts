// The embedded SQLite database when it cannot be written (disk full, read-only): every request gets a problem
// document (502 database.unavailable, with Retry-After) instead of a 500 or a hang, the file stays intact,
// and writing works again once there is room. Runs on SQLite whatever TEST_DATABASE_URL says.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

describe('SQLite that cannot be written', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ dialect: 'sqlite' });
    c = await t.make.caller();
  });
  after(() => t.close());

  const pragma = async (text: string) => ((await sql.raw(`pragma ${text}`).execute(t.database.db)).rows as Array<Record<string, unknown>>).map((row) => ({ ...row }));
  const sectionsOf = (courseId: string) => t.database.db.selectFrom('sections').selectAll().where('course_id', '=', courseId).orderBy('id').execute();
  const create = (courseId: string, i: number) =>
    t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/sections', body: { course_id: courseId, title: `Section ${i}`, summary: { format: 'plain', content: 'x'.repeat(20_000) } } });

  const assertUnavailable = (res: { status: number; headers: Record<string, unknown>; body: any }) => {
    assert.equal(res.status, 502);
    assert.equal(res.body.code, 'database.unavailable');
    assert.equal(res.body.category, 'upstream');
    assert.equal(res.headers['retry-after'], '5');
    assert.doesNotMatch(JSON.stringify(res.body), /SQLITE|full|page/i);
  };

  test('a full disk (max_page_count): a problem document, no corruption, earlier data intact, and writes resume with room', async () => {
    const course = await t.make.course(c.org);
    for (let i = 0; i < 3; i++) assert.equal((await create(course.id, i)).status, 201);
    const earlier = await sectionsOf(course.id);
    const [{ page_count: pages }] = await pragma('page_count');
    await pragma(`max_page_count = ${Number(pages) + 20}`);
    try {
      const answers = [];
      for (let i = 0; i < 50; i++) {
        const res = await create(course.id, 100 + i);
        answers.push(res.status);
        if (res.status !== 201) {
          assertUnavailable(res);
          break;
        }
      }
      assert.equal(answers.at(-1), 502, `answers: ${answers.join(',')}`);
      // Reads still work; a refused write left nothing behind.
      const read = await t.api.request({ host: c.org.address, key: c.key, path: `/sections/${earlier[0].id}` });
      assert.equal(read.status, 200);
      assert.equal((await sectionsOf(course.id)).length, earlier.length + answers.length - 1);
    } finally {
      await pragma('max_page_count = 4294967294');
    }
    assert.deepEqual(await pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    assert.deepEqual((await sectionsOf(course.id)).slice(0, 3), earlier);
    assert.equal((await create(course.id, 999)).status, 201);
  });

  test('a read-only database: writes get a problem document, reads go on', async () => {
    const s = await t.make.section(c.org, { title: 'Before' });
    await pragma('query_only = on');
    try {
      const res = await t.api.request({ host: c.org.address, key: c.key, method: 'PATCH', path: `/sections/${s.id}`, body: { title: 'After' } });
      assertUnavailable(res);
      assert.equal((await t.api.request({ host: c.org.address, key: c.key, path: `/sections/${s.id}` })).body.title, 'Before');
    } finally {
      await pragma('query_only = off');
    }
    assert.deepEqual(await pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  });
});
