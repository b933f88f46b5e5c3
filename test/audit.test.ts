// The audit log (docs/audit-log.md), end to end: one change through each path that can make one (REST, an MCP
// tool call, an admin page's form, the `atrium` command as a process, signing in and out, a refused sign-in, a
// write refused with 403) must leave exactly one entry naming the right actor, credential, path, action, target
// and outcome; a write that rolls back leaves no success entry; a 401 leaves nothing; and after all of it no
// secret, password or key used here appears anywhere in the table. Then the API over it (filters, pages, 404,
// who may read it) and the retention job.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import Type from 'typebox';
import { defineOperation } from '../src/operations/operation.ts';
import { recordAudit } from '../src/audit/audit-log.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { createPageClient } from './support/page-client.ts';
import { connectMcp } from './support/mcp.ts';
import { runCliProcess } from './support/cli-process.ts';

// An operation that writes and then fails on our side: its transaction rolls back (a 500).
const failingWrite = defineOperation({
  id: 'auditTestFailingWrite',
  method: 'POST',
  path: '/audit_test/failing_write',
  tag: 'Test',
  summary: 'Writes a course, then fails',
  scope: 'courses:write',
  capability: 'course/create',
  writes: true,
  body: Type.Object({ shortname: Type.String() }, { additionalProperties: false }),
  success: { status: 201, description: 'never' },
  errors: [],
  async handler(ctx, { body }) {
    await ctx.services.courses.createCourse(ctx.db, ctx.organisation.id, { fullname: 'Doomed', shortname: body.shortname });
    throw new Error('forced failure after the write');
  },
});

interface Entry {
  id: string;
  occurred_at: string;
  actor: { type: string; id: string | null; name: string | null };
  credential: { kind: string; id: string | null } | null;
  via: string;
  action: string;
  target: { type: string; id: string | null } | null;
  outcome: string;
  status: number;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  changed_fields: string[];
}

