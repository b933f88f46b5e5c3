// The admin area at the request level (docs/authentication.md#signing-in-and-the-admin-area): who may open each page, the headers every
// page sends, CSRF, forms refused and kept, and that a page does what the REST operation does, through the
// same service. The same journeys run in Chromium in test/browser/admin.browser.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { capabilityDescriptions, roleNames, roles, type RoleName } from '../src/access/capabilities.ts';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { createPageClient, testIdText, type PageClient } from './support/page-client.ts';

const PASSWORD = 'correct horse battery';
const pages = ['/admin/people', '/admin/integrations/api-keys', '/admin/integrations/oauth-clients', '/admin/integrations/mcp', '/admin/webhooks', '/admin/extensions'];

describe('admin pages', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function signedIn(opts: { roles?: RoleName[]; org?: Organisation } = {}): Promise<{ org: Organisation; personId: string; browser: PageClient }> {
    const org = opts.org ?? (await t.make.org());
    const person = await t.make.person(org, { roles: opts.roles ?? ['admin'], password: PASSWORD, name: 'Ada Admin' });
    const browser = createPageClient(t.app, org.address);
    assert.equal((await browser.signIn(person.email, PASSWORD)).status, 303);
    return { org, personId: person.id, browser };
  }

  const eventsOf = async (org: Organisation, type: string) =>
    t.database.db.selectFrom('outbox_events').select('data').where('organisation_id', '=', org.id).where('type', '=', type).execute();

  describe('access', () => {
    test('not signed in: 303 to the sign-in page, which leads back after signing in', async () => {
      const org = await t.make.org();
      const person = await t.make.person(org, { password: PASSWORD });
      const browser = createPageClient(t.app, org.address);
      for (const page of ['/admin', ...pages]) {
        const res = await browser.get(page);
        assert.equal(res.status, 303, page);
        assert.equal(res.location, `/login?return_to=${encodeURIComponent(page)}`);
      }
      await browser.get('/login?return_to=%2Fadmin%2Fwebhooks');
      const back = await browser.post('/login', { email: person.email, password: PASSWORD, return_to: '/admin/webhooks' });
      assert.equal(back.location, '/admin/webhooks');
    });

    test('a teacher: the index offers no page, and each page is a 403 page', async () => {
      const { browser } = await signedIn({ roles: ['teacher'] });
      const index = await browser.get('/admin');
      assert.equal(index.status, 200);
      assert.match(index.html, /Your roles give you none of the admin pages/);
      for (const page of pages) {
        const res = await browser.get(page);
        assert.equal(res.status, 403, page);
        assert.match(res.html, /Not allowed/);
      }
    });

    test('an administrator sees every page in the menu and the index', async () => {
      const { browser } = await signedIn();
      const index = await browser.get('/admin');
      for (const page of pages) assert.match(index.html, new RegExp(`href="${page}"`));
      for (const page of pages) assert.equal((await browser.get(page)).status, 200, page);
    });

    test('every page: CSP without inline script, no framing, same-origin referrer, no-store, and no <script> at all', async () => {
      const { browser } = await signedIn();
      for (const page of ['/login', '/admin', ...pages]) {
        const res = await browser.get(page);
        const csp = String(res.headers['content-security-policy']);
        assert.match(csp, /script-src 'self'/, page);
        assert.doesNotMatch(csp, /unsafe-inline/, page);
        assert.match(csp, /frame-ancestors 'none'/, page);
        assert.equal(res.headers['referrer-policy'], 'same-origin', page);
        assert.equal(res.headers['cache-control'], 'no-store', page);
        assert.equal(res.headers['x-content-type-options'], 'nosniff', page);
        assert.doesNotMatch(res.html, /<script/i, page);
        assert.doesNotMatch(res.html, /\sstyle=/i, page);
      }
    });

    test('the stylesheet is a file with a content hash in its URL, cached for long', async () => {
      const { browser } = await signedIn();
      const href = /<link rel="stylesheet" href="([^"]+)"/.exec((await browser.get('/admin')).html)![1];
      assert.match(href, /^\/assets\/atrium\.css\?v=[0-9a-f]{12}$/);
      const css = await t.app.inject({ url: href });
      assert.equal(css.statusCode, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.match(String(css.headers['cache-control']), /max-age=31536000.*immutable/);
      assert.match(css.body, /@media \(max-width/, 'it adapts to a phone');
    });
  });

  describe('CSRF', () => {
    test('a form without its token, with a forged one, or with one from another session: 403 page, nothing changes', async () => {
      const { org, browser } = await signedIn();
      const other = await signedIn({ org });
      const othersToken = /name="_csrf" value="([^"]+)"/.exec((await other.browser.get('/admin/integrations/api-keys')).html)![1];
      await browser.get('/admin/integrations/api-keys');
      for (const csrf of [null, 'forged', othersToken]) {
        const res = await browser.post('/admin/integrations/api-keys', { name: 'sneaky', scopes: 'courses:read', mode: 'live' }, { csrf });
        assert.equal(res.status, 403, String(csrf));
        assert.match(res.html, /security token/);
      }
      assert.equal((await t.app.services.apiKeys.list(org.id)).length, 0);
    });
  });

  describe('/admin/people', () => {
    /** The capabilities each role's <details> lists on the page, as (capability, sentence) pairs, by role key. */
    function rolesOnPage(html: string): Map<string, Array<[string, string]>> {
      const found = new Map<string, Array<[string, string]>>();
      for (const m of html.matchAll(/<details class="card" id="role-([^"]+)">([\s\S]*?)<\/details>/g)) {
        found.set(m[1], [...m[2].matchAll(/<dt><code>([^<]+)<\/code><\/dt><dd>([^<]*)<\/dd>/g)].map((c) => [c[1], c[2]]));
      }
      return found;
    }

    test('every role, built in and custom, lists what it allows, one catalogue sentence per capability; its name is escaped', async () => {
      const { org, browser } = await signedIn({ roles: ['manager'] });
      await t.database.db.transaction().execute((tx) => t.app.services.roles.create(tx, org.id, { key: 'grader', name: '<b>Graders & co</b>', capabilities: ['enrol/view', 'audit/view'] }));
      const res = await browser.get('/admin/people');
      assert.equal(res.status, 200);
      const shown = rolesOnPage(res.html);
      assert.deepEqual([...shown.keys()], [...roleNames, 'grader']);
      for (const role of roleNames) assert.deepEqual(shown.get(role), roles[role].map((c) => [c, capabilityDescriptions[c]]), role);
      assert.deepEqual(shown.get('grader'), [
        ['enrol/view', 'See who is enrolled in which course, with which role and dates.'],
        ['audit/view', 'Read the audit log: who changed what, when, with which credential.'],
      ]);
      assert.match(res.html, /<summary><strong>&lt;b&gt;Graders &amp; co&lt;\/b&gt;<\/strong> <code>grader<\/code><\/summary>/);
      assert.match(res.html, /<h2 id="roles">Roles and what they allow<\/h2>/);
      assert.match(res.html, /<a href="#roles">Roles and what they allow<\/a>/, 'the invite form points to them');
    });
  });

  describe('/admin/integrations/api-keys', () => {
    test('a key made on the page is shown once, acts as its maker on the REST API, and is the CLI’s kind of row', async () => {
      const { org, personId, browser } = await signedIn();
      await browser.get('/admin/integrations/api-keys');
      const created = await browser.post('/admin/integrations/api-keys', { name: 'Records sync', scopes: ['courses:read', 'audit:read'], mode: 'test' });
      assert.equal(created.status, 303);
      assert.equal(created.location, '/admin/integrations/api-keys');
      const shown = await browser.follow(created);
      const key = testIdText(shown.html, 'new-secret')!;
      assert.match(key, /^atr_test_[0-9A-Za-z]{49}$/);
      assert.match(shown.html, /Records sync/);
      assert.equal(testIdText((await browser.get('/admin/integrations/api-keys')).html, 'new-secret'), undefined, 'shown once');
      const me = await t.api.request({ host: org.address, key, path: '/me' });
      assert.equal(me.status, 200);
      assert.equal(me.body.subject.person_id, personId);
      assert.deepEqual(me.body.scopes, ['audit:read', 'courses:read']);
      const [row] = await t.app.services.apiKeys.list(org.id);
      assert.deepEqual([row.name, row.mode, row.person_id, JSON.parse(row.scopes)], ['Records sync', 'test', personId, ['courses:read', 'audit:read']]);
      assert.equal((await eventsOf(org, 'api_key.created')).length, 1);
    });

    test('a refused form comes back 422 with the input kept and the message next to its field', async () => {
      const { org, browser } = await signedIn();
      await browser.get('/admin/integrations/api-keys');
      const noScope = await browser.post('/admin/integrations/api-keys', { name: 'Half done', mode: 'test' });
      assert.equal(noScope.status, 422);
      assert.match(noScope.html, /value="Half done"/);
      assert.match(noScope.html, /<option value="test" selected>/);
      assert.match(noScope.html, /<p class="field-error">`scopes` must NOT have fewer than 1 items\.<\/p>|class="field-error">[^<]*scopes/);
      const longName = await browser.post('/admin/integrations/api-keys', { name: 'x'.repeat(101), scopes: 'courses:read', mode: 'live' });
      assert.equal(longName.status, 422);
      assert.match(longName.html, /id="name-error">`name` must be at most 100 characters long\./);
      assert.match(longName.html, /id="scope-courses-read" name="scopes" value="courses:read" checked/);
      const badScope = await browser.post('/admin/integrations/api-keys', { name: 'x', scopes: 'courses:fly', mode: 'live' });
      assert.equal(badScope.status, 422);
      assert.equal((await t.app.services.apiKeys.list(org.id)).length, 0);
    });

    test('on a plan without the API entitlement the page lists and revokes, but refuses a new key: 412 naming commerce.plan_entitlement', async () => {
      const { org, personId, browser } = await signedIn();
      const existing = await t.make.apiKey(org, personId);
      await t.app.services.organisations.update(org.address, { plan: 'no-api' });
      const page = await browser.get('/admin/integrations/api-keys');
      assert.equal(page.status, 200);
      const refused = await browser.post('/admin/integrations/api-keys', { name: 'Export', scopes: 'courses:read', mode: 'live' });
      assert.equal(refused.status, 412);
      assert.match(refused.html, /commerce\.plan_entitlement/);
      assert.match(refused.html, /value="Export"/);
      assert.equal((await t.app.services.apiKeys.list(org.id)).length, 1);
      const revoked = await browser.post(`/admin/integrations/api-keys/${existing.id}/revoke`);
      assert.equal(revoked.status, 303);
    });

    test('Revoke: the key is refused (401) on its next request; another organisation’s or an unknown id is a 404 page', async () => {
      const { org, personId, browser } = await signedIn();
      const key = await t.make.apiKey(org, personId);
      assert.equal((await t.api.request({ host: org.address, key: key.key, path: '/me' })).status, 200);
      await browser.get('/admin/integrations/api-keys');
      const res = await browser.post(`/admin/integrations/api-keys/${key.id}/revoke`);
      assert.equal(res.status, 303);
      assert.match((await browser.follow(res)).html, /API key revoked/);
      const refused = await t.api.request({ host: org.address, key: key.key, path: '/me' });
      assert.equal(refused.status, 401);
      assert.equal((await eventsOf(org, 'api_key.revoked')).length, 1);
      const stranger = await t.make.caller();
      for (const id of [stranger.keyId, '0191f5c2-0000-7000-8000-000000000000', 'not-a-uuid']) {
        const other = await browser.post(`/admin/integrations/api-keys/${id}/revoke`);
        assert.equal(other.status, 404, id);
      }
      assert.equal((await t.api.request({ host: stranger.org.address, key: stranger.key, path: '/me' })).status, 200, 'untouched');
    });
  });

  describe('/admin/integrations/oauth-clients', () => {
    test('Register client: the id and the secret shown once; the client gets tokens; Rotate secret; Delete revokes its tokens', async () => {
      const { org, personId, browser } = await signedIn();
      await browser.get('/admin/integrations/oauth-clients');
      const res = await browser.post('/admin/integrations/oauth-clients', { name: 'Nightly sync', type: 'confidential', redirect_uris: '', grant_types: 'client_credentials', scopes: ['courses:read', 'enrolments:read'], service_person_id: personId });
      assert.equal(res.status, 303);
      const shown = await browser.follow(res);
      const clientId = testIdText(shown.html, 'new-client-id')!;
      const secret = testIdText(shown.html, 'new-secret')!;
      assert.match(clientId, /^atr_ci_/);
      assert.match(secret, /^atr_cs_/);
      const again = await browser.get('/admin/integrations/oauth-clients');
      assert.equal(testIdText(again.html, 'new-secret'), undefined, 'shown once');
      assert.match(again.html, new RegExp(clientId));
      const token = async (s: string) =>
        t.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: org.address, 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${s}`).toString('base64')}` }, payload: 'grant_type=client_credentials' });
      const first = await token(secret);
      assert.equal(first.statusCode, 200);
      const accessToken = JSON.parse(first.body).access_token;
      assert.equal((await t.api.request({ host: org.address, key: accessToken, path: '/me' })).body.subject.person_id, personId);

      const [row] = await t.app.services.oauthClients.list(org.id);
      const rotated = await browser.follow(await browser.post(`/admin/integrations/oauth-clients/${row.id}/rotate-secret`));
      const newSecret = testIdText(rotated.html, 'new-secret')!;
      assert.notEqual(newSecret, secret);
      assert.equal((await token(secret)).statusCode, 401, 'the old secret is refused');
      assert.equal((await token(newSecret)).statusCode, 200);

      await browser.post(`/admin/integrations/oauth-clients/${row.id}/delete`);
      assert.equal((await t.api.request({ host: org.address, key: accessToken, path: '/me' })).status, 401, 'its tokens are revoked at once');
      assert.equal((await token(newSecret)).statusCode, 401);
      const types = (await t.database.db.selectFrom('outbox_events').select('type').where('organisation_id', '=', org.id).execute()).map((e) => e.type);
      for (const type of ['oauth_client.created', 'oauth_client.secret_rotated', 'oauth_client.deleted']) assert.ok(types.includes(type), type);
    });

    test('a refused form: 422, input kept, each message next to its field; a public client shows its id and no secret', async () => {
      const { org, browser } = await signedIn();
      await browser.get('/admin/integrations/oauth-clients');
      const refused = await browser.post('/admin/integrations/oauth-clients', { name: 'Kept name', type: 'public', redirect_uris: 'http://evil.example/cb', grant_types: ['authorization_code', 'client_credentials'], scopes: 'courses:read' });
      assert.equal(refused.status, 422);
      assert.match(refused.html, /value="Kept name"/);
      assert.match(refused.html, /http:\/\/evil\.example\/cb<\/textarea>/);
      assert.match(refused.html, /<p class="field-error" id="redirect_uris-error">/);
      assert.match(refused.html, /A public client cannot use client_credentials/);
      assert.equal((await t.app.services.oauthClients.list(org.id)).length, 0);
      const ok = await browser.follow(await browser.post('/admin/integrations/oauth-clients', { name: 'Phone app', type: 'public', redirect_uris: 'http://127.0.0.1:7777/cb\nhttps://app.example/cb', grant_types: 'authorization_code', scopes: 'courses:read' }));
      assert.match(testIdText(ok.html, 'new-client-id')!, /^atr_ci_/);
      assert.equal(testIdText(ok.html, 'new-secret'), undefined);
    });

    test('self-registered clients are listed (marked) and can be deleted; other organisations’ ids are a 404 page', async () => {
      const { org, browser } = await signedIn();
      const registered = await t.app.inject({ method: 'POST', url: '/oauth/register', headers: { host: org.address, 'content-type': 'application/json' }, payload: JSON.stringify({ client_name: 'Claude', redirect_uris: ['http://127.0.0.1:5555/callback'] }) });
      assert.equal(registered.statusCode, 201);
      const page = await browser.get('/admin/integrations/oauth-clients');
      assert.match(page.html, /Claude/);
      assert.match(page.html, /self-registered/);
      const other = await t.make.org();
      const theirs = await t.app.services.oauthClients.create(other.id, null, { name: 'Theirs', type: 'public', redirect_uris: ['https://x.example/cb'], grant_types: ['authorization_code'], scopes: ['courses:read'] });
      assert.equal((await browser.post(`/admin/integrations/oauth-clients/${theirs.id}/delete`)).status, 404);
      assert.equal((await t.app.services.oauthClients.list(other.id)).length, 1);
    });

    test('without the API entitlement: 412 naming commerce.plan_entitlement, nothing registered', async () => {
      const { org, browser } = await signedIn();
      await t.app.services.organisations.update(org.address, { plan: 'no-api' });
      await browser.get('/admin/integrations/oauth-clients');
      const res = await browser.post('/admin/integrations/oauth-clients', { name: 'App', type: 'public', redirect_uris: 'https://app.example/cb', grant_types: 'authorization_code', scopes: 'courses:read' });
      assert.equal(res.status, 412);
      assert.match(res.html, /commerce\.plan_entitlement/);
      assert.equal((await t.app.services.oauthClients.list(org.id)).length, 0);
    });
  });

  describe('/admin/webhooks', () => {
    const url = (path: string) => `${t.make.webhookUrl}/pages/${path}-${Math.random().toString(36).slice(2)}`;

    test('Add endpoint sends the verification ping of operation 6; the secret is shown once; the ping opens the delivery log', async () => {
      const { org, browser } = await signedIn();
      await browser.get('/admin/webhooks');
      const endpoint = url('add');
      const res = await browser.post('/admin/webhooks', { url: endpoint, event_types: 'section.*\r\ncourse.created\r\n', description: 'Sync' });
      assert.equal(res.status, 303);
      const page = await browser.follow(res);
      const secret = testIdText(page.html, 'new-secret')!;
      assert.match(secret, /^whsec_/);
      const [ping] = await t.receiver.waitFor(1, new URL(endpoint).pathname);
      assert.equal(JSON.parse(ping.body).type, 'webhook.ping');
      assert.match(page.html, /webhook\.ping/);
      assert.match(page.html, /<td class="num">1<\/td>/, 'one attempt');
      assert.equal(testIdText((await browser.get(res.location!)).html, 'new-secret'), undefined);
      const [row] = await t.database.db.selectFrom('webhook_subscriptions').selectAll().where('organisation_id', '=', org.id).execute();
      assert.deepEqual([row.url, JSON.parse(row.event_types), row.description, row.status], [endpoint, ['section.*', 'course.created'], 'Sync', 'enabled']);
      assert.equal((await eventsOf(org, 'webhook_subscription.created')).length, 1);
      const list = await browser.get('/admin/webhooks');
      assert.match(list.html, new RegExp(endpoint.replaceAll('.', '\\.')));
    });

    test('an endpoint that does not answer 2xx: 422 with the input kept and the reason at URL; nothing stored', async () => {
      const { org, browser } = await signedIn();
      t.receiver.respond(() => ({ status: 500 }));
      try {
        await browser.get('/admin/webhooks');
        const endpoint = url('refuses');
        const res = await browser.post('/admin/webhooks', { url: endpoint, event_types: '*', description: 'Kept' });
        assert.equal(res.status, 422);
        assert.match(res.html, /id="url-error">[^<]*HTTP 500/);
        assert.match(res.html, new RegExp(`value="${endpoint.replaceAll('.', '\\.')}"`));
        assert.match(res.html, /value="Kept"/);
        const unknownEvent = await browser.post('/admin/webhooks', { url: endpoint, event_types: 'section.*\nnot.an.event' });
        assert.equal(unknownEvent.status, 422);
        assert.match(unknownEvent.html, /id="event_types-error"/);
        const http = await browser.post('/admin/webhooks', { url: 'http://example.com/hook', event_types: '*' });
        assert.equal(http.status, 422);
      } finally {
        t.receiver.respond(() => ({ status: 200 }));
      }
      assert.equal((await t.database.db.selectFrom('webhook_subscriptions').select('id').where('organisation_id', '=', org.id).execute()).length, 0);
    });

    test('on a plan without the API entitlement: 412 naming commerce.plan_entitlement, and no ping is sent', async () => {
      const { org, browser } = await signedIn();
      await t.app.services.organisations.update(org.address, { plan: 'no-api' });
      await browser.get('/admin/webhooks');
      const endpoint = url('no-api');
      const res = await browser.post('/admin/webhooks', { url: endpoint, event_types: '*' });
      assert.equal(res.status, 412);
      assert.match(res.html, /commerce\.plan_entitlement/);
      assert.equal(t.receiver.received.filter((r) => r.path === new URL(endpoint).pathname).length, 0);
    });

    test('the endpoint page: send test, resend, rotate secret, disable and enable, delete — each as the REST operation does it', async () => {
      const { org, browser } = await signedIn();
      await browser.get('/admin/webhooks');
      const endpoint = url('detail');
      const added = await browser.post('/admin/webhooks', { url: endpoint, event_types: '*' });
      const page = added.location!;
      const id = page.split('/').pop()!;
      await browser.get(page);

      const test_ = await browser.post(`${page}/send-test`);
      assert.equal(test_.status, 303);
      assert.match((await browser.follow(test_)).html, /Test event queued/);
      while ((await t.app.services.webhookDelivery.dispatch()) + (await t.app.services.webhookDelivery.deliver()) > 0);
      await t.receiver.waitFor(2, new URL(endpoint).pathname);

      const log = await t.app.services.webhooks.deliveries(t.database.db, org.id, id, {});
      const ping = log.data.find((d) => d.event_type === 'webhook.ping')!;
      const resent = await browser.post(`${page}/deliveries/${ping.id}/resend`);
      assert.match((await browser.follow(resent)).html, /Delivery of webhook\.ping queued again/);
      const pending = await browser.post(`${page}/deliveries/${ping.id}/resend`);
      assert.match((await browser.follow(pending)).html, /still being tried/, 'a conflict is news on the page, not an error page');
      assert.equal((await browser.post(`${page}/deliveries/0191f5c2-0000-7000-8000-000000000000/resend`)).status, 404);

      const rotated = await browser.follow(await browser.post(`${page}/rotate-secret`));
      assert.match(testIdText(rotated.html, 'new-secret')!, /^whsec_/);

      await browser.post(`${page}/disable`);
      assert.equal((await t.app.services.webhooks.get(t.database.db, org.id, id)).status, 'disabled');
      assert.match((await browser.get(page)).html, /<button type="submit" class="secondary">Enable<\/button>/);
      await browser.post(`${page}/enable`);
      assert.equal((await t.app.services.webhooks.get(t.database.db, org.id, id)).status, 'enabled');

      const deleted = await browser.post(`${page}/delete`);
      assert.equal(deleted.location, '/admin/webhooks');
      assert.equal((await browser.get(page)).status, 404);
      const types = (await t.database.db.selectFrom('outbox_events').select('type').where('organisation_id', '=', org.id).execute()).map((e) => e.type);
      for (const type of ['webhook_subscription.test_sent', 'webhook_subscription.delivery_resent', 'webhook_subscription.secret_rotated', 'webhook_subscription.updated', 'webhook_subscription.deleted']) {
        assert.ok(types.includes(type), type);
      }
    });

    test("another organisation's endpoint, an unknown id or a malformed one: a 404 page, and its actions change nothing", async () => {
      const { browser } = await signedIn();
      const other = await t.make.org();
      const theirs = await t.make.webhookSubscription(other);
      for (const id of [theirs.id, '0191f5c2-0000-7000-8000-000000000000', 'nope']) {
        assert.equal((await browser.get(`/admin/webhooks/${id}`)).status, 404, id);
      }
      await browser.get('/admin/webhooks');
      assert.equal((await browser.post(`/admin/webhooks/${theirs.id}/delete`)).status, 404);
      assert.equal((await t.app.services.webhooks.get(t.database.db, other.id, theirs.id)).status, 'enabled');
    });
  });

  describe('/admin/extensions', () => {
    test('every kind is listed; Save switches extensions, and GET /extensions reports the same states', async () => {
      const { org, personId, browser } = await signedIn();
      const page = await browser.get('/admin/extensions');
      for (const kind of ['Activity types', 'Blocks', 'Enrolment methods', 'Login methods', 'Question types', 'Reports', 'Themes', 'Integrations']) assert.match(page.html, new RegExp(`<legend>${kind}</legend>`));
      const all = (await t.app.services.extensions.list(t.database.db, org.id)).map((e) => e.id);
      const res = await browser.post('/admin/extensions', { enabled: all.filter((id) => id !== 'mod_wiki' && id !== 'enrol_guest') });
      assert.equal(res.status, 303);
      assert.match((await browser.follow(res)).html, /Saved: Guest access off, Wiki off./);
      const key = await t.make.apiKey(org, personId);
      const listed = await t.api.request({ host: org.address, key: key.key, path: '/extensions' });
      const state = Object.fromEntries(listed.body.data.map((e: { id: string; enabled: boolean }) => [e.id, e.enabled]));
      assert.equal(state.mod_wiki, false);
      assert.equal(state.enrol_guest, false);
      assert.equal(state.mod_lesson, true);
      assert.match((await browser.get('/admin/extensions')).html, /id="ext-mod_wiki" name="enabled" value="mod_wiki">/);
    });
  });
});
