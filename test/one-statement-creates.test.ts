// The creates of sections, enrolments, enrolment methods and users without an Idempotency-Key are, on PostgreSQL, one
// statement sent with the audit entry and COMMIT (src/db/final-statement.ts, insertInOneStatement): the row and its
// event made by the database where every premise holds and no unique key is taken; every refusal (422, 409) sends
// the request down its full path, which reads what the create names. On SQLite the same request takes that path
// at once. This file runs on both and holds them to the same answers, rows, events byte for byte and audit
// entries, and every refusal to its status and code, with nothing left behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { generateKeyBetween } from 'fractional-indexing';
import { quotedForSummary } from '../src/events/summary-text.ts';
import { dialectUnderTest, startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { createChecks } from './support/create-checks.ts';

describe('POST of sections, enrolments, enrolment methods and users: in one statement or on the full path, alike', () => {
  let t: TestContext;
  /** An administrator of the organisation every test works in (of the app `t` starts). */
  let caller: Caller;
  before(async () => ({ t, caller } = await startTestAppWithCaller()));
  after(() => t?.close());

  const { call, eventsOf, created, refused } = createChecks(() => ({ t, caller }));

  const names = ['Plain', 'Quotes " and \\ and\nnew line', 'Ünïcödé ☃ 𝄞 and \u2028', 'x'.repeat(120)];

  describe('POST /sections', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'sections', 'sections', body);
    const added = (body: Record<string, unknown>, title: string) =>
      created('sections', 'sections', body, { type: 'section.created', data: () => ({ course_id: body.course_id, summary: `Section ${title} added.` }) });

    test('each appended after the course\'s last sort key, as generateKeyBetween makes it; its title, summary, parent and visibility as asked', async () => {
      const course = await t.make.course(caller.org);
      const long = `${'é'.repeat(70)}${'𝄞'.repeat(20)}`;
      const first = await added({ course_id: course.id }, '(untitled)');
      assert.deepEqual([first.body.sort_key, first.body.title, first.body.summary, first.body.visible, first.body.parent_section_id], ['a0', null, null, true, null]);
      let last = first.body.sort_key as string;
      for (const title of [...names, long]) {
        const res = await added({ course_id: course.id, title, summary: { format: 'html', content: '<p>"x"</p>' }, visible: false, parent_section_id: first.body.id, external_id: `s-${crypto.randomUUID()}` }, quotedForSummary(title));
        assert.equal(res.body.sort_key, generateKeyBetween(last, null));
        assert.deepEqual([res.body.title, res.body.visible, res.body.parent_section_id], [title, false, first.body.id]);
        last = res.body.sort_key;
      }
      // A deleted section's key is never given again.
      assert.equal((await call('DELETE', `/sections/${first.body.id}`)).status, 204);
      const deletedLast = await t.database.db.selectFrom('sections').select('id').where('sort_key', '=', last).where('course_id', '=', course.id).executeTakeFirstOrThrow();
      assert.equal((await call('DELETE', `/sections/${deletedLast.id}`)).status, 204);
      assert.equal((await added({ course_id: course.id, title: 'After' }, '"After"')).body.sort_key, generateKeyBetween(last, null));
    });

    test('every refusal as before, leaving nothing', async () => {
      const course = await t.make.course(caller.org);
      const parent = await added({ course_id: course.id, external_id: `s-${crypto.randomUUID()}` }, '(untitled)');
      await post({ course_id: crypto.randomUUID() })(422, 'validation.invalid_body', '/course_id');
      await post({ course_id: course.id, parent_section_id: crypto.randomUUID() })(422, 'validation.invalid_body', '/parent_section_id');
      const elsewhere = await added({ course_id: (await t.make.course(caller.org)).id }, '(untitled)');
      await post({ course_id: course.id, parent_section_id: elsewhere.body.id })(422, 'validation.invalid_body', '/parent_section_id');
      await post({ course_id: course.id, external_id: parent.body.external_id })(409, 'resource.external_id_taken');
      const gone = await added({ course_id: course.id }, '(untitled)');
      assert.equal((await call('DELETE', `/sections/${gone.body.id}`)).status, 204);
      await post({ course_id: course.id, parent_section_id: gone.body.id })(422, 'validation.invalid_body', '/parent_section_id');
      assert.equal((await call('DELETE', `/courses/${course.id}`)).status, 204);
      await post({ course_id: course.id })(409, 'course.deleted');
      // The course is checked before the parent.
      await post({ course_id: course.id, parent_section_id: crypto.randomUUID() })(409, 'course.deleted');
    });

    test('PostgreSQL: atrium_key_after(last) is generateKeyBetween(last, null), for every kind of key', { skip: dialectUnderTest !== 'postgres' && 'PostgreSQL only' }, async () => {
      const keys: Array<string | null> = [null];
      // A long run of integers (every digit of the last place turned over, and the integer part growing)...
      for (let key = generateKeyBetween(null, null), i = 0; i < 4000; i++, key = generateKeyBetween(key, null)) if (i % 7 === 0 || /z$/.test(key)) keys.push(key);
      // ... keys with fractions, the greatest and smallest integers of each length, and the greatest of all.
      let between = 'a0';
      for (let i = 0; i < 40; i++) keys.push((between = generateKeyBetween('a0', between === 'a0' ? 'a1' : between)));
      keys.push('a0V', 'azzV', 'Zz', 'Yzz', 'b00', 'bzz', 'czzz', 'Az'.padEnd(27, 'z'), 'A'.padEnd(27, '0') + '1', `z${'z'.repeat(26)}`, `z${'z'.repeat(26)}V`, `z${'z'.repeat(26)}zzz`, `z${'z'.repeat(25)}y`);
      const { rows } = await sql<{ key: string | null; after: string }>`select k.key, atrium_key_after(k.key) as after from unnest(${keys}::text[]) as k(key)`.execute(t.database.db);
      assert.equal(rows.length, keys.length);
      for (const { key, after } of rows) assert.equal(after, generateKeyBetween(key, null), `after ${key}`);
    });
  });

  describe('POST /enrolments', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'enrolments', 'enrolments', body);
    const enrolled = (body: Record<string, unknown>, summary: string) =>
      created('enrolments', 'enrolments', body, { type: 'enrolment.created', data: () => ({ course_id: body.course_id, user_id: body.user_id, summary }) });

    test('the role its method gives unless one is asked, its status, its dates as instants; the event says which', async () => {
      const course = await t.make.course(caller.org);
      const teaching = await call('POST', '/enrolment_methods', { course_id: course.id, type: 'manual', role: 'teacher' });
      assert.equal(teaching.status, 201, teaching.raw);
      const person = async () => (await t.make.person(caller.org, { roles: [] })).id;

      const byMethod = await enrolled({ course_id: course.id, user_id: await person(), enrolment_method_id: teaching.body.id }, 'User enrolled as teacher.');
      assert.deepEqual([byMethod.body.role, byMethod.body.status, byMethod.body.starts_at, byMethod.body.ends_at, byMethod.body.external_id], ['teacher', 'active', null, null, null]);
      assert.equal(byMethod.body.created_at, byMethod.body.updated_at);

      const externalId = `e-${crypto.randomUUID()}`;
      const asked = await enrolled(
        { course_id: course.id, user_id: await person(), enrolment_method_id: teaching.body.id, role: 'non_editing_teacher', status: 'suspended', starts_at: '2027-01-01T00:00:00+01:00', ends_at: '2027-06-30T23:59:59Z', external_id: externalId },
        'User enrolled as non_editing_teacher (suspended).',
      );
      assert.deepEqual([asked.body.role, asked.body.status, asked.body.starts_at, asked.body.ends_at, asked.body.external_id], ['non_editing_teacher', 'suspended', '2026-12-31T23:00:00.000Z', '2027-06-30T23:59:59.000Z', externalId]);
      assert.equal(asked.body.deleted_at, null);
    });

    test('every refusal as before, in the same order, leaving nothing', async () => {
      const course = await t.make.course(caller.org);
      const method = await t.make.enrolmentMethod(caller.org, { course_id: course.id });
      const person = await t.make.person(caller.org, { roles: [] });
      const named = { course_id: course.id, user_id: person.id, enrolment_method_id: method.id };
      const first = await enrolled({ ...named, external_id: `e-${crypto.randomUUID()}` }, 'User enrolled as student.');

      await post(named)(409, 'enrolment.exists');
      await post({ ...named, course_id: crypto.randomUUID() })(422, 'validation.invalid_body', '/course_id');
      await post({ ...named, user_id: crypto.randomUUID() })(422, 'validation.invalid_body', '/user_id');
      await post({ ...named, enrolment_method_id: crypto.randomUUID() })(422, 'validation.invalid_body', '/enrolment_method_id');
      await post({ ...named, enrolment_method_id: (await t.make.enrolmentMethod(caller.org)).id })(422, 'validation.invalid_body', '/enrolment_method_id');
      // Dates out of order are checked last: what it names comes first.
      const late = { starts_at: '2027-03-01T00:00:00Z', ends_at: '2027-02-01T00:00:00Z' };
      const other = await t.make.person(caller.org, { roles: [] });
      const outOfOrder = await post({ ...named, user_id: other.id, ...late })(422, 'validation.invalid_body', '/ends_at');
      assert.equal(outOfOrder.body.errors[0].code, 'before_start');
      await post({ ...named, course_id: crypto.randomUUID(), ...late })(422, 'validation.invalid_body', '/course_id');
      await post(named)(409, 'enrolment.exists');
      await post({ ...named, user_id: other.id, external_id: first.body.external_id })(409, 'resource.external_id_taken');

      assert.equal((await call('PATCH', `/enrolment_methods/${method.id}`, { status: 'disabled' })).status, 200);
      await post({ ...named, user_id: other.id })(409, 'enrolment_method.disabled');
      const open = await t.make.enrolmentMethod(caller.org, { course_id: course.id });
      const removed = await t.make.person(caller.org, { roles: [] });
      assert.equal((await call('DELETE', `/users/${removed.id}`)).status, 204);
      await post({ ...named, user_id: removed.id, enrolment_method_id: open.id })(409, 'user.deleted');
      assert.equal((await call('DELETE', `/enrolment_methods/${open.id}`)).status, 204);
      await post({ ...named, user_id: other.id, enrolment_method_id: open.id })(409, 'enrolment_method.disabled');
      const gone = await t.make.course(caller.org);
      const goneMethod = await t.make.enrolmentMethod(caller.org, { course_id: gone.id });
      assert.equal((await call('DELETE', `/courses/${gone.id}`)).status, 204);
      await post({ course_id: gone.id, user_id: other.id, enrolment_method_id: goneMethod.id })(409, 'course.deleted');

      // An enrolment ended frees its person and method for a new one.
      assert.equal((await call('PATCH', `/enrolment_methods/${method.id}`, { status: 'enabled' })).status, 200);
      assert.equal((await call('DELETE', `/enrolments/${first.body.id}`)).status, 204);
      await enrolled(named, 'User enrolled as student.');
    });

    test('the same enrolment asked for at once, many times: one is made, the others are 409 enrolment.exists', async () => {
      const enrolment = { course_id: (await t.make.course(caller.org)).id, user_id: (await t.make.person(caller.org, { roles: [] })).id };
      const method = await t.make.enrolmentMethod(caller.org, { course_id: enrolment.course_id });
      const answers = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/enrolments', { ...enrolment, enrolment_method_id: method.id })));
      assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409]);
      assert.ok(answers.filter((r) => r.status === 409).every((r) => r.body.code === 'enrolment.exists'));
      assert.equal((await t.database.db.selectFrom('enrolments').select('id').where('enrolment_method_id', '=', method.id).execute()).length, 1);
      assert.equal((await eventsOf(answers.find((r) => r.status === 201)!.body.id)).length, 1);
    });
  });

  describe('POST /enrolment_methods', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'enrolment_methods', 'enrolment_methods', body);
    const label = (name: string | null | undefined, type: string) => (name ? `${JSON.stringify(name)} (${type})` : type);
    const added = (body: Record<string, unknown>) =>
      created('enrolment_methods', 'enrolment_methods', body, { type: 'enrolment_method.created', data: () => ({ course_id: body.course_id, summary: `Enrolment method ${label(body.name as string | null, body.type as string)} added.` }) });

    test('its name, type, role, status and settings as asked or their defaults; the event names it as the service does', async () => {
      const course = await t.make.course(caller.org);
      for (const name of [...names, null, undefined]) {
        const res = await added({ course_id: course.id, type: 'self', settings: { enrolment_key: 'k "1"', max_enrolments: 3 }, ...(name === undefined ? {} : { name }) });
        assert.deepEqual([res.body.name, res.body.role, res.body.status, res.body.settings], [name ?? null, 'student', 'enabled', { enrolment_key: 'k "1"', max_enrolments: 3 }]);
      }
      const res = await added({ course_id: course.id, type: 'guest', name: 'Visitors', role: 'non_editing_teacher', status: 'disabled', external_id: `m-${crypto.randomUUID()}` });
      assert.deepEqual([res.body.role, res.body.status, res.body.settings], ['non_editing_teacher', 'disabled', {}]);
      await added({ course_id: course.id, type: 'cohort', settings: { cohort_id: 'c-1' } });
    });

    test('every refusal as before, in the same order, leaving nothing', async () => {
      const course = await t.make.course(caller.org);
      const taken = await added({ course_id: course.id, type: 'manual', external_id: `m-${crypto.randomUUID()}` });
      await post({ course_id: crypto.randomUUID(), type: 'manual' })(422, 'validation.invalid_body', '/course_id');
      await post({ course_id: course.id, type: 'guest', settings: { enrolment_key: 'k' } })(422, 'validation.invalid_body', '/settings/enrolment_key');
      await post({ course_id: course.id, type: 'cohort' })(422, 'validation.invalid_body', '/settings/cohort_id');
      // The course is checked before the settings.
      await post({ course_id: crypto.randomUUID(), type: 'guest', settings: { enrolment_key: 'k' } })(422, 'validation.invalid_body', '/course_id');
      await post({ course_id: course.id, type: 'manual', external_id: taken.body.external_id })(409, 'resource.external_id_taken');

      await t.app.services.extensions.setEnabled(t.database.db, caller.org.id, 'enrol_self', false);
      try {
        await post({ course_id: course.id, type: 'self' })(409, 'extension.disabled');
        // ... before the settings; another type is not switched off with it.
        await post({ course_id: course.id, type: 'self', settings: { password: 'x' } })(409, 'extension.disabled');
        await added({ course_id: course.id, type: 'manual' });
      } finally {
        await t.app.services.extensions.setEnabled(t.database.db, caller.org.id, 'enrol_self', true);
      }
      await added({ course_id: course.id, type: 'self' });

      const gone = await t.make.course(caller.org);
      assert.equal((await call('DELETE', `/courses/${gone.id}`)).status, 204);
      await post({ course_id: gone.id, type: 'manual' })(409, 'course.deleted');
      await post({ course_id: gone.id, type: 'cohort' })(409, 'course.deleted');
    });
  });

  describe('POST /users', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'users', 'people', body);
    const address = () => `new-${crypto.randomUUID()}@example.edu`;
    const added = (body: Record<string, unknown>) => created('users', 'people', body, { type: 'user.created', data: () => ({ summary: `User ${JSON.stringify(body.name)} added.` }) });

    test('its name, its address in lower case, its roles in the order given, its status; the event quotes its name', async () => {
      for (const name of names) {
        const email = address();
        const res = await added({ email: email.toUpperCase(), name, roles: ['teacher', 'integration'] });
        assert.deepEqual([res.body.name, res.body.email, res.body.roles, res.body.status, res.body.external_id], [name, email, ['teacher', 'integration'], 'active', null]);
      }
      const externalId = `u-${crypto.randomUUID()}`;
      const res = await added({ email: address(), name: 'Suspended', status: 'suspended', external_id: externalId });
      assert.deepEqual([res.body.roles, res.body.status, res.body.external_id], [[], 'suspended', externalId]);
      // A custom role is given (in one statement: there, and allowing nothing the giver may not do).
      const role = await t.make.customRole(caller.org);
      assert.deepEqual((await added({ email: address(), name: 'Custom', roles: [role.key] })).body.roles, [role.key]);
    });

    test('every refusal as before, leaving nothing: an address taken says whether a removed person holds it', async () => {
      const live = await added({ email: address(), name: 'Live', external_id: `u-${crypto.randomUUID()}` });
      const takenByLive = await post({ email: live.body.email.toUpperCase(), name: 'Again' })(409, 'user.email_taken', '/email');
      assert.equal(takenByLive.body.errors[0].detail, `Another user of this organisation has the e-mail address ${live.body.email}.`);
      const removed = await added({ email: address(), name: 'Removed' });
      assert.equal((await call('DELETE', `/users/${removed.body.id}`)).status, 204);
      const takenByRemoved = await post({ email: removed.body.email, name: 'Again' })(409, 'user.email_taken', '/email');
      assert.equal(takenByRemoved.body.errors[0].detail, `Another user of this organisation (removed) has the e-mail address ${removed.body.email}.`);
      await post({ email: address(), name: 'Other', external_id: live.body.external_id })(409, 'resource.external_id_taken');
      await post({ email: address(), name: 'Unknown role', roles: ['teacher', 'no_such_role'] })(422, 'validation.invalid_body', '/roles/1');
      // The roles are checked before the address.
      await post({ email: live.body.email, name: 'Both', roles: ['no_such_role'] })(422, 'validation.invalid_body', '/roles/0');
    });

    test('a custom role is given only where it is a role here allowing nothing the giver may not do; refusals in the full path\'s order', async () => {
      const manager = await t.make.caller({ org: caller.org, roles: ['manager'], platformAdmin: false });
      const within = await t.make.customRole(caller.org, { capabilities: ['course/view', 'person/view'] });
      const beyond = await t.make.customRole(caller.org, { capabilities: ['course/view', 'tenant/configure'] });
      const asManager = (body: Record<string, unknown>) => t.api.request({ host: caller.org.address, key: manager.key, method: 'POST', path: '/users', body });
      const given = await asManager({ email: address(), name: 'Within', roles: ['teacher', within.key] });
      assert.equal(given.status, 201, given.raw);
      assert.deepEqual(given.body.roles, ['teacher', within.key]);
      const tooMuch = await asManager({ email: address(), name: 'Beyond', roles: [within.key, beyond.key] });
      assert.deepEqual([tooMuch.status, tooMuch.body.code], [403, 'auth.missing_capability']);
      assert.match(tooMuch.body.detail, new RegExp(`The role ${beyond.key} allows \`tenant/configure\``));
      // An unknown role is a 422 before a built-in role the giver may not give is a 403, as on the full path.
      const unknownFirst = await asManager({ email: address(), name: 'Both', roles: ['admin', 'no_such_role'] });
      assert.deepEqual([unknownFirst.status, unknownFirst.body.errors?.[0]?.path], [422, '/roles/1']);
      // An administrator may give any role of the organisation.
      assert.equal((await added({ email: address(), name: 'Admin gives', roles: [beyond.key, within.key] })).body.roles.length, 2);
      const made = await t.database.db.selectFrom('people').select('name').where('organisation_id', '=', caller.org.id).where('name', 'in', ['Beyond', 'Both']).execute();
      assert.deepEqual(made, []);
    });

    test('one address asked for at once, many times: one person is made, the others are 409 user.email_taken', async () => {
      const email = address();
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => call('POST', '/users', { email, name: `Racer ${i}` })));
      assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409]);
      assert.ok(answers.filter((r) => r.status === 409).every((r) => r.body.code === 'user.email_taken'));
      assert.equal((await t.database.db.selectFrom('people').select('id').where('organisation_id', '=', caller.org.id).where('email', '=', email).execute()).length, 1);
    });
  });
});
