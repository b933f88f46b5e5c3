// A revision registered by the test itself: an incompatible change declared once (a dated transform of
// requests and responses) reaches callers pinned to, or asking for, the earlier revision — and the OpenAPI
// document of each revision shows that revision's shapes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { defineOperation } from '../src/operations/operation.ts';
import { createRevisions, type RevisionChange } from '../src/operations/revisions.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { resolved } from './support/openapi-schemas.ts';

const Widget = Type.Object({ id: Type.String(), title: Type.String() }, { additionalProperties: false });
const echoWidget = defineOperation({
  id: 'testEchoWidget',
  method: 'POST',
  path: '/test_widgets',
  tag: 'Test',
  summary: 'Echoes a widget',
  scope: 'courses:write',
  capability: 'course/update',
  writes: true,
  body: Type.Object({ title: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  bodyExample: { title: 'Gear' },
  success: { status: 201, schema: Widget, description: 'The widget.' },
  errors: [422],
  handler: async (_ctx, { body }) => ({ id: 'w1', title: body.title }),
});

// On 2027-01-01 the field `name` became `title`, in requests and responses.
const renameToTitle: RevisionChange = {
  revision: '2027-01-01',
  description: '`name` is now `title`.',
  operations: ['testEchoWidget'],
  upgradeRequest: ({ name, ...rest }) => ({ ...rest, title: name }),
  downgradeResponse: ({ title, ...rest }) => ({ ...rest, name: title }),
  downgradeRequestSchema: () => Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  downgradeResponseSchema: () => Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }),
};

describe('dated revisions', () => {
  let t: TestContext;
  let pinnedOld: Caller;
  let pinnedNew: Caller;
  before(async () => {
    t = await startTestApp({ operations: [echoWidget], revisions: createRevisions([renameToTitle]) });
    pinnedOld = await t.make.caller({ serviceVersion: '2026-12-31' });
    pinnedNew = await t.make.caller({ org: pinnedOld.org });
  });
  after(() => t.close());

  const post = (c: Caller, body: unknown, version?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/test_widgets',
      headers: { host: c.org.address, authorization: `Bearer ${c.key}`, ...(version ? { 'service-version': version } : {}) },
      payload: body as object,
    });

  test('a credential is pinned to the revision current when it was issued', async () => {
    const old = await post(pinnedOld, { name: 'Gear' });
    assert.equal(old.statusCode, 201, old.body);
    assert.equal(old.headers['service-version'], '2026-11-01');
    assert.deepEqual(old.json(), { id: 'w1', name: 'Gear' });
    const current = await post(pinnedNew, { title: 'Gear' });
    assert.equal(current.headers['service-version'], '2027-01-01');
    assert.deepEqual(current.json(), { id: 'w1', title: 'Gear' });
  });

  test('an OAuth token runs at the revision pinned on its client at registration', async () => {
    const current = await t.make.caller({ org: pinnedOld.org, credential: 'oauth_token' });
    const older = await t.make.caller({ org: pinnedOld.org, credential: 'oauth_token' });
    // As if this client had been registered before the 2027-01-01 revision existed.
    await t.database.db.updateTable('oauth_clients').set({ service_version: '2026-11-01' }).where('id', '=', older.keyId).execute();
    const old = await post(older, { name: 'Gear' });
    assert.equal(old.statusCode, 201, old.body);
    assert.equal(old.headers['service-version'], '2026-11-01');
    assert.deepEqual(old.json(), { id: 'w1', name: 'Gear' });
    const now = await post(current, { title: 'Gear' });
    assert.equal(now.headers['service-version'], '2027-01-01');
    assert.equal((await post(older, { title: 'Cog' }, '2027-01-01')).statusCode, 201, 'Service-Version still wins');
  });

  test('Service-Version overrides the pin, in both directions', async () => {
    const up = await post(pinnedOld, { title: 'Cog' }, '2027-03-01');
    assert.equal(up.headers['service-version'], '2027-01-01');
    assert.deepEqual(up.json(), { id: 'w1', title: 'Cog' });
    const down = await post(pinnedNew, { name: 'Cog' }, '2026-11-15');
    assert.equal(down.headers['service-version'], '2026-11-01');
    assert.deepEqual(down.json(), { id: 'w1', name: 'Cog' });
  });

  test('the old shape is validated as the old shape: an old request with the new field is refused', async () => {
    const res = await post(pinnedOld, { title: 'Gear' });
    assert.equal(res.statusCode, 422);
  });

  test('the OpenAPI document reflects the revision asked for', async () => {
    const doc = async (version?: string) =>
      (await t.app.inject({ url: '/api/v1/openapi.json', headers: { host: pinnedOld.org.address, ...(version ? { 'service-version': version } : {}) } })).json();
    const current = await doc();
    const old = await doc('2026-11-01');
    assert.equal(current.info.version, '2027-01-01');
    assert.equal(old.info.version, '2026-11-01');
    const schemaOf = (d: any) => resolved(d, d.paths['/test_widgets'].post.responses['201'].content['application/json'].schema);
    // Each revision's success bodies are components too: an earlier shape under its operation's name.
    for (const d of [current, old]) assert.deepEqual(d.paths['/test_widgets'].post.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/TestEchoWidgetResponse' });
    assert.deepEqual(Object.keys(schemaOf(current).properties), ['id', 'title']);
    assert.deepEqual(Object.keys(schemaOf(old).properties), ['id', 'name']);
    assert.deepEqual(Object.keys(resolved(old, old.paths['/test_widgets'].post.requestBody.content['application/json'].schema).properties), ['name']);
    assert.deepEqual(old.paths['/sections/{id}'].patch, current.paths['/sections/{id}'].patch, 'operations no change touches are the same');
  });
});

describe('resolving a Service-Version date (remembered after the first time)', () => {
  test('the same answer every time: the newest revision on or before the date, or none for a malformed or too early date', () => {
    const revisions = createRevisions([renameToTitle]);
    const first = revisions.list[0];
    for (let round = 0; round < 2; round++) {
      assert.equal(revisions.resolve('2026-12-31'), first);
      assert.equal(revisions.resolve('2027-01-01'), '2027-01-01');
      assert.equal(revisions.resolve('2030-06-30'), '2027-01-01');
      assert.equal(revisions.resolve('2026-02-30'), undefined, 'no such day');
      assert.equal(revisions.resolve('1999-01-01'), undefined, 'before the first revision');
      assert.equal(revisions.resolve('tomorrow'), undefined);
    }
  });

  test('answers stay right past the size of what is remembered (it starts over when full)', () => {
    const revisions = createRevisions([renameToTitle]);
    for (let day = 0; day < 3_000; day++) {
      const date = new Date(Date.UTC(2027, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
      assert.equal(revisions.resolve(date), '2027-01-01');
    }
    assert.equal(revisions.resolve('2026-12-31'), revisions.list[0]);
  });
});
