// examples/roster-sync.ts, run as an integrator runs it (`node examples/roster-sync.ts roster.csv`) against a
// real server process on the test's database: people are upserted first (by their SIS id) and then their
// enrolments; a first sync creates, a second one finds every person and enrolment unchanged,
// per-row failures are reported with their codes, and a run cut off half-way resumes with the same
// Idempotency-Keys so that no enrolment is applied (or announced) twice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { startTestApp, type TestContext } from './support/harness.ts';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import type { Caller } from './support/factories.ts';

const root = path.join(import.meta.dirname, '..');
const script = path.join(root, 'examples', 'roster-sync.ts');

/**
 * Forwards to the server; from the `cutFrom`-th bulk request on, it still forwards each request (the server
 * applies it) but drops the connection instead of answering: the worst failure a client can meet, an effect
 * whose answer is lost.
 */
async function startFlakyProxy(target: string) {
  // What each bulk request (people's and enrolments') asked for and what each answer it received applied.
  const state = { cutFrom: Infinity, bulkRequests: 0, prefer: [] as unknown[], applied: [] as Array<[number | undefined, unknown, unknown]> };
  const server = http.createServer((req, res) => {
    const number = req.url?.endsWith('/enrolments/bulk') ? ++state.bulkRequests : 0;
    if (req.url?.endsWith('/bulk')) state.prefer.push(req.headers.prefer);
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      if (req.url?.endsWith('/bulk') && number < state.cutFrom) state.applied.push([answer.statusCode, answer.headers['idempotency-replayed'], answer.headers['preference-applied']]);
      if (number >= state.cutFrom) {
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('examples/roster-sync.ts against a server process', () => {
  let t: TestContext;
  let server: ServerProcess;
  let serverUrl: string;
  let c: Caller;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-roster-'));
  before(async () => {
    t = await startTestApp();
    // The organisation at 127.0.0.1, so that the URL an integrator would use reaches it.
    c = await t.make.caller({ org: await t.make.org({ address: '127.0.0.1' }) });
    server = startServerProcess(t.processEnv);
    serverUrl = await server.url;
  });
  after(async () => {
    await server.stop();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function roster(name: string, people: number) {
    const courses = [await t.make.course(c.org, { external_id: `${name}-bio` }), await t.make.course(c.org, { external_id: `${name}-chem` })];
    for (const course of courses) await t.make.enrolmentMethod(c.org, { course_id: course.id });
    const lines = ['enrolment_id,person_id,email,name,course_code,role,status,starts_at,ends_at'];
    for (let i = 0; i < people; i++) {
      const person = `${name}-p${i},p${i}@${name}.example.test,"Person ${i}, ${name}"`;
      lines.push(`${name}-${i}-bio,${person},${name}-bio,,,,`);
      lines.push(`${name}-${i}-chem,${person},${name}-chem,${i === 0 ? 'teacher' : 'student'},active,2027-01-10T08:00:00Z,"2027-06-30T23:59:59Z"`);
    }
    return { courses, lines };
  }
  const usersOf = (prefix: string) => t.database.db.selectFrom('people').selectAll().where('organisation_id', '=', c.org.id).where('external_id', 'like', `${prefix}%`).orderBy('external_id').execute();

  const run = async (file: string, baseUrl: string, batchSize = 500) => {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [script, file], {
        env: { PATH: process.env.PATH ?? '', ATRIUM_BASE_URL: `${baseUrl}/api/v1`, ATRIUM_API_KEY: c.key, ROSTER_BATCH_SIZE: String(batchSize) },
      });
      return { code: 0, stdout };
    } catch (err) {
      return { code: (err as { code: number }).code, stdout: (err as { stdout: string }).stdout };
    }
  };
  const enrolmentsOf = (courseIds: string[]) => t.database.db.selectFrom('enrolments').selectAll().where('course_id', 'in', courseIds).orderBy('external_id').execute();
  const createdEvents = async (ids: string[]) =>
    (await t.database.db.selectFrom('outbox_events').select('data').where('organisation_id', '=', c.org.id).where('type', '=', 'enrolment.created').execute()).filter((e) => ids.includes(JSON.parse(e.data).id));

  test('a first sync creates; a second finds everything unchanged and writes nothing; bad rows are reported with their codes', async () => {
    const { courses, lines } = await roster('night', 3);
    // A person the SIS still lists but whom the school removed from Atrium.
    const gone = await t.api.request({ host: c.org.address, key: c.key, method: 'PUT', path: '/users/ext:night-gone', body: { email: 'gone@night.example.test', name: 'Gone' } });
    assert.equal(gone.status, 201);
    await t.app.services.people.remove(c.org.id, gone.body.id);
    lines.push(`night-gone,night-gone,gone@night.example.test,Gone,night-bio,,,,`, `night-nowhere,night-p0,p0@night.example.test,"Person 0, night",no-such-course,,,,`);
    const file = path.join(dir, 'night.csv');
    fs.writeFileSync(file, `${lines.join('\r\n')}\r\n`);

    const first = await run(file, serverUrl);
    assert.equal(first.code, 0, first.stdout);
    assert.match(first.stdout, /^people: created 3, updated 0, unchanged 0, failed 1$/m);
    assert.match(first.stdout, /^enrolments: created 6, updated 0, unchanged 0, failed 2$/m);
    assert.match(first.stdout, /^ {2}user\.deleted: 1 \(lines 8\)$/m);
    assert.match(first.stdout, /^ {2}course\.not_found: 1 \(lines 9\)$/m);
    const rows = await enrolmentsOf(courses.map((x) => x.id));
    assert.equal(rows.length, 6);
    const users = await usersOf('night-p');
    assert.deepEqual(users.map((u) => [u.external_id, u.email, u.name]), [0, 1, 2].map((i) => [`night-p${i}`, `p${i}@night.example.test`, `Person ${i}, night`]));
    assert.deepEqual(rows.map((r) => r.person_id).sort(), users.flatMap((u) => [u.id, u.id]).sort(), 'each person in both courses');
    const teacher = rows.find((r) => r.external_id === 'night-0-chem')!;
    assert.deepEqual([teacher.role, teacher.starts_at, teacher.ends_at], ['teacher', '2027-01-10T08:00:00.000Z', '2027-06-30T23:59:59.000Z']);
    assert.equal(fs.existsSync(`${file}.sync-state.json`), false, 'a completed run leaves no state');

    const second = await run(file, serverUrl);
    assert.equal(second.code, 0, second.stdout);
    assert.match(second.stdout, /^people: created 0, updated 0, unchanged 3, failed 1$/m);
    assert.match(second.stdout, /^enrolments: created 0, updated 0, unchanged 6, failed 2$/m);
    assert.deepEqual(await usersOf('night-p'), users, 'the same people, not new ones, and none changed, not even updated_at');
    assert.deepEqual(await enrolmentsOf(courses.map((x) => x.id)), rows, 'no row changed, not even updated_at');
    assert.equal((await createdEvents(rows.map((r) => r.id))).length, 6);

    // One changed line is one update.
    const suspended = lines.map((line) => (line.startsWith('night-1-chem,') ? line.replace(',student,active,', ',student,suspended,') : line));
    fs.writeFileSync(file, `${suspended.join('\r\n')}\r\n`);
    const third = await run(file, serverUrl);
    assert.match(third.stdout, /^enrolments: created 0, updated 1, unchanged 5, failed 2$/m);
  });

  test('a run cut off half-way resumes with the same keys: every enrolment applied and announced once', async () => {
    const { courses, lines } = await roster('cut', 3);
    const file = path.join(dir, 'cut.csv');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const proxy = await startFlakyProxy(serverUrl);
    try {
      // Three batches of two; the answer to the second (and to its retries) is lost after the server applied it.
      proxy.state.cutFrom = 2;
      const cut = await run(file, proxy.url, 2);
      assert.notEqual(cut.code, 0, cut.stdout);
      assert.ok(fs.existsSync(`${file}.sync-state.json`), 'the state of the unfinished run stays');
      const applied = await enrolmentsOf(courses.map((x) => x.id));
      assert.equal(applied.length, 4, 'batches 1 and 2 were applied; the client saw only the first');

      proxy.state.cutFrom = Infinity;
      const resumed = await run(file, proxy.url, 2);
      assert.equal(resumed.code, 0, resumed.stdout);
      assert.match(resumed.stdout, /^resuming the run of /m);
      assert.match(resumed.stdout, /^people: created 3, updated 0, unchanged 0, failed 0$/m, 'replayed batches report what they did the first time');
      assert.match(resumed.stdout, /^enrolments: created 6, updated 0, unchanged 0, failed 0$/m);
      assert.equal((await usersOf('cut-p')).length, 3, 'each person created once');
      const rows = await enrolmentsOf(courses.map((x) => x.id));
      assert.equal(rows.length, 6);
      assert.deepEqual(rows.slice(0, 4).map((r) => r.id).sort(), applied.map((r) => r.id).sort(), 'nothing applied twice');
      assert.equal((await createdEvents(rows.map((r) => r.id))).length, 6, 'one enrolment.created per enrolment');
      // It only counts, so it asks for ids only; the batches replayed from their records answer minimal too.
      assert.ok(proxy.state.prefer.length > 0 && proxy.state.prefer.every((p) => p === 'return=minimal'), JSON.stringify(proxy.state.prefer));
      assert.ok(proxy.state.applied.every(([status, , applied]) => status === 200 && applied === 'return=minimal'), JSON.stringify(proxy.state.applied));
      assert.ok(proxy.state.applied.some(([, replayed]) => replayed === 'true'), 'some batches were replays');
    } finally {
      await proxy.close();
    }
  });
});
