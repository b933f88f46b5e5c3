// A rolling upgrade on PostgreSQL: the processes of the previous release keep serving while the next release's
// migration adds a column to a table their prepared statements read with `*`. PostgreSQL then refuses each
// such statement once on every connection that parsed it ("cached plan must not change result type",
// src/db/outdated-plans.ts). A request's write must not fail for it: its transaction runs again, whole, on a
// connection that parsed nothing before the migration, and takes effect once.
// PostgreSQL only: SQLite prepares again by itself when its schema changes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { dialectUnderTest, startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

const skip = dialectUnderTest === 'postgres' ? false : 'PostgreSQL only: named prepared statements outlive a migration there (run with TEST_DATABASE_URL=postgres://…)';

describe('writes across a migration that outdates their prepared statements', { skip }, () => {
  let t: TestContext;
  let caller: Caller;
  before(async () => ({ t, caller } = await startTestAppWithCaller()));
  after(() => t?.close());

  test('keyed and plain PATCHes sent at once after a column was added all succeed, each with one event; a keyed one replays', async () => {
    const sections = await Promise.all(Array.from({ length: 6 }, () => t.make.section(caller.org)));
    const patch = (id: string, title: string, key?: string) =>
      t.api.request({ method: 'PATCH', host: caller.org.address, key: caller.key, path: `/sections/${id}`, body: { title }, headers: key ? { 'idempotency-key': key } : {} });
    const patchAll = (round: string) =>
      Promise.all(sections.flatMap((s, i) => [patch(s.id, `${round} keyed ${i}`, `${round}-${s.id}`), patch(s.id, `${round} plain ${i}`)]));
    // Every statement of both paths parsed on each of the pool's connections.
    for (const res of await patchAll('before')) assert.equal(res.status, 200, res.raw);
    const eventsBefore = await sectionEvents();

    await sql`alter table sections add column rollout_probe text`.execute(t.database.db);
    const answers = await patchAll('after');
    assert.deepEqual(answers.map((res) => res.status), Array(answers.length).fill(200), answers.find((res) => res.status !== 200)?.raw);
    // Each took effect once: one event each, no more (a run that failed left nothing).
    assert.equal((await sectionEvents()) - eventsBefore, answers.length);
    const titles = await t.database.db.selectFrom('sections').select(['id', 'title']).where('id', 'in', sections.map((s) => s.id)).execute();
    for (const row of titles) assert.match(row.title ?? '', /^after (keyed|plain) \d$/);
    // The keyed ones recorded their answer: the same key replays it.
    const replay = await patch(sections[0].id, 'after keyed 0', `after-${sections[0].id}`);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotency-replayed'], 'true');
  });

  async function sectionEvents(): Promise<number> {
    const row = await t.database.db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organisation_id', '=', caller.org.id)
      .where('type', '=', 'section.updated')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
});
