// Input never breaks it (docs/conventions.md#errors): the classes of request that once answered 500 or
// broke the status table, each refused in the one place that reads bodies, parameters and request lines.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

const nested = (depth: number, leaf: unknown = 'x'): unknown => {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
};
/** Text of `depth` nested arrays, built without recursion (JSON.stringify would overflow on it). */
const deepArrayText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('input never breaks it', () => {
  let t: TestContext;
  let c: Caller;
  let address: string;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
    address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  const as = () => ({ host: c.org.address, key: c.key });
  const rowsOf = async (table: 'sections' | 'wiki_pages', id: string) => t.database.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  describe('depth', () => {
    test('64 levels of JSON are accepted in a free-form field; 65 are a 422 request.too_deep at the pointer', async () => {
      const page = await t.make.wikiPage(c.org);
      // The body object is level 1, `body` holds the other 63.
      const ok = await t.api.request({ ...as(), method: 'PATCH', path: `/wiki_pages/${page.id}`, body: { body: nested(63) } });
      assert.equal(ok.status, 200, ok.raw);
      const before = await rowsOf('wiki_pages', page.id);
      const res = await t.api.request({ ...as(), method: 'PATCH', path: `/wiki_pages/${page.id}`, body: { body: nested(64) } });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'request.too_deep');
      assert.equal(res.body.category, 'validation');
      assert.equal(res.body.errors.length, 1);
      assert.match(res.body.errors[0].path, /^\/body(\/(0|k))+$/);
      assert.equal(res.body.errors[0].path.split('/').length - 1, 64);
      assert.deepEqual(await rowsOf('wiki_pages', page.id), before);
    });

    test('100,000 levels with an Idempotency-Key: a 422, never a 500, and nothing recorded', async () => {
      const page = await t.make.wikiPage(c.org);
      const key = 'deep-and-idempotent';
      const res = await t.api.request({
        ...as(),
        method: 'PATCH',
        path: `/wiki_pages/${page.id}`,
        payload: `{"body":${deepArrayText(100_000)}}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'request.too_deep');
      const records = await t.database.db.selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', '=', key).execute();
      assert.equal(records.length, 0);
    });
  });

  describe('NUL characters', () => {
    test('in a body string: a 422 at its pointer, and nothing changes', async () => {
      const s = await t.make.section(c.org, { title: 'Before' });
      const res = await t.api.request({ ...as(), method: 'PATCH', path: `/sections/${s.id}`, body: { title: 'a\u0000b', visible: false } });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'validation.invalid_body');
      assert.deepEqual(res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/title', 'invalid_character']]);
      assert.equal((await rowsOf('sections', s.id)).title, 'Before');
    });

    test('deep in a body (a summary, a bulk item\'s data): a 422 at that pointer', async () => {
      const course = await t.make.course(c.org);
      const summary = await t.api.request({ ...as(), method: 'POST', path: '/sections', body: { course_id: course.id, title: 'T', summary: { format: 'plain', content: '\u0000' } } });
      assert.equal(summary.status, 422);
      assert.deepEqual(summary.body.errors.map((e: { path: string }) => e.path), ['/summary/content']);
      const lesson = await t.make.lesson(c.org);
      const bulk = await t.api.request({
        ...as(),
        method: 'POST',
        path: '/lesson_pages/bulk',
        headers: { 'idempotency-key': 'nul-bulk' },
        body: { operations: [{ ref: 'a', op: 'create', data: { lesson_id: lesson.id, title: 'Page\u0000' } }] },
      });
      assert.equal(bulk.status, 200);
      assert.equal(bulk.body.results[0].status, 422);
      assert.match(bulk.body.results[0].error.detail, /\/operations\/0\/data\/title/);
      assert.equal((await t.database.db.selectFrom('lesson_pages').select('id').where('lesson_id', '=', lesson.id).execute()).length, 0);
    });

    test('free-form JSON may hold NUL: it is stored as JSON text, escaped', async () => {
      const page = await t.make.wikiPage(c.org);
      const res = await t.api.request({ ...as(), method: 'PATCH', path: `/wiki_pages/${page.id}`, body: { body: { text: 'a\u0000b' } } });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.body, { text: 'a\u0000b' });
    });

    test('in an ext: path id (read and upsert) and in a query value: a 422 naming the parameter', async () => {
      for (const method of ['GET', 'PUT'] as const) {
        const res = await t.api.request({ ...as(), method, path: '/sections/ext:a%00b', ...(method === 'PUT' ? { body: { course_id: (await t.make.course(c.org)).id, title: 'T' } } : {}) });
        assert.equal(res.status, 422, `${method}: ${res.raw}`);
        assert.equal(res.body.code, 'validation.invalid_parameter');
        assert.match(res.body.detail, /`external_id`/);
        assert.equal(res.body.errors, undefined);
      }
      const query = await t.api.request({ ...as(), path: '/email_templates/enrolment_welcome/versions?language=en%00' });
      assert.equal(query.status, 422);
      assert.equal(query.body.code, 'validation.invalid_parameter');
      assert.match(query.body.detail, /`language`/);
    });
  });

  describe('__proto__ and constructor', () => {
    test('a valid JSON body with such keys is an unknown field at each pointer, never malformed, never merged', async () => {
      const s = await t.make.section(c.org, { title: 'Before' });
      const res = await t.api.request({
        ...as(),
        method: 'PATCH',
        path: `/sections/${s.id}`,
        payload: '{"title":"After","__proto__":{"visible":false},"summary":{"format":"plain","content":"x","constructor":{"prototype":{"polluted":true}}}}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'validation.invalid_body');
      assert.deepEqual(res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [
        ['/__proto__', 'unknown_field'],
        ['/summary/constructor', 'unknown_field'],
      ]);
      const row = await rowsOf('sections', s.id);
      assert.equal(row.title, 'Before');
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    test('also inside free-form JSON', async () => {
      const page = await t.make.wikiPage(c.org);
      const res = await t.api.request({ ...as(), method: 'PATCH', path: `/wiki_pages/${page.id}`, payload: '{"body":{"a":[{"__proto__":1}]}}', headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 422);
      assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), ['/body/a/0/__proto__']);
    });
  });

  describe('content types', () => {
    for (const [name, headers] of [
      ['no Content-Type', {}],
      ['text/plain', { 'content-type': 'text/plain' }],
      ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['JSON in Latin-1', { 'content-type': 'application/json; charset=latin1' }],
      ['a JSON-like media type', { 'content-type': 'application/vnd.api+json' }],
    ] as Array<[string, Record<string, string>]>) {
      test(`a body with ${name} is a 422 request.unsupported_media_type, and nothing changes`, async () => {
        const s = await t.make.section(c.org, { title: 'Before' });
        const res = await t.api.request({ ...as(), method: 'PATCH', path: `/sections/${s.id}`, payload: '{"title":"After"}', headers });
        assert.equal(res.status, 422, res.raw);
        assert.equal(res.body.code, 'request.unsupported_media_type');
        assert.equal(res.body.category, 'validation');
        assert.equal((await rowsOf('sections', s.id)).title, 'Before');
      });
    }
  });

  describe('what the HTTP parser refuses, on a real socket', () => {
    const rawRequest = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(address);
        const socket = net.connect(Number(port), '127.0.0.1');
        let answer = '';
        socket.on('data', (d) => (answer += d));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
        socket.write(text);
      });
    const problemOf = (answer: string) => ({ status: Number(answer.split(' ')[1]), headers: answer.split('\r\n\r\n')[0], body: JSON.parse(answer.split('\r\n\r\n')[1]) });

    test('a request line over 16 KiB is a 413 request.too_large problem document', async () => {
      const answer = problemOf(await rawRequest(`GET /api/v1/sections/ext:${'x'.repeat(20_000)} HTTP/1.1\r\nHost: ${c.org.address}\r\n\r\n`));
      assert.equal(answer.status, 413);
      assert.match(answer.headers, /content-type: application\/problem\+json/i);
      assert.equal(answer.body.code, 'request.too_large');
      assert.equal(answer.body.category, 'quota');
      assert.match(answer.headers, new RegExp(`request-id: ${answer.body.request_id}`, 'i'));
    });

    test('bytes that are not HTTP are a 422 problem document', async () => {
      const answer = problemOf(await rawRequest('HELLO THERE\r\n\r\n'));
      assert.equal(answer.status, 422);
      assert.equal(answer.body.code, 'request.malformed');
    });
  });
});
