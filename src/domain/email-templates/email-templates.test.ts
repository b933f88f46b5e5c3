import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { emailTemplateVersions } from './email-templates.repository.ts';

const UNKNOWN_ID = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

describe('email templates', () => {
  const clock = manualClock(new Date('2026-11-01T09:00:00.000Z'));
  let t: TestContext;
  let admin: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    admin = await t.make.caller();
  });
  after(() => t.close());

  const as = (c: Caller) => ({ host: c.org.address, key: c.key });
  const qs = (query: Record<string, string>) => new URLSearchParams(query).toString();
  const versionsPath = (key: string, query: Record<string, string>) => `/email_templates/${key}/versions?${qs(query)}`;
  const draftPath = (key: string, query: Record<string, string>) => `/email_templates/${key}/draft?${qs(query)}`;
  const publishPath = (key: string, query: Record<string, string>) => `/email_templates/${key}/draft/actions/publish?${qs(query)}`;
  const restorePath = (key: string, versionId: string, query: Record<string, string>) => `/email_templates/${key}/versions/${versionId}/actions/restore?${qs(query)}`;
  let keys = 0;
  const idem = () => ({ 'idempotency-key': `k-${++keys}` });

  const read = (c: Caller, key: string, query: Record<string, string>) => t.api.request({ ...as(c), path: versionsPath(key, query) });
  const writeDraft = (c: Caller, key: string, query: Record<string, string>, body: unknown) => t.api.request({ ...as(c), method: 'PUT', path: draftPath(key, query), body });
  const publish = (c: Caller, key: string, query: Record<string, string>) => t.api.request({ ...as(c), method: 'POST', path: publishPath(key, query) });
  const restore = (c: Caller, key: string, versionId: string, query: Record<string, string>, headers: Record<string, string> = idem()) =>
    t.api.request({ ...as(c), method: 'POST', path: restorePath(key, versionId, query), headers });
  const versionRows = (templateId: string) => t.database.db.selectFrom('email_template_versions').selectAll().where('template_id', '=', templateId).orderBy('version').execute();
  const eventsOf = (c: Caller, type: string) => t.database.db.selectFrom('outbox_events').selectAll().where('organisation_id', '=', c.org.id).where('type', '=', type).orderBy('id').execute();

  describe('GET /email_templates (the message catalog)', () => {
    test('lists every compiled-in message with the variables its templates may use', async () => {
      const res = await t.api.request({ ...as(admin), path: '/email_templates' });
      assert.equal(res.status, 200);
      assert.ok(res.body.data.length >= 12);
      const reset = res.body.data.find((m: { message_key: string }) => m.message_key === 'password_reset');
      assert.equal(reset.critical, true);
      assert.equal(reset.category, 'account');
      assert.ok(reset.variables.some((v: { name: string }) => v.name === 'reset.url'));
      for (const m of res.body.data) assert.ok(m.title && m.description && m.variables.length > 0, m.message_key);
    });
  });

  describe('GET /email_templates/{message_key}/versions (operation 1)', () => {
    test('a message with no override at that scope: no versions, it inherits', async () => {
      const res = await read(admin, 'forum_digest', { language: 'en' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        message_key: 'forum_digest',
        title: 'Daily forum digest',
        description: 'One message a day with the new posts of every forum a person follows.',
        category: 'forum',
        critical: false,
        scope: { level: 'tenant', scope_id: null, language: 'en' },
        template_id: null,
        draft: null,
        published: null,
        versions: [],
        may_edit_source: true,
      });
    });

    test('draft → published → archived, newest first; restore copies into the draft without publishing', async () => {
      const c = await t.make.caller();
      const course = await t.make.course(c.org);
      const q = { language: 'en', level: 'course', scope_id: course.id };
      const key = 'assignment_due_reminder';

      const first = await writeDraft(c, key, q, { subject: 'Due soon: {{assignment.name}}', variable_refs: ['assignment.name'], body: '{"blocks":[]}' });
      assert.equal(first.status, 201);
      assert.deepEqual({ version: first.body.version, state: first.body.state, published_at: first.body.published_at }, { version: 1, state: 'draft', published_at: null });
      assert.deepEqual([first.body.from_name, first.body.reply_to, first.body.text_part, first.body.preheader], [null, null, null, null], 'fields left out are null: inherit');

      clock.advance(1000);
      const replaced = await writeDraft(c, key, q, { subject: 'Due tomorrow', preheader: 'Hand it in' });
      assert.equal(replaced.status, 200);
      assert.equal(replaced.body.id, first.body.id, 'at most one draft: it is replaced, not added');
      assert.deepEqual([replaced.body.subject, replaced.body.preheader, replaced.body.body, replaced.body.variable_refs], ['Due tomorrow', 'Hand it in', null, []]);

      clock.advance(1000);
      const v1 = await publish(c, key, q);
      assert.equal(v1.status, 200);
      assert.deepEqual({ id: v1.body.id, state: v1.body.state, published_at: v1.body.published_at }, { id: first.body.id, state: 'published', published_at: clock.now().toISOString() });
      const v1PublishedAt = v1.body.published_at;

      clock.advance(1000);
      const second = await writeDraft(c, key, q, { subject: 'Second wording' });
      assert.equal(second.status, 201);
      assert.equal(second.body.version, 2);
      const v2 = await publish(c, key, q);
      assert.equal(v2.body.version, 2);

      let view = await read(c, key, q);
      assert.equal(view.status, 200);
      assert.deepEqual(view.body.scope, { level: 'course', scope_id: course.id, language: 'en' });
      assert.deepEqual(view.body.versions.map((v: { version: number; state: string }) => [v.version, v.state]), [[2, 'published'], [1, 'archived']]);
      assert.equal(view.body.versions[1].published_at, v1PublishedAt, 'an archived version keeps when it was published');
      assert.equal(view.body.draft, null);
      assert.equal(view.body.published.id, v2.body.id);

      // Operation 2: version 1 becomes the draft's content; version 2 stays the one in use.
      const restored = await restore(c, key, v1.body.id, q);
      assert.equal(restored.status, 200);
      assert.deepEqual([restored.body.version, restored.body.state, restored.body.subject, restored.body.preheader], [3, 'draft', 'Due tomorrow', 'Hand it in']);
      assert.equal(restored.body.published_at, null);
      view = await read(c, key, q);
      assert.equal(view.body.published.id, v2.body.id, 'restore does not publish');
      assert.equal(view.body.draft.id, restored.body.id);
      assert.deepEqual(view.body.versions.map((v: { version: number; state: string }) => [v.version, v.state]), [[3, 'draft'], [2, 'published'], [1, 'archived']]);

      // Restoring again while a draft exists replaces the draft's content (still one draft).
      const again = await restore(c, key, v2.body.id, q);
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.id, again.body.subject], [restored.body.id, 'Second wording']);
      assert.equal((await versionRows(view.body.template_id)).length, 3);

      const events = await eventsOf(c, 'email_template.draft_restored');
      assert.equal(events.length, 2);
      const data = JSON.parse(events[0].data);
      assert.deepEqual(
        { id: data.id, message_key: data.message_key, language: data.language, level: data.level, scope_id: data.scope_id, version_id: data.version_id, restored_version_id: data.restored_version_id },
        { id: view.body.template_id, message_key: key, language: 'en', level: 'course', scope_id: course.id, version_id: restored.body.id, restored_version_id: v1.body.id },
      );
      assert.match(data.summary, /version 1 restored as the draft/);
    });

    test('each scope and language has its own template; language tags are case-insensitive', async () => {
      const c = await t.make.caller();
      const [courseA, courseB] = [await t.make.course(c.org), await t.make.course(c.org)];
      const made = await writeDraft(c, 'course_completion', { language: 'en-GB', level: 'course', scope_id: courseA.id }, { subject: 'Well done' });
      assert.equal(made.status, 201);
      const same = await read(c, 'course_completion', { language: 'EN-gb', level: 'course', scope_id: courseA.id });
      assert.equal(same.body.scope.language, 'en-GB');
      assert.equal(same.body.draft.id, made.body.id);
      for (const q of [
        { language: 'en-GB' },
        { language: 'en', level: 'course', scope_id: courseA.id },
        { language: 'en-GB', level: 'course', scope_id: courseB.id },
      ] as Record<string, string>[]) {
        const other = await read(c, 'course_completion', q);
        assert.equal(other.status, 200);
        assert.deepEqual([other.body.template_id, other.body.versions], [null, []], JSON.stringify(q));
      }
    });

    test('every level: tenant, category, course, activity', async () => {
      const c = await t.make.caller();
      const category = await t.make.category(c.org);
      const course = await t.make.course(c.org);
      const activity = await t.make.activity(c.org);
      for (const [level, scope_id] of [['tenant', undefined], ['category', category.id], ['course', course.id], ['activity', activity.id]] as const) {
        const q: Record<string, string> = { language: 'fr', level, ...(scope_id ? { scope_id } : {}) };
        assert.equal((await writeDraft(c, 'badge_awarded', q, { subject: `Badge ${level}` })).status, 201, level);
        const res = await read(c, 'badge_awarded', q);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.scope, { level, scope_id: scope_id ?? null, language: 'fr' });
        assert.equal(res.body.draft.subject, `Badge ${level}`);
      }
    });

    test('404: unknown message, unknown scope, or a scope of another organisation', async () => {
      const other = await t.make.caller();
      const theirCourse = await t.make.course(other.org);
      const course = await t.make.course(admin.org);
      const cases: Array<[string, Record<string, string>, string]> = [
        ['no_such_message', { language: 'en' }, 'email_template.message_not_found'],
        ['enrolment_welcome', { language: 'en', level: 'course', scope_id: UNKNOWN_ID }, 'email_template.scope_not_found'],
        ['enrolment_welcome', { language: 'en', level: 'category', scope_id: UNKNOWN_ID }, 'email_template.scope_not_found'],
        ['enrolment_welcome', { language: 'en', level: 'activity', scope_id: UNKNOWN_ID }, 'email_template.scope_not_found'],
        ['enrolment_welcome', { language: 'en', level: 'course', scope_id: theirCourse.id }, 'email_template.scope_not_found'],
        ['enrolment_welcome', { language: 'en', level: 'category', scope_id: course.id }, 'email_template.scope_not_found'],
      ];
      for (const [key, q, code] of cases) {
        const res = await read(admin, key, q);
        assert.equal(res.status, 404, `${key} ${JSON.stringify(q)}`);
        assert.equal(res.body.code, code);
      }
    });

    const badQueries: Array<[string, string, RegExp]> = [
      ['language missing', '', /`language` is required/],
      ['language empty', 'language=', /`language`/],
      ['language of 36 characters', `language=${'abc' + '-abcdefgh'.repeat(3) + '-abcde'}`, /`language`/],
      ['language with an underscore', 'language=en_GB', /`language`/],
      ['language of one letter', 'language=e', /`language`/],
      ['language ending in a dash', 'language=en-', /`language`/],
      ['language with a too-long subtag', 'language=en-abcdefghi', /`language`/],
      ['an unknown level', 'language=en&level=site', /`level`/],
      ['scope_id missing for category', 'language=en&level=category', /`scope_id` is required/],
      ['scope_id missing for course', 'language=en&level=course', /`scope_id` is required/],
      ['scope_id missing for activity', 'language=en&level=activity', /`scope_id` is required/],
      ['scope_id with the default level', `language=en&scope_id=${UNKNOWN_ID}`, /`scope_id` is refused/],
      ['scope_id with level=tenant', `language=en&level=tenant&scope_id=${UNKNOWN_ID}`, /`scope_id` is refused/],
      ['scope_id that is not a UUID', 'language=en&level=course&scope_id=42', /`scope_id`/],
      ['an unknown parameter', 'language=en&colour=red', /`colour`/],
    ];
    for (const [name, query, detail] of badQueries) {
      test(`422 for ${name}, naming the parameter (no errors entry)`, async () => {
        const res = await t.api.request({ ...as(admin), path: `/email_templates/enrolment_welcome/versions?${query}` });
        assert.equal(res.status, 422);
        assert.equal(res.body.code, 'validation.invalid_parameter');
        assert.match(res.body.detail, detail);
        assert.equal(res.body.errors, undefined);
      });
    }

    test('a language tag of 35 characters is accepted', async () => {
      const language = 'abc' + '-abcdefgh'.repeat(3) + '-abcd';
      assert.equal(language.length, 35);
      const res = await read(admin, 'enrolment_welcome', { language });
      assert.equal(res.status, 200);
    });

    test('a deleted course: its templates stay readable with may_edit_source false; writes are a 409', async () => {
      const c = await t.make.caller();
      const course = await t.make.course(c.org);
      const q = { language: 'en', level: 'course', scope_id: course.id };
      await writeDraft(c, 'enrolment_welcome', q, { subject: 'Hi' });
      const v1 = await publish(c, 'enrolment_welcome', q);
      await writeDraft(c, 'enrolment_welcome', q, { subject: 'Hi again' });
      assert.equal((await t.api.request({ ...as(c), method: 'DELETE', path: `/courses/${course.id}` })).status, 204);
      const view = await read(c, 'enrolment_welcome', q);
      assert.equal(view.status, 200);
      assert.equal(view.body.may_edit_source, false);
      for (const res of [await writeDraft(c, 'enrolment_welcome', q, { subject: 'x' }), await publish(c, 'enrolment_welcome', q), await restore(c, 'enrolment_welcome', v1.body.id, q)]) {
        assert.equal(res.status, 409);
        assert.equal(res.body.code, 'email_template.scope_deleted');
      }
    });
  });

  describe('POST …/versions/{version_id}/actions/restore (operation 2)', () => {
    test('404: unknown version, a version of another scope, language or organisation, no template, unknown message', async () => {
      const c = await t.make.caller();
      const other = await t.make.caller();
      const course = await t.make.course(c.org);
      const courseQ = { language: 'en', level: 'course' as const, scope_id: course.id };
      const tenant = await t.make.emailTemplate(c.org);
      const atCourse = await t.make.emailTemplate(c.org, { query: courseQ });
      const inGerman = await t.make.emailTemplate(c.org, { query: { language: 'de' } });
      const theirs = await t.make.emailTemplate(other.org);
      const cases: Array<[string, string, Record<string, string>, string]> = [
        ['enrolment_welcome', UNKNOWN_ID, { language: 'en' }, 'email_template.version_not_found'],
        ['enrolment_welcome', 'not-a-uuid', { language: 'en' }, 'email_template.version_not_found'],
        ['enrolment_welcome', atCourse.published.id, { language: 'en' }, 'email_template.version_not_found'],
        ['enrolment_welcome', tenant.published.id, courseQ, 'email_template.version_not_found'],
        ['enrolment_welcome', inGerman.published.id, { language: 'en' }, 'email_template.version_not_found'],
        ['enrolment_welcome', theirs.published.id, { language: 'en' }, 'email_template.version_not_found'],
        ['badge_awarded', tenant.published.id, { language: 'en' }, 'email_template.version_not_found'],
        ['no_such_message', tenant.published.id, { language: 'en' }, 'email_template.message_not_found'],
        ['enrolment_welcome', tenant.published.id, { language: 'en', level: 'course', scope_id: UNKNOWN_ID }, 'email_template.scope_not_found'],
      ];
      for (const [key, versionId, q, code] of cases) {
        const res = await restore(c, key, versionId, q);
        assert.equal(res.status, 404, `${key} ${versionId} ${JSON.stringify(q)}`);
        assert.equal(res.body.code, code);
      }
      const draft = (await read(c, 'enrolment_welcome', { language: 'en' })).body.draft;
      assert.equal(draft.id, tenant.draft.id);
      assert.equal(draft.subject, tenant.draft.subject, 'nothing changed');
    });

    test('409: the version is the draft itself; nothing changes', async () => {
      const c = await t.make.caller();
      const tpl = await t.make.emailTemplate(c.org);
      const res = await restore(c, tpl.messageKey, tpl.draft.id, tpl.query);
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'email_template.version_is_draft');
      assert.equal((await eventsOf(c, 'email_template.draft_restored')).length, 0);
    });

    test('422: the query rules, and a missing Idempotency-Key; nothing changes', async () => {
      const c = await t.make.caller();
      const tpl = await t.make.emailTemplate(c.org);
      for (const query of [{}, { language: 'en', scope_id: UNKNOWN_ID }, { language: 'en', level: 'course' }, { language: 'en!' }] as Record<string, string>[]) {
        const res = await restore(c, tpl.messageKey, tpl.published.id, query);
        assert.equal(res.status, 422, JSON.stringify(query));
        assert.equal(res.body.code, 'validation.invalid_parameter');
      }
      const noKey = await restore(c, tpl.messageKey, tpl.published.id, tpl.query, {});
      assert.equal(noKey.status, 422);
      assert.equal(noKey.body.code, 'idempotency.key_required');
      const view = await read(c, tpl.messageKey, tpl.query);
      assert.equal(view.body.draft.subject, tpl.draft.subject);
    });

    test('a replay with the same Idempotency-Key answers the same bytes and restores once', async () => {
      const c = await t.make.caller();
      const tpl = await t.make.emailTemplate(c.org);
      const headers = idem();
      const first = await restore(c, tpl.messageKey, tpl.published.id, tpl.query, headers);
      const second = await restore(c, tpl.messageKey, tpl.published.id, tpl.query, headers);
      assert.equal(first.status, 200);
      assert.equal(second.raw, first.raw);
      assert.equal(second.headers['idempotency-replayed'], 'true');
      assert.equal((await eventsOf(c, 'email_template.draft_restored')).length, 1);
    });
  });

  describe('PUT …/draft and POST …/draft/actions/publish', () => {
    const bad: Array<[string, unknown, string[]]> = [
      ['a variable the message does not offer', { variable_refs: ['user.firstname', 'user.password', 'course.url'] }, ['/variable_refs/1']],
      ['a body that is not JSON text', { body: '<mjml>' }, ['/body']],
      ['an empty subject', { subject: '' }, ['/subject']],
      ['a reply_to that is not an address', { reply_to: 'nobody' }, ['/reply_to']],
      ['the same variable twice', { variable_refs: ['user.firstname', 'user.firstname'] }, ['/variable_refs']],
      ['an unknown field', { subject: 'x', colour: 'red' }, ['/colour']],
      ['fields of the wrong type', { subject: 12, variable_refs: 'user.firstname' }, ['/subject', '/variable_refs']],
    ];
    for (const [name, body, paths] of bad) {
      test(`422 for ${name}, naming the field; nothing is written`, async () => {
        const c = await t.make.caller();
        const res = await writeDraft(c, 'enrolment_welcome', { language: 'en' }, body);
        assert.equal(res.status, 422);
        assert.equal(res.body.code, 'validation.invalid_body');
        assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path).sort(), paths);
        assert.equal((await read(c, 'enrolment_welcome', { language: 'en' })).body.template_id, null);
      });
    }

    test('404 for an unknown message on both', async () => {
      for (const res of [await writeDraft(admin, 'nope', { language: 'en' }, {}), await publish(admin, 'nope', { language: 'en' })]) {
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'email_template.message_not_found');
      }
    });

    test('publish without a draft is a 409 email_template.no_draft, before and after publishing', async () => {
      const c = await t.make.caller();
      const none = await publish(c, 'calendar_event_reminder', { language: 'en' });
      assert.equal(none.status, 409);
      assert.equal(none.body.code, 'email_template.no_draft');
      await writeDraft(c, 'calendar_event_reminder', { language: 'en' }, { subject: 'Soon: {{event.name}}', variable_refs: ['event.name'] });
      assert.equal((await publish(c, 'calendar_event_reminder', { language: 'en' })).status, 200);
      const twice = await publish(c, 'calendar_event_reminder', { language: 'en' });
      assert.equal(twice.status, 409);
      assert.equal(twice.body.code, 'email_template.no_draft');
    });

    test('a publish that loses a race is a 409 and rolls back (the version published before stays published)', async () => {
      const c = await t.make.caller();
      const tpl = await t.make.emailTemplate(c.org);
      const original = emailTemplateVersions.publishDraft;
      emailTemplateVersions.publishDraft = async () => undefined;
      try {
        const res = await publish(c, tpl.messageKey, tpl.query);
        assert.equal(res.status, 409);
        assert.equal(res.body.code, 'email_template.concurrent_change');
      } finally {
        emailTemplateVersions.publishDraft = original;
      }
      const view = await read(c, tpl.messageKey, tpl.query);
      assert.equal(view.body.published.id, tpl.published.id);
      assert.equal(view.body.draft.id, tpl.draft.id);
    });

    test('writes record their events with identifiers and a summary', async () => {
      const c = await t.make.caller();
      const saved = await writeDraft(c, 'password_reset', { language: 'nl' }, { subject: 'Nieuw wachtwoord', variable_refs: ['reset.url'] });
      const published = await publish(c, 'password_reset', { language: 'nl' });
      const [draftEvent] = await eventsOf(c, 'email_template.draft_saved');
      const [publishEvent] = await eventsOf(c, 'email_template.published');
      assert.deepEqual(
        [JSON.parse(draftEvent.data).version_id, JSON.parse(publishEvent.data).version_id, JSON.parse(publishEvent.data).level, JSON.parse(publishEvent.data).scope_id],
        [saved.body.id, published.body.id, 'tenant', null],
      );
      assert.match(JSON.parse(publishEvent.data).summary, /"Password reset" \(organisation-wide, nl\): version 1 published/);
    });
  });

  describe('platform templates (operation 3 and its supporting operations)', () => {
    const base = (key: string, language: string) => `/platform/email_templates/${encodeURIComponent(key)}/languages/${encodeURIComponent(language)}`;
    const pRead = (c: Caller, key: string, language: string) => t.api.request({ ...as(c), path: `${base(key, language)}/versions` });
    const pDraft = (c: Caller, key: string, language: string, body: unknown) => t.api.request({ ...as(c), method: 'PUT', path: `${base(key, language)}/draft`, body });
    const pPublish = (c: Caller, key: string, language: string) => t.api.request({ ...as(c), method: 'POST', path: `${base(key, language)}/draft/actions/publish` });
    const pRestore = (c: Caller, key: string, language: string, versionId: string, headers: Record<string, string> = idem()) =>
      t.api.request({ ...as(c), method: 'POST', path: `${base(key, language)}/versions/${versionId}/actions/restore`, headers });

    test('draft → published → archived; restore copies into the draft without publishing; every organisation sees the same templates', async () => {
      const key = 'new_sign_in_alert';
      const empty = await pRead(admin, key, 'it');
      assert.equal(empty.status, 200);
      assert.deepEqual([empty.body.template_id, empty.body.draft, empty.body.published, empty.body.versions], [null, null, null, []]);

      const first = await pDraft(admin, key, 'it', { subject: 'Nuovo accesso', variable_refs: ['sign_in.device'] });
      assert.equal(first.status, 201);
      assert.deepEqual(Object.keys(first.body).sort(), ['body', 'created_at', 'id', 'preheader', 'published_at', 'state', 'subject', 'variable_refs', 'version']);
      const v1 = await pPublish(admin, key, 'it');
      assert.equal(v1.body.state, 'published');
      await pDraft(admin, key, 'it', { subject: 'Accesso da un nuovo dispositivo' });
      const v2 = await pPublish(admin, key, 'it');

      const restored = await pRestore(admin, key, 'it', v1.body.id);
      assert.equal(restored.status, 200);
      assert.deepEqual([restored.body.version, restored.body.state, restored.body.subject, restored.body.variable_refs], [3, 'draft', 'Nuovo accesso', ['sign_in.device']]);

      const otherAdmin = await t.make.caller();
      const view = await pRead(otherAdmin, key, 'IT');
      assert.equal(view.body.language, 'it');
      assert.equal(view.body.published.id, v2.body.id, 'restore does not publish');
      assert.deepEqual(view.body.versions.map((v: { version: number; state: string }) => [v.version, v.state]), [[3, 'draft'], [2, 'published'], [1, 'archived']]);
      const [event] = await eventsOf(admin, 'platform_email_template.draft_restored');
      assert.equal(JSON.parse(event.data).restored_version_id, v1.body.id);
    });

    test('only platform administrators: an organisation administrator gets a 403', async () => {
      const orgAdmin = await t.make.caller({ org: admin.org, roles: ['admin'], platformAdmin: false });
      const tpl = await t.make.platformEmailTemplate(admin.org);
      for (const res of [await pRead(orgAdmin, tpl.messageKey, tpl.language), await pRestore(orgAdmin, tpl.messageKey, tpl.language, tpl.published.id)]) {
        assert.equal(res.status, 403);
        assert.equal(res.body.code, 'auth.missing_capability');
      }
    });

    test('404: unknown message, unknown version, a version of another language or an organisation version', async () => {
      const tpl = await t.make.platformEmailTemplate(admin.org, { message_key: 'badge_awarded', language: 'es' });
      const otherLanguage = await t.make.platformEmailTemplate(admin.org, { message_key: 'badge_awarded', language: 'pt-BR' });
      const orgVersion = await t.make.emailTemplate(admin.org, { message_key: 'badge_awarded', query: { language: 'es' } });
      const cases: Array<[string, string, string, string]> = [
        ['nope', 'es', tpl.published.id, 'email_template.message_not_found'],
        ['badge_awarded', 'es', UNKNOWN_ID, 'email_template.version_not_found'],
        ['badge_awarded', 'es', 'not-a-uuid', 'email_template.version_not_found'],
        ['badge_awarded', 'es', otherLanguage.published.id, 'email_template.version_not_found'],
        ['badge_awarded', 'es', orgVersion.published.id, 'email_template.version_not_found'],
        ['badge_awarded', 'fr-CA', tpl.published.id, 'email_template.version_not_found'],
      ];
      for (const [key, language, versionId, code] of cases) {
        const res = await pRestore(admin, key, language, versionId);
        assert.equal(res.status, 404, `${key} ${language} ${versionId}`);
        assert.equal(res.body.code, code);
      }
      for (const res of [await pRead(admin, 'nope', 'es'), await pDraft(admin, 'nope', 'es', {}), await pPublish(admin, 'nope', 'es')]) {
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'email_template.message_not_found');
      }
    });

    test('409: restoring the draft itself, and publishing without a draft', async () => {
      const tpl = await t.make.platformEmailTemplate(admin.org, { message_key: 'forum_digest' });
      const res = await pRestore(admin, tpl.messageKey, tpl.language, tpl.draft.id);
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'email_template.version_is_draft');
      assert.equal((await pPublish(admin, tpl.messageKey, tpl.language)).status, 200);
      const none = await pPublish(admin, tpl.messageKey, tpl.language);
      assert.equal(none.status, 409);
      assert.equal(none.body.code, 'email_template.no_draft');
    });

    test('422: a malformed language in the path names it; a missing Idempotency-Key; a bad draft body', async () => {
      const tpl = await t.make.platformEmailTemplate(admin.org, { message_key: 'private_message_offline' });
      for (const language of ['english!', 'e', 'en_GB', 'a'.repeat(36), 'en-abcdefghi']) {
        for (const res of [await pRestore(admin, tpl.messageKey, language, tpl.published.id), await pRead(admin, tpl.messageKey, language), await pDraft(admin, tpl.messageKey, language, {})]) {
          assert.equal(res.status, 422, language);
          assert.equal(res.body.code, 'validation.invalid_parameter');
          assert.match(res.body.detail, /Path parameter `language`/);
        }
      }
      const noKey = await pRestore(admin, tpl.messageKey, tpl.language, tpl.published.id, {});
      assert.equal(noKey.status, 422);
      assert.equal(noKey.body.code, 'idempotency.key_required');
      const badBody = await pDraft(admin, tpl.messageKey, tpl.language, { from_name: 'Platform', variable_refs: ['site.name'] });
      assert.equal(badBody.status, 422);
      assert.deepEqual(badBody.body.errors.map((e: { path: string }) => e.path), ['/from_name'], 'platform templates have no from_name');
      const view = await pRead(admin, tpl.messageKey, tpl.language);
      assert.equal(view.body.draft.subject, tpl.draft.subject, 'nothing changed');
    });
  });
});
