import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

describe('enrolment methods', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => t.api.request({ host: c.org.address, key: c.key, method, path, body });
  const enrolSomeone = async (methodId: string) => {
    const p = await t.make.person(c.org, { roles: [] });
    return t.app.services.enrolmentMethods.enrol(t.database.db, c.org.id, methodId, p.id);
  };

  describe('DELETE /enrolment_methods/{id} (operation 7)', () => {
    test('204 for a method without enrolments: it leaves lists, stays readable, and its tombstone appears', async () => {
      const m = await t.make.enrolmentMethod(c.org);
      const res = await call('DELETE', `/enrolment_methods/${m.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.raw, '');
      const listed = await call('GET', `/enrolment_methods?course_id=${m.course_id}`);
      assert.deepEqual(listed.body.data, []);
      assert.notEqual((await call('GET', `/enrolment_methods/${m.id}`)).body.deleted_at, null);
      const tombstones = await call('GET', '/enrolment_methods/deletions');
      assert.ok(tombstones.body.data.some((d: { id: string }) => d.id === m.id));
    });

    test('409 while the method has active enrolments; nothing changes', async () => {
      const m = await t.make.enrolmentMethod(c.org);
      await enrolSomeone(m.id);
      await enrolSomeone(m.id);
      const res = await call('DELETE', `/enrolment_methods/${m.id}`);
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'enrolment_method.has_enrolments');
      assert.match(res.body.detail, /2 active enrolment/);
      assert.equal((await call('GET', `/enrolment_methods/${m.id}`)).body.deleted_at, null);
      const active = await t.database.db.selectFrom('enrolments').select('status').where('enrolment_method_id', '=', m.id).execute();
      assert.deepEqual(active.map((e) => e.status), ['active', 'active']);
    });

    test('unenrol=true ends its enrolments with it, and the event says so', async () => {
      const m = await t.make.enrolmentMethod(c.org);
      await enrolSomeone(m.id);
      const res = await call('DELETE', `/enrolment_methods/${m.id}?unenrol=true`);
      assert.equal(res.status, 204);
      const rows = await t.database.db.selectFrom('enrolments').select(['id', 'deleted_at']).where('enrolment_method_id', '=', m.id).execute();
      assert.notEqual(rows[0].deleted_at, null);
      const ended = await call('GET', '/enrolments/deletions');
      assert.ok(ended.body.data.some((d: { id: string }) => d.id === rows[0].id), 'the ended enrolment has its tombstone');
      const event = await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('type', '=', 'enrolment_method.deleted').orderBy('id', 'desc').executeTakeFirstOrThrow();
      assert.equal(JSON.parse(event.data).id, m.id);
      assert.match(JSON.parse(event.data).summary, /1 enrolment\(s\) ended/);
    });

    test('404 for an unknown or malformed id; 409 when already deleted; 422 for a bad unenrol value', async () => {
      for (const id of ['01a1ffb1-ef6f-770b-ba7c-b487911c9252', 'nope']) {
        const res = await call('DELETE', `/enrolment_methods/${id}`);
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'enrolment_method.not_found');
      }
      const m = await t.make.enrolmentMethod(c.org);
      assert.equal((await call('DELETE', `/enrolment_methods/${m.id}`)).status, 204);
      const again = await call('DELETE', `/enrolment_methods/${m.id}`);
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'enrolment_method.deleted');
      const other = await t.make.enrolmentMethod(c.org);
      const bad = await call('DELETE', `/enrolment_methods/${other.id}?unenrol=maybe`);
      assert.equal(bad.status, 422);
      assert.match(bad.body.detail, /`unenrol`/);
      assert.equal((await call('GET', `/enrolment_methods/${other.id}`)).body.deleted_at, null);
    });
  });

  describe('create and update', () => {
    test('settings must suit the type', async () => {
      const course = await t.make.course(c.org);
      const self = await call('POST', '/enrolment_methods', { course_id: course.id, type: 'self', settings: { enrolment_key: 'k', max_enrolments: 30 } });
      assert.equal(self.status, 201);
      assert.deepEqual(self.body.settings, { enrolment_key: 'k', max_enrolments: 30 });
      assert.equal(self.body.role, 'student');
      const cases: Array<[unknown, string]> = [
        [{ course_id: course.id, type: 'manual', settings: { enrolment_key: 'k' } }, '/settings/enrolment_key'],
        [{ course_id: course.id, type: 'cohort' }, '/settings/cohort_id'],
        [{ course_id: course.id, type: 'carrier-pigeon' }, '/type'],
        [{ course_id: course.id, type: 'self', role: 'owner' }, '/role'],
        [{ course_id: '01a1ffb1-ef6f-770b-ba7c-b487911c9252', type: 'manual' }, '/course_id'],
      ];
      for (const [body, pointer] of cases) {
        const res = await call('POST', '/enrolment_methods', body);
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(res.body.errors[0].path, pointer);
      }
      const patched = await call('PATCH', `/enrolment_methods/${self.body.id}`, { settings: { password: 'x' } });
      assert.equal(patched.status, 422);
      assert.equal(patched.body.errors[0].path, '/settings/password');
    });

    test('a type whose extension is switched off cannot be created (409), and works again once switched on', async () => {
      const course = await t.make.course(c.org);
      await t.app.services.extensions.setEnabled(t.database.db, c.org.id, 'enrol_guest', false);
      const off = await call('POST', '/enrolment_methods', { course_id: course.id, type: 'guest' });
      assert.equal(off.status, 409);
      assert.equal(off.body.code, 'extension.disabled');
      const list = await call('GET', '/extensions');
      assert.equal(list.body.data.find((e: { id: string }) => e.id === 'enrol_guest').enabled, false);
      await t.app.services.extensions.setEnabled(t.database.db, c.org.id, 'enrol_guest', true);
      assert.equal((await call('POST', '/enrolment_methods', { course_id: course.id, type: 'guest' })).status, 201);
    });

    test('a disabled method admits no one; PATCH changes only what it names', async () => {
      const m = await t.make.enrolmentMethod(c.org, { type: 'self', settings: { enrolment_key: 'abc' } });
      const res = await call('PATCH', `/enrolment_methods/${m.id}`, { status: 'disabled', name: 'Closed' });
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.status, res.body.name, res.body.settings], ['disabled', 'Closed', { enrolment_key: 'abc' }]);
      await assert.rejects(enrolSomeone(m.id), /disabled/);
    });
  });
});
