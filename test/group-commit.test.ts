// Writes that share a commit (src/db/sqlite-group-commit.ts; docs/decisions.md#operating-it), through the
// real app: concurrent writes whose transactions run in one group, one of which fails, leave the others
// committed and the failing one absent, with no event; and a server process killed with
// SIGKILL in the middle of a stream of concurrent writes loses none that it answered 2xx. The first runs on the
// database under test (on PostgreSQL each request keeps its own transaction, and the outcome must be the same);
// the second on SQLite, whose commit it is about.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { openDatabase } from '../src/db/database.ts';
import { dialectUnderTest, startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { startServerProcess } from './support/server-process.ts';
import { until } from './support/wait.ts';

describe('concurrent writes, one of which fails', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  test('the failing write is absent, with no event; every other write is committed with its event', async () => {
    const lesson = await t.make.lesson(c.org);
    // Two of the ten creates ask for the same external_id: whichever runs second fails (409) inside the group.
    const titles = Array.from({ length: 10 }, (_, i) => `Grouped ${i}`);
    const externalIdOf = (i: number) => (i === 3 || i === 7 ? 'clash' : `grouped-${i}`);
    const commitsBefore = t.database.commitStats?.();
    const responses = await Promise.all(
      titles.map((title, i) =>
        t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/lesson_pages', body: { lesson_id: lesson.id, title, external_id: externalIdOf(i) } }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 9, `statuses ${statuses}`);
    const failed = statuses.findIndex((s) => s !== 201);
    assert.ok(failed === 3 || failed === 7);
    assert.equal(responses[failed].body.code, 'resource.external_id_taken');

    const pages = await t.database.db.selectFrom('lesson_pages').select(['id', 'title']).where('lesson_id', '=', lesson.id).execute();
    assert.deepEqual(pages.map((p) => p.title).sort(), titles.filter((_, i) => i !== failed).sort());
    const events = await t.database.db.selectFrom('outbox_events').select('data').where('organisation_id', '=', c.org.id).where('type', '=', 'lesson_page.created').execute();
    assert.deepEqual(events.map((e) => JSON.parse(e.data).id as string).sort(), pages.map((p) => p.id).sort());

    if (dialectUnderTest === 'sqlite') {
      // They did share commits: fewer commits than the nine transactions that committed.
      const commitsAfter = t.database.commitStats!();
      const commits = commitsAfter.commits - commitsBefore!.commits;
      assert.ok(commits < 9, `${commits} commits for nine transactions`);
      assert.ok(commitsAfter.transactions - commitsBefore!.transactions >= 9);
    }
  });
});

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** One request on a keep-alive agent; rejects when the connection fails (the server was killed). */
function send(base: string, agent: http.Agent, method: string, pathname: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${pathname}`, { method, agent, headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('a SQLite server killed with SIGKILL during a stream of grouped writes', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ dialect: 'sqlite' });
    c = await t.make.caller();
  });
  after(() => t.close());

  test('every write it answered 2xx is in the database when it is opened again', { timeout: 120_000 }, async () => {
    const lesson = await t.make.lesson(c.org);
    const sections = await Promise.all(Array.from({ length: 8 }, () => t.make.section(c.org)));
    const server = startServerProcess({ ...t.processEnv, ATRIUM_ROLES: 'api' });
    const headers = { host: c.org.address, authorization: `Bearer ${c.key}` };
    // Per PATCH loop (one per section), the number of the last title answered 2xx; per create, its id and title.
    const lastPatched = new Map<string, number>();
    const patchesAnswered = new Map<string, number>();
    const created: Array<{ id: string; title: string }> = [];
    let answered = 0;
    let unanswered = 0;
    let stop = false;
    const agents: http.Agent[] = [];
    try {
      const base = await server.url;
      await until(async () => (await fetch(`${base}/readyz`)).status === 200, 'the server to be ready', 30_000);
      const loop = async (work: (agent: http.Agent, i: number) => Promise<void>) => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        agents.push(agent);
        for (let i = 1; !stop; i++) {
          try {
            await work(agent, i);
            answered++;
          } catch {
            unanswered++;
            return;
          }
        }
      };
      const patchLoop = (sectionId: string) =>
        loop(async (agent, i) => {
          const res = await send(base, agent, 'PATCH', `/api/v1/sections/${sectionId}`, headers, { title: `Killed ${i}` });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          lastPatched.set(sectionId, i);
          patchesAnswered.set(sectionId, (patchesAnswered.get(sectionId) ?? 0) + 1);
        });
      const createLoop = (n: number) =>
        loop(async (agent, i) => {
          const title = `Created ${n}.${i}`;
          const res = await send(base, agent, 'POST', '/api/v1/lesson_pages', headers, { lesson_id: lesson.id, title });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          created.push({ id: res.body!.id as string, title });
        });
      const loops = [...sections.map((s) => patchLoop(s.id)), ...Array.from({ length: 8 }, (_, n) => createLoop(n))];
      await until(() => answered >= 400, 'the writes to be under way', 60_000);
      // Sixteen clients keep the server committing group after group: the kill lands in the middle of one.
      server.child.kill('SIGKILL');
      await server.exited;
      stop = true;
      await Promise.all(loops);
    } finally {
      stop = true;
      for (const agent of agents) agent.destroy();
      await server.stop('SIGKILL');
    }
    assert.ok(unanswered > 0, 'some writes were in flight when the server was killed');

    // Opened again, as the next process would: SQLite replays the WAL the killed process left.
    const reopened = openDatabase({ sqliteFile: path.join(t.processEnv.DATA_DIR, 'atrium.sqlite') });
    try {
      const { db } = reopened;
      const pages = new Map((await db.selectFrom('lesson_pages').select(['id', 'title']).where('lesson_id', '=', lesson.id).execute()).map((p) => [p.id, p.title]));
      const lost = created.filter((p) => pages.get(p.id) !== p.title);
      assert.deepEqual(lost, [], `${lost.length} of ${created.length} answered creates are missing`);
      for (const section of sections) {
        const answeredUpTo = lastPatched.get(section.id) ?? 0;
        const row = await db.selectFrom('sections').select('title').where('id', '=', section.id).executeTakeFirstOrThrow();
        // The title answered last, or the one in flight when the server was killed (committed, never answered).
        const number = row.title?.startsWith('Killed ') ? Number(row.title.slice('Killed '.length)) : 0;
        assert.ok(number === answeredUpTo || number === answeredUpTo + 1, `section holds ${row.title}, the last answered was Killed ${answeredUpTo}`);
        const events = await db.selectFrom('outbox_events').select('id').where('type', '=', 'section.updated').where('data', 'like', `%"id":"${section.id}"%`).execute();
        assert.ok(events.length >= (patchesAnswered.get(section.id) ?? 0), `${events.length} events for ${patchesAnswered.get(section.id)} answered PATCHes`);
      }
    } finally {
      await reopened.close();
    }
  });
});
