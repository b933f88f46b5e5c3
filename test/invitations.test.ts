// Invitations and /admin/people at the request level (docs/api-guide.md#users-roles-and-the-organisation), with a real SMTP server: the mail
// carries a one-time link; the page sets the password and signs the person in; a used or expired link is a 410
// page; the people page obeys the REST API's rules and CSRF. The same journeys run in Chromium in
// test/browser/people.browser.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestContext } from './support/harness.ts';
import { createPageClient } from './support/page-client.ts';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';
import type { Caller } from './support/factories.ts';
import { invitationLinkIn } from './support/invitation-mail.ts';

const PASSWORD = 'correct horse battery';

describe('invitations and /admin/people', () => {
  let t: TestContext;
  let smtp: TestSmtpServer;
  let admin: Caller;
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: smtp.url } });
    admin = await t.make.caller({ platformAdmin: false });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  async function invite(email: string) {
    const created = await t.api.request({ method: 'POST', path: '/users', host: admin.org.address, key: admin.key, body: { email, name: 'Invited Person', roles: ['teacher'] } });
    const res = await t.api.request({ method: 'POST', path: `/users/${created.body.id}/actions/invite`, host: admin.org.address, key: admin.key });
    assert.equal(res.status, 201);
    return { id: created.body.id as string, path: new URL(invitationLinkIn(smtp, email)).pathname };
  }

  test('the mailed link leads to a form; the password chosen signs the person in (303 to /admin) and works for signing in later', async () => {
    const { id, path } = await invite('invitee@example.edu');
    const stored = await t.database.db.selectFrom('invitations').select('token_hash').where('person_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(stored.token_hash.length, 64, 'a SHA-256, not the token');
    assert.ok(!path.includes(stored.token_hash));
    const page = createPageClient(t.app, admin.org.address);
    const form = await page.get(path);
    assert.equal(form.status, 200);
    assert.match(form.html, /<label for="password">Password<\/label>/);
    assert.match(form.html, /<label for="password_repeat">Repeat password<\/label>/);
    assert.match(form.html, />Set password<\/button>/);
    assert.match(form.html, /invitee@example\.edu/);

    const differ = await page.post(path, { password: PASSWORD, password_repeat: 'something else' });
    assert.equal(differ.status, 422);
    assert.match(differ.html, /The two passwords differ/);
    const short = await page.post(path, { password: 'short', password_repeat: 'short' });
    assert.equal(short.status, 422);
    const noCsrf = await page.post(path, { password: PASSWORD, password_repeat: PASSWORD }, { csrf: null });
    assert.equal(noCsrf.status, 403);

    const done = await page.post(path, { password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/admin');
    assert.ok(page.cookies.has('atrium_session'));
    assert.equal((await page.get('/admin')).status, 200);
    const user = await t.api.request({ path: `/users/${id}`, host: admin.org.address, key: admin.key });
    assert.ok(user.body.last_sign_in_at, 'being signed in counts as signing in');

    const again = createPageClient(t.app, admin.org.address);
    assert.equal((await again.get(path)).status, 410, 'good once');
    // The signed-in page client holds a CSRF token of its session, so its POST reaches the link's check.
    assert.equal((await page.post(path, { password: 'another password', password_repeat: 'another password' })).status, 410);
    assert.equal((await again.signIn('invitee@example.edu', PASSWORD)).status, 303);
  });

  test('a link past its 72 hours is a 410 page; so is a made-up one and one of another organisation', async () => {
    const { id, path } = await invite('late@example.edu');
    await t.database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('person_id', '=', id).execute();
    const page = createPageClient(t.app, admin.org.address);
    const res = await page.get(path);
    assert.equal(res.status, 410);
    assert.match(res.html, /This link no longer works/);
    assert.equal((await page.get('/invitations/made-up-token')).status, 410);
    const fresh = await invite('elsewhere@example.edu');
    const other = await t.make.org();
    assert.equal((await createPageClient(t.app, other.address).get(fresh.path)).status, 410);
  });

  test('a refused mail is a 502 mail.unavailable and records no invitation', async () => {
    smtp.reject.add('bounce@example.edu');
    const created = await t.api.request({ method: 'POST', path: '/users', host: admin.org.address, key: admin.key, body: { email: 'bounce@example.edu', name: 'Bounce' } });
    const res = await t.api.request({ method: 'POST', path: `/users/${created.body.id}/actions/invite`, host: admin.org.address, key: admin.key });
    assert.equal(res.status, 502);
    assert.equal(res.body.code, 'mail.unavailable');
    assert.equal((await t.database.db.selectFrom('invitations').select('id').where('person_id', '=', created.body.id).execute()).length, 0);
    const gone = await t.api.request({ method: 'DELETE', path: `/users/${created.body.id}`, host: admin.org.address, key: admin.key });
    assert.equal(gone.status, 204);
    const deleted = await t.api.request({ method: 'POST', path: `/users/${created.body.id}/actions/invite`, host: admin.org.address, key: admin.key });
    assert.equal(deleted.status, 409);
    assert.equal(deleted.body.code, 'user.deleted');
  });

  test('/admin/people: invite, roles, suspend, remove with the REST rules; CSRF required; a teacher gets a 403 page', async () => {
    const me = await t.make.person(admin.org, { roles: ['admin'], password: PASSWORD });
    const page = createPageClient(t.app, admin.org.address);
    await page.signIn(me.email, PASSWORD);
    assert.equal((await page.get('/admin/people')).status, 200);
    const invited = await page.post('/admin/people', { email: 'PAGE-Invite@example.edu', name: 'Page Invite', roles: ['teacher'] });
    assert.equal(invited.status, 303);
    assert.match((await page.follow(invited)).html, /mailed an invitation/);
    invitationLinkIn(smtp, 'page-invite@example.edu');
    const twin = await page.post('/admin/people', { email: 'page-invite@EXAMPLE.edu', name: 'Twin' });
    assert.equal(twin.status, 409);
    assert.match(twin.html, /Another user of this organisation has the e-mail address/);

    const user = (await t.api.request({ path: '/users?email=page-invite@example.edu', host: admin.org.address, key: admin.key })).body.data[0];
    await page.get('/admin/people');
    assert.equal((await page.post(`/admin/people/${user.id}/suspend`, {}, { csrf: null })).status, 403, 'no CSRF token, no change');
    assert.equal((await t.api.request({ path: `/users/${user.id}`, host: admin.org.address, key: admin.key })).body.status, 'active');
    assert.equal((await page.post(`/admin/people/${user.id}/suspend`)).status, 303);
    assert.equal((await t.api.request({ path: `/users/${user.id}`, host: admin.org.address, key: admin.key })).body.status, 'suspended');
    await page.get('/admin/people');
    await page.post(`/admin/people/${user.id}/roles`, { roles: ['teacher', 'manager'] });
    assert.deepEqual((await t.api.request({ path: `/users/${user.id}`, host: admin.org.address, key: admin.key })).body.roles, ['teacher', 'manager']);

    const self = await page.post(`/admin/people/${me.id}/suspend`);
    assert.match((await page.follow(self)).html, /You cannot suspend yourself\. \(user\.self\)/);
    await page.get('/admin/people');
    assert.equal((await page.post(`/admin/people/${user.id}/remove`)).status, 303);
    assert.ok((await t.api.request({ path: `/users/${user.id}`, host: admin.org.address, key: admin.key })).body.deleted_at);

    const teacher = await t.make.person(admin.org, { roles: ['teacher'], password: PASSWORD });
    const other = createPageClient(t.app, admin.org.address);
    await other.signIn(teacher.email, PASSWORD);
    assert.equal((await other.get('/admin/people')).status, 403);
  });
});