describe('audit log', () => {
  let t: TestContext;
  let admin: Caller;
  /** Every secret this suite hands out or types: none may end up in the table. */
  const secrets: string[] = [];
  const ADMIN_PASSWORD = 'correct horse battery staple';
  let adminEmail: string;
  let adminId: string;

  before(async () => {
    t = await startTestApp({ operations: [failingWrite] });
    admin = await t.make.caller({ roles: ['admin'] });
    secrets.push(admin.key);
    adminEmail = `admin-${Date.now()}@example.test`;
    adminId = (await t.make.person(admin.org, { roles: ['admin'], email: adminEmail, name: 'Ada Admin', password: ADMIN_PASSWORD })).id;
    secrets.push(ADMIN_PASSWORD);
  });
  after(() => t.close());

  /** Every entry of the organisation, newest first, through the API (following every page). */
  async function entries(query: Record<string, string> = {}): Promise<Entry[]> {
    const all: Entry[] = [];
    let cursor: string | null = null;
    do {
      const qs = new URLSearchParams({ ...query, limit: '200', ...(cursor ? { cursor } : {}) });
      const res = await t.api.request({ host: admin.org.address, key: admin.key, path: `/audit_events?${qs}` });
      assert.equal(res.status, 200, res.raw);
      all.push(...res.body.data);
      cursor = res.body.page.next_cursor;
    } while (cursor);
    return all;
  }

  /** The one entry of this action about this target. */
  async function onlyEntry(action: string, targetId: string | null, outcome = 'success'): Promise<Entry> {
    const found = (await entries({ action })).filter((e) => (targetId === null || e.target?.id === targetId) && e.outcome === outcome);
    assert.equal(found.length, 1, `exactly one ${outcome} entry of ${action} for ${targetId}: ${JSON.stringify(found)}`);
    return found[0];
  }

  test('a REST write: one entry in its name, with the field names it set and never their values', async () => {
    const section = await t.make.section(admin.org);
    const res = await t.api.request({ host: admin.org.address, key: admin.key, method: 'PATCH', path: `/sections/${section.id}`, body: { title: 'Audited title' }, headers: { 'user-agent': 'audit-test/1.0' } });
    assert.equal(res.status, 200);
    const e = await onlyEntry('updateSection', section.id);
    assert.deepEqual(e.actor, { type: 'user', id: admin.personId, name: 'Test Person' });
    assert.deepEqual(e.credential, { kind: 'api_key', id: admin.keyId });
    assert.equal(e.via, 'rest');
    assert.deepEqual(e.target, { type: 'section', id: section.id });
    assert.deepEqual([e.outcome, e.status], ['success', 200]);
    assert.deepEqual(e.changed_fields, ['title']);
    assert.equal(e.request_id, res.headers['request-id']);
    assert.equal(e.user_agent, 'audit-test/1.0');
    assert.ok(e.ip);
    assert.doesNotMatch(JSON.stringify(e), /Audited title/);
    // Read back by id, the same entry.
    const one = await t.api.request({ host: admin.org.address, key: admin.key, path: `/audit_events/${e.id}` });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, e);
  });

  test('an MCP tool call: one entry, via mcp, with the tool’s operation as its action', async () => {
    await t.listen();
    const section = await t.make.section(admin.org);
    let mcp: Client | undefined;
    try {
      mcp = await connectMcp(t, admin.org, { credential: admin.key });
      const result: any = await mcp.callTool({ name: 'update_section', arguments: { id: section.id, visible: false } });
      assert.equal(result._meta['atrium/status'], 200, JSON.stringify(result));
    } finally {
      await mcp?.close();
    }
    const e = await onlyEntry('updateSection', section.id);
    assert.equal(e.via, 'mcp');
    assert.deepEqual(e.actor.id, admin.personId);
    assert.deepEqual(e.credential, { kind: 'api_key', id: admin.keyId });
    assert.deepEqual(e.changed_fields, ['visible']);
  });

  test('signing in, a refused sign-in, an admin page’s form and signing out: one entry each', async () => {
    const page = createPageClient(t.app, admin.org.address, { remoteAddress: '192.0.2.7' });
    const wrong = await page.signIn(adminEmail, 'not the password at all');
    secrets.push('not the password at all');
    assert.equal(wrong.status, 401);
    const refused = await onlyEntry('sign_in', adminId, 'refused');
    // Nobody proved who they were: no actor; the account tried is the target. The e-mail typed is not kept.
    assert.deepEqual(refused.actor, { type: 'user', id: null, name: null });
    assert.equal(refused.credential, null);
    assert.deepEqual([refused.via, refused.status, refused.ip], ['sign_in', 401, '192.0.2.7']);
    assert.doesNotMatch(JSON.stringify(refused), new RegExp(adminEmail));

    // An unknown e-mail: refused too, about nobody.
    const unknownEmail = `nobody-${Date.now()}@example.test`;
    assert.equal((await page.signIn(unknownEmail, 'whatever password')).status, 401);
    assert.equal((await entries({ action: 'sign_in', outcome: 'refused' })).filter((e) => e.target === null).length, 1);

    const signedIn = await page.signIn(adminEmail, ADMIN_PASSWORD);
    assert.equal(signedIn.status, 303);
    secrets.push(page.cookies.get('atrium_session')!);
    const signIn = await onlyEntry('sign_in', adminId);
    assert.deepEqual(signIn.actor, { type: 'user', id: adminId, name: 'Ada Admin' });
    assert.equal(signIn.credential?.kind, 'session');
    const sessionId = signIn.credential!.id;

    await page.get('/admin/integrations/api-keys');
    const created = await page.post('/admin/integrations/api-keys', { name: 'From the page', scopes: ['courses:read'], mode: 'live' });
    assert.equal(created.status, 303);
    const shown = await page.follow(created);
    const key = /atr_(live|test)_[A-Za-z0-9_-]+/.exec(shown.html)?.[0];
    assert.ok(key, 'the new key is shown once');
    secrets.push(key);
    const e = (await entries({ action: 'POST /admin/integrations/api-keys' }))[0];
    assert.deepEqual(e.actor, { type: 'user', id: adminId, name: 'Ada Admin' });
    assert.deepEqual(e.credential, { kind: 'session', id: sessionId });
    assert.equal(e.via, 'admin');
    assert.equal(e.target?.type, 'api_key');
    assert.deepEqual(e.changed_fields.sort(), ['mode', 'name', 'scopes']);
    assert.equal((await entries({ action: 'POST /admin/integrations/api-keys' })).length, 1);

    // The page that lists it, with the same filters as query parameters.
    const list = await page.get(`/admin/audit?action=${encodeURIComponent('POST /admin/integrations/api-keys')}`);
    assert.equal(list.status, 200);
    assert.match(list.html, /From the page|api_key/);
    assert.match(list.html, /POST \/admin\/integrations\/api-keys/);

    await page.get('/admin');
    assert.equal((await page.post('/logout')).status, 303);
    const out = await onlyEntry('sign_out', sessionId);
    assert.deepEqual([out.actor.id, out.via, out.target?.type], [adminId, 'sign_in', 'session']);
  });

  test('the atrium command, run as a process: one entry of the operator, with option names only', async () => {
    const person = await t.make.person(admin.org, { roles: ['teacher'] });
    const password = 'cli password 5ecret!';
    secrets.push(password);
    const run = await runCliProcess(t.processEnv, ['person', 'set-password', '--org', admin.org.address, '--email', person.email, '--json'], `${password}\n`);
    assert.equal(run.code, 0, run.stderr);
    const e = await onlyEntry('atrium person set-password', person.id);
    assert.equal(e.actor.type, 'system');
    assert.equal(e.actor.id, null);
    assert.deepEqual(e.credential, { kind: 'cli', id: null });
    assert.equal(e.via, 'cli');
    assert.deepEqual(e.target, { type: 'user', id: person.id });
    assert.deepEqual(e.changed_fields.sort(), ['email', 'org']);
  });

  test('an access token issued to a client, and a write made with it: one entry each', async () => {
    const viaOAuth = await t.make.caller({ org: admin.org, roles: ['admin'], credential: 'oauth_token' });
    secrets.push(viaOAuth.key);
    const issued = await entries({ action: 'oauth.token.client_credentials' });
    assert.equal(issued.length, 1);
    assert.deepEqual([issued[0].actor.type, issued[0].via, issued[0].credential?.kind], ['client', 'oauth', 'oauth']);
    assert.match(issued[0].actor.id ?? '', /^atr_ci_/);
    const section = await t.make.section(admin.org);
    assert.equal((await t.api.request({ host: admin.org.address, key: viaOAuth.key, method: 'PATCH', path: `/sections/${section.id}`, body: { title: 'By token' } })).status, 200);
    const e = await onlyEntry('updateSection', section.id);
    assert.deepEqual([e.actor.id, e.credential?.kind, e.via], [viaOAuth.personId, 'oauth', 'rest']);
    assert.ok(e.credential?.id && !viaOAuth.key.includes(e.credential.id), 'the credential is named by an id, not by the token');
  });

  test('a write refused with 403 is recorded as refused; a 401 is never recorded', async () => {
    const teacher = await t.make.caller({ org: admin.org, roles: ['teacher'], platformAdmin: false });
    secrets.push(teacher.key);
    const refused = await t.api.request({ host: admin.org.address, key: teacher.key, method: 'POST', path: '/courses', body: { fullname: 'Not mine', shortname: 'NOPE' } });
    assert.equal(refused.status, 403);
    const e = (await entries({ actor_id: teacher.personId })).filter((x) => x.action === 'createCourse');
    assert.equal(e.length, 1);
    assert.deepEqual([e[0].outcome, e[0].status, e[0].via, e[0].credential?.id], ['refused', 403, 'rest', teacher.keyId]);
    // Refused before its body was read (the pipeline reads no body for a caller it refuses): no field names.
    assert.deepEqual(e[0].changed_fields, []);

    // Wrong scope: refused as well.
    const narrow = await t.make.caller({ org: admin.org, roles: ['admin'], scopes: ['courses:read'] });
    secrets.push(narrow.key);
    assert.equal((await t.api.request({ host: admin.org.address, key: narrow.key, method: 'POST', path: '/courses', body: { fullname: 'X', shortname: 'X1' } })).status, 403);
    assert.equal((await entries({ actor_id: narrow.personId, outcome: 'refused' })).length, 1);

    const before = (await entries()).length;
    const bogus = 'atr_live_' + 'x'.repeat(40);
    assert.equal((await t.api.request({ host: admin.org.address, key: bogus, method: 'POST', path: '/courses', body: { fullname: 'X', shortname: 'X2' } })).status, 401);
    assert.equal((await t.api.request({ host: admin.org.address, method: 'POST', path: '/courses', body: { fullname: 'X', shortname: 'X3' } })).status, 401);
    assert.equal((await entries()).length, before);
  });

  test('a write whose transaction rolls back leaves no success entry', async () => {
    // An atomic bulk whose last operation fails: nothing is written, and nothing is recorded as done.
    const lesson = await t.make.lesson(admin.org);
    const taken = await t.make.lessonPage(admin.org, { lesson_id: lesson.id });
    const operationsOfBulk = [
      { ref: 'a', op: 'create', data: { lesson_id: lesson.id, title: 'A' } },
      { ref: 'b', op: 'create', external_id: taken.external_id, data: { lesson_id: lesson.id, title: 'Clash' } },
    ];
    const bulk = await t.api.request({ host: admin.org.address, key: admin.key, method: 'POST', path: '/lesson_pages/bulk', body: { operations: operationsOfBulk, atomic: true }, headers: { 'idempotency-key': `audit-${Date.now()}` } });
    assert.equal(bulk.status, 200);
    assert.equal(bulk.body.summary.succeeded, 0);
    assert.equal((await entries({ action: 'bulkLessonPages' })).length, 0);

    // A write that fails on our side after writing: rolled back; a `failed` entry, written apart, and no success.
    const failed = await t.api.request({ host: admin.org.address, key: admin.key, method: 'POST', path: '/audit_test/failing_write', body: { shortname: 'DOOMED' } });
    assert.equal(failed.status, 500);
    const recorded = await entries({ action: 'auditTestFailingWrite' });
    assert.deepEqual(recorded.map((e) => [e.outcome, e.status]), [['failed', 500]]);
    const courses = await t.database.db.selectFrom('courses').select('id').where('shortname', '=', 'DOOMED').execute();
    assert.equal(courses.length, 0, 'the write itself rolled back');
  });

  test('the list: filters, newest first, cursor pages; 404 for an unknown id; only audit/view with audit:read reads it', async () => {
    const all = await entries();
    assert.ok(all.length >= 8);
    const times = all.map((e) => e.id);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    const firstPage = await t.api.request({ host: admin.org.address, key: admin.key, path: '/audit_events?limit=2' });
    assert.equal(firstPage.body.data.length, 2);
    const second = await t.api.request({ host: admin.org.address, key: admin.key, path: `/audit_events?limit=2&cursor=${encodeURIComponent(firstPage.body.page.next_cursor)}` });
    assert.deepEqual([...firstPage.body.data, ...second.body.data].map((e: Entry) => e.id), all.slice(0, 4).map((e) => e.id));
    // A cursor made for other filters is refused, not misread.
    const other = await t.api.request({ host: admin.org.address, key: admin.key, path: `/audit_events?limit=2&outcome=refused&cursor=${encodeURIComponent(firstPage.body.page.next_cursor)}` });
    assert.equal(other.status, 422);

    const refused = await entries({ outcome: 'refused' });
    assert.ok(refused.length > 0 && refused.every((e) => e.outcome === 'refused'));
    const sections = await entries({ target_type: 'section' });
    assert.ok(sections.length >= 2 && sections.every((e) => e.target?.type === 'section'));
    const one = sections[0];
    assert.deepEqual((await entries({ target_type: 'section', target_id: one.target!.id! })).map((e) => e.target?.id).every((id) => id === one.target!.id), true);
    const since = all[2].occurred_at;
    assert.ok((await entries({ since })).every((e) => e.occurred_at >= since));
    assert.ok((await entries({ until: since })).every((e) => e.occurred_at < since));
    assert.equal((await t.api.request({ host: admin.org.address, key: admin.key, path: '/audit_events?since=yesterday' })).status, 422);
    assert.equal((await t.api.request({ host: admin.org.address, key: admin.key, path: '/audit_events?outcome=maybe' })).status, 422);

    assert.equal((await t.api.request({ host: admin.org.address, key: admin.key, path: '/audit_events/0193a5b2-1d2e-7f30-8a41-52b6c7d8e9f0' })).status, 404);
    // Another organisation's entry is unknown here.
    const other2 = await t.make.caller();
    secrets.push(other2.key);
    assert.equal((await t.api.request({ host: other2.org.address, key: other2.key, path: `/audit_events/${one.id}` })).status, 404);
    assert.equal((await t.api.request({ host: other2.org.address, key: other2.key, path: `/audit_events?target_id=${one.target!.id}` })).body.data.length, 0);

    // A manager lacks audit/view; a token without audit:read is refused even for an administrator.
    const manager = await t.make.caller({ org: admin.org, roles: ['manager'], platformAdmin: false });
    secrets.push(manager.key);
    const byManager = await t.api.request({ host: admin.org.address, key: manager.key, path: '/audit_events' });
    assert.deepEqual([byManager.status, byManager.body.code], [403, 'auth.missing_capability']);
    const noScope = await t.make.caller({ org: admin.org, roles: ['admin'], scopes: ['courses:read'] });
    secrets.push(noScope.key);
    const byNoScope = await t.api.request({ host: admin.org.address, key: noScope.key, path: '/audit_events' });
    assert.deepEqual([byNoScope.status, byNoScope.body.code], [403, 'auth.insufficient_scope']);
    // A refused read is not a refused write: not recorded.
    assert.equal((await entries({ actor_id: manager.personId })).length, 0);
  });

  test('the retention job removes entries older than AUDIT_RETENTION_DAYS and keeps the rest', async () => {
    const org = await t.make.org();
    const base = { organisationId: org.id, actor: { type: 'system' as const, id: null, name: null }, credential: null, via: 'cli' as const, target: null, outcome: 'success' as const, status: 200, requestId: null, ip: null, userAgent: null, changedFields: [] };
    await recordAudit(t.database.db, { ...base, action: 'old' }, new Date(Date.now() - 401 * 86_400_000));
    await recordAudit(t.database.db, { ...base, action: 'recent' }, new Date(Date.now() - 399 * 86_400_000));
    const removed = await t.app.services.audit.purgeExpired();
    assert.ok(removed >= 1);
    const left = await t.database.db.selectFrom('audit_events').select('action').where('organisation_id', '=', org.id).execute();
    assert.deepEqual(left.map((r) => r.action), ['recent']);
  });

  test('no secret, password, key or session token used in this suite appears anywhere in the table', async () => {
    assert.ok(secrets.length >= 8);
    const rows = await t.database.db.selectFrom('audit_events').selectAll().execute();
    assert.ok(rows.length > 10);
    const text = JSON.stringify(rows);
    for (const secret of secrets) assert.ok(!text.includes(secret), `a secret found in the audit log: ${secret.slice(0, 6)}…`);
    // Nor anything shaped like one of our credentials.
    assert.doesNotMatch(text, /atr_(live|test|at|cs)_/);
  });
});
