// A read by id on SQLite runs from its admission to its answer in one call (src/maybe-async.ts): node:sqlite
// answers at once and the API key's check is cached, so no step has anything to wait for, and none may make a
// promise that it does not need. Counted with an async_hooks init hook while the server answers one request sent
// over a real socket by a client of callbacks (which makes no promise of its own): the read may make no more than
// the bare `GET /healthz`, whose handler is an `async` function. Before this path, a read made 34 where the bare
// route made 4. An uncached credential and a 404 still come through, by the same path (promises where they wait).
// A PATCH makes the promises of waiting for its group's COMMIT, and none in its transaction's body (src/db/in-transaction.ts).
// SQLite only: on PostgreSQL every read waits on a socket.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { appOnOneSocket } from './support/one-socket-app.ts';
import { createPromiseCounter, sqliteOnly } from './support/promise-counter.ts';

describe('a read by id on SQLite makes no promise of its own, nor the body of a write', { skip: sqliteOnly }, () => {
  const app = appOnOneSocket();
  const counter = createPromiseCounter();

  /** One request over the socket; calls back with its status and body. */
  function get(path: string, key: string, done: (status: number, body: string) => void): void {
    http.get({ port: app.port, path, agent: app.agent, headers: { host: app.caller.org.address, authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => done(res.statusCode!, body));
    });
  }

  /** The promises the process made while `path` was requested `times` times, one after another, per request. */
  function promisesPerRequest(path: string, times = 50): Promise<{ perRequest: number; status: number }> {
    return new Promise((resolve) => {
      let left = times;
      let status = 0;
      counter.start();
      const next = () =>
        get(path, app.caller.key, (answered) => {
          status = answered;
          if (--left > 0) return next();
          resolve({ perRequest: counter.stop() / times, status });
        });
      next();
    });
  }

  async function create(path: string, body: unknown): Promise<string> {
    const res = await app.t.api.request({ host: app.caller.org.address, key: app.caller.key, method: 'POST', path, body });
    assert.equal(res.status, 201, res.raw);
    return (res.body as { id: string }).id;
  }

  test('sections, courses, categories and enrolment methods: no more promises than the bare route', async () => {
    const courseId = await create('/courses', { fullname: 'Synchronous reads', shortname: 'SYNC-1' });
    const reads = {
      section: `/api/v1/sections/${await create('/sections', { course_id: courseId, title: 'Week 1' })}`,
      course: `/api/v1/courses/${courseId}`,
      category: `/api/v1/categories/${await create('/categories', { name: 'Reads' })}`,
      'enrolment method': `/api/v1/enrolment_methods/${await create('/enrolment_methods', { course_id: courseId, type: 'manual' })}`,
    };
    // Warm: the key verified and cached, the statements prepared.
    for (const path of ['/healthz', ...Object.values(reads)]) await promisesPerRequest(path, 5);
    const bare = await promisesPerRequest('/healthz');
    assert.equal(bare.status, 200);
    for (const [kind, path] of Object.entries(reads)) {
      const read = await promisesPerRequest(path);
      assert.equal(read.status, 200, kind);
      assert.ok(read.perRequest <= bare.perRequest, `a ${kind}'s read made ${read.perRequest} promises, the bare route ${bare.perRequest}`);
    }
  });

  test("a section's PATCH: its transaction's body (service, repository, event, audit entry) makes no promise", async () => {
    const sectionId = await create('/sections', { course_id: await create('/courses', { fullname: 'Synchronous writes', shortname: 'SYNC-3' }), title: 'Week 1' });
    let title = 0;
    /** The promises made per PATCH, each a new title (so that each writes), one after another. */
    const perPatch = (times: number) =>
      new Promise<number>((resolve, reject) => {
        let left = times;
        counter.start();
        const next = () => {
          const req = http.request({ port: app.port, method: 'PATCH', path: `/api/v1/sections/${sectionId}`, agent: app.agent, headers: { host: app.caller.org.address, authorization: `Bearer ${app.caller.key}`, 'content-type': 'application/json' } }, (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode !== 200) return reject(new Error(`PATCH answered ${res.statusCode}`));
              if (--left > 0) return next();
              resolve(counter.stop() / times);
            });
          });
          req.end(JSON.stringify({ title: `Week ${++title}` }));
        };
        next();
      });
    await perPatch(5);
    await promisesPerRequest('/healthz', 5);
    const bare = (await promisesPerRequest('/healthz')).perRequest;
    const patch = await perPatch(50);
    // What a write still makes beyond the bare route's, 6: the group's promise of its commit and the retry around
    // it (a statement a migration outdated), the runner's answer made once it commits, the route's wait for that.
    // With every layer of the body async it made 23 more, and 9 while the runner's write was an async function
    // (bench/README.md).
    assert.ok(patch - bare <= 6, `a PATCH made ${patch} promises, the bare route ${bare}: 6 more at most`);
  });

  test('a key not yet verified, a missing section and a wrong key are answered as before', async () => {
    const fresh = await app.t.make.caller({ org: app.caller.org });
    const sectionId = await create('/sections', { course_id: await create('/courses', { fullname: 'Fresh key', shortname: 'SYNC-2' }), title: 'Week 1' });
    const answered = (path: string, key: string) => new Promise<{ status: number; body: string }>((resolve) => get(path, key, (status, body) => resolve({ status, body })));
    const first = await answered(`/api/v1/sections/${sectionId}`, fresh.key);
    assert.equal(first.status, 200, first.body);
    assert.equal(JSON.parse(first.body).id, sectionId);
    const missing = await answered('/api/v1/sections/01930000-0000-7000-8000-000000000000', app.caller.key);
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body).code, 'section.not_found');
    const wrong = await answered(`/api/v1/sections/${sectionId}`, 'atr_live_notakey');
    assert.equal(wrong.status, 401);
  });
});
