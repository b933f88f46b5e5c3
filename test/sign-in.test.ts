// Signing in (docs/authentication.md#signing-in-and-the-admin-area), at the request level: the session cookie, expiry, sign-out, the lockout,
// the answers that give nothing away, and sessions that mean nothing at another organisation's address.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { redisAnswers, testRedisUrl } from './support/redis.ts';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { startTestApp, manualClock, type TestContext } from './support/harness.ts';
import { createPageClient } from './support/page-client.ts';
import { safeReturnPath } from '../src/pages/sign-in.page.ts';

const PASSWORD = 'correct horse battery';

describe('signing in', () => {
  const clock = manualClock(new Date('2026-11-23T09:00:00.000Z'));
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  async function personWithPassword(roles: Array<'admin' | 'teacher'> = ['admin']) {
    const org = await t.make.org();
    const person = await t.make.person(org, { roles, password: PASSWORD, name: 'Ada Admin' });
    return { org, person, browser: createPageClient(t.app, org.address) };
  }

  test('GET /login: a form with Email, Password and Sign in; the CSRF cookie is set', async () => {
    const { org } = await personWithPassword();
    const res = await createPageClient(t.app, org.address).get('/login');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.html, /<label for="email">Email<\/label>/);
    assert.match(res.html, /<label for="password">Password<\/label>/);
    assert.match(res.html, /<button type="submit">Sign in<\/button>/);
    assert.match(res.html, /name="_csrf" value="[^"]+"/);
  });

  test('a right pair sets an HttpOnly, SameSite=Lax, host-only session cookie and answers 303 to /admin', async () => {
    const { person, browser } = await personWithPassword();
    const res = await browser.signIn(person.email, PASSWORD);
    assert.equal(res.status, 303);
    assert.equal(res.location, '/admin');
    const cookie = res.setCookies.find((c) => c.startsWith('atrium_session='))!;
    assert.ok(cookie, 'the session cookie is set');
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Domain=/i);
    assert.doesNotMatch(cookie, /Secure/, 'plain http in development');
    const admin = await browser.get('/admin');
    assert.equal(admin.status, 200);
    assert.match(admin.html, /Signed in as <strong>Ada Admin<\/strong>/);
    assert.match(admin.html, /<button type="submit" class="link">Sign out<\/button>/);
  });

  test('the cookie is Secure when PUBLIC_SCHEME is https', async () => {
    const secure = await startTestApp({ env: { PUBLIC_SCHEME: 'https' } });
    try {
      const org = await secure.make.org();
      const person = await secure.make.person(org, { password: PASSWORD });
      const res = await createPageClient(secure.app, org.address).signIn(person.email, PASSWORD);
      assert.match(res.setCookies.find((c) => c.startsWith('atrium_session='))!, /; Secure/);
    } finally {
      await secure.close();
    }
  });

  test('only a hash of the session token is stored', async () => {
    const { person, browser } = await personWithPassword();
    await browser.signIn(person.email, PASSWORD);
    const token = browser.cookies.get('atrium_session')!;
    const rows = await t.database.db.selectFrom('sessions').selectAll().where('person_id', '=', person.id).execute();
    assert.equal(rows.length, 1);
    assert.ok(!Object.values(rows[0]).some((v) => typeof v === 'string' && v.includes(token)));
  });

  test('return_to leads back to a path on this origin, never elsewhere', async () => {
    const { person, browser } = await personWithPassword();
    await browser.get('/login?return_to=%2Fadmin%2Fwebhooks%3Fcursor%3Dx');
    const res = await browser.post('/login', { email: person.email, password: PASSWORD, return_to: '/admin/webhooks?cursor=x' });
    assert.equal(res.location, '/admin/webhooks?cursor=x');
    for (const bad of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', 'admin']) assert.equal(safeReturnPath(bad, 'http://org.example'), '/admin', bad);
  });

  describe('return_to is judged in the form the browser follows (after dot segments, backslashes, tabs and newlines)', () => {
    // Each becomes `//evil.example` (another host) once normalised, spelled plainly or percent-encoded in the query.
    const elsewhere = [
      '/.//evil.example', '/%2e//evil.example', '/%2E//evil.example', '/a/..//evil.example', '/a/%2e%2e//evil.example', '/..//evil.example',
      '/\\evil.example', '/\\\\evil.example', '/./\\evil.example', '/a/..\\/evil.example',
      '/\t/evil.example', '/\n/evil.example', '/\r\n/evil.example', '/.\t//evil.example', '\t//evil.example', ' //evil.example',
      '//evil.example', 'https://evil.example/admin',
    ];
    // What stays percent-encoded in the path is a path on this origin, whatever it spells.
    const encodedInPath = ['/%2F%2Fevil.example', '/%5Cevil.example', '/%2F%5Cevil.example', '/%252e%252e//x'];
    const good: Array<[string, string]> = [['/admin/webhooks?x=1', '/admin/webhooks?x=1'], ['/admin/./webhooks?x=1', '/admin/webhooks?x=1'], ['/admin/oauth/../webhooks', '/admin/webhooks'], ['/admin', '/admin']];

    /** The Location of a signed-in GET /login?return_to=… (query as given) and of a hand-built POST /login with `value`. */
    async function locations(value: string, query = `return_to=${encodeURIComponent(value)}`) {
      const { org, person, browser } = await personWithPassword();
      await browser.signIn(person.email, PASSWORD);
      const viaGet = await browser.get(`/login?${query}`);
      assert.equal(viaGet.status, 303, value);
      const signingIn = createPageClient(t.app, org.address);
      await signingIn.get('/login');
      const viaPost = await signingIn.post('/login', { email: person.email, password: PASSWORD, return_to: value });
      assert.equal(viaPost.status, 303, value);
      return [viaGet.location, viaPost.location];
    }

    test('a spelling that normalises to another host falls back to /admin, on GET and POST', async () => {
      for (const value of elsewhere) assert.deepEqual(await locations(value), ['/admin', '/admin'], JSON.stringify(value));
    });

    test('percent-encoded in the query (%2F%2F, %5C, %2e%2e) is decoded once and refused the same way', async () => {
      for (const query of ['return_to=%2F%2Fevil.example', 'return_to=%2F%5Cevil.example', 'return_to=/%2e%2e//evil.example', 'return_to=/.//evil.example', 'return_to=/a/..//evil.example', 'return_to=/%09/evil.example', 'return_to=/%0A/evil.example']) {
        const [viaGet] = await locations('', query);
        assert.equal(viaGet, '/admin', query);
      }
    });

    test('what stays percent-encoded in the path remains a path on this origin', async () => {
      for (const value of encodedInPath) {
        for (const location of await locations(value)) {
          assert.ok(location?.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\'), `${value} → ${location}`);
          assert.equal(new URL(location!, 'http://org.example').origin, 'http://org.example', `${value} → ${location}`);
        }
      }
    });

    test('good paths lead back, in their normal form, with their query', async () => {
      for (const [value, expected] of good) assert.deepEqual(await locations(value), [expected, expected], value);
    });
  });

  test('a wrong password and an unknown e-mail get the same 401 page and message', async () => {
    const { org, person } = await personWithPassword();
    const wrong = await createPageClient(t.app, org.address, { remoteAddress: '10.1.0.1' }).signIn(person.email, 'not the password');
    const unknown = await createPageClient(t.app, org.address, { remoteAddress: '10.1.0.2' }).signIn('nobody@example.test', 'not the password');
    for (const res of [wrong, unknown]) {
      assert.equal(res.status, 401);
      assert.match(res.html, /Email or password is wrong/);
      assert.equal(res.setCookies.some((c) => c.startsWith('atrium_session=')), false);
    }
    assert.match(wrong.html, new RegExp(`value="${person.email}"`), 'the e-mail is kept; the password never is');
    const nul = await createPageClient(t.app, org.address, { remoteAddress: '10.1.0.3' }).signIn(`${person.email}\u0000`, PASSWORD);
    assert.equal(nul.status, 401, 'NUL in an address is a wrong pair on every database, never a 500');
  });

  test('no oracle in time: an unknown e-mail costs what a wrong password costs (one scrypt each)', async () => {
    const { org, person } = await personWithPassword();
    const timeOf = async (email: string, i: number) => {
      const client = createPageClient(t.app, org.address, { remoteAddress: `10.2.${i}.1` });
      await client.get('/login');
      const started = performance.now();
      await client.post('/login', { email, password: 'wrong' });
      return performance.now() - started;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await timeOf(person.email, i));
      unknown.push(await timeOf(`ghost-${i}@example.test`, i + 10));
    }
    const ratio = median(unknown) / median(known);
    assert.ok(ratio > 0.5 && ratio < 2, `unknown/known time ratio ${ratio.toFixed(2)}`);
  });

  test('more than 10 failures in 15 minutes for one e-mail: 429 with Retry-After, right pair or not; the window passes', async () => {
    const { person, org } = await personWithPassword();
    for (let i = 0; i < 11; i++) {
      // A new client address each time: this is the e-mail's count, not the address's.
      const res = await createPageClient(t.app, org.address, { remoteAddress: `10.3.0.${i + 1}` }).signIn(person.email, `wrong ${i}`);
      assert.equal(res.status, 401, `attempt ${i + 1}`);
    }
    const locked = await createPageClient(t.app, org.address, { remoteAddress: '10.3.1.1' }).signIn(person.email, PASSWORD);
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers['retry-after']) > 0 && Number(locked.headers['retry-after']) <= 900);
    assert.match(locked.html, /Too many failed sign-ins/);
    clock.advance(15 * 60_000 + 1000);
    const after = await createPageClient(t.app, org.address, { remoteAddress: '10.3.1.1' }).signIn(person.email, PASSWORD);
    assert.equal(after.status, 303);
  });

  test('more than 10 failures from one client address lock that address, whatever e-mail it tries', async () => {
    const { person, org } = await personWithPassword();
    for (let i = 0; i < 11; i++) await createPageClient(t.app, org.address, { remoteAddress: '10.4.0.1' }).signIn(`guess-${i}@example.test`, 'x');
    const locked = await createPageClient(t.app, org.address, { remoteAddress: '10.4.0.1' }).signIn(person.email, PASSWORD);
    assert.equal(locked.status, 429);
    const elsewhere = await createPageClient(t.app, org.address, { remoteAddress: '10.4.0.2' }).signIn(person.email, PASSWORD);
    assert.equal(elsewhere.status, 303, 'another address is not locked');
    clock.advance(15 * 60_000 + 1000);
  });

  test('sign-out ends the session at once; the old cookie signs in nothing', async () => {
    const { org, person, browser } = await personWithPassword();
    await browser.signIn(person.email, PASSWORD);
    const token = browser.cookies.get('atrium_session')!;
    await browser.get('/admin');
    const out = await browser.post('/logout');
    assert.equal(out.status, 303);
    assert.equal(out.location, '/login');
    assert.equal(browser.cookies.has('atrium_session'), false, 'the cookie is cleared');
    const replayed = createPageClient(t.app, org.address);
    replayed.cookies.set('atrium_session', token);
    assert.equal((await replayed.get('/admin')).status, 303, 'a copy of the old cookie is worth nothing');
    assert.equal(await t.database.db.selectFrom('sessions').select('id').where('person_id', '=', person.id).executeTakeFirst(), undefined);
  });

  test('a password change and removing the person end every session at once', async () => {
    const { org, person } = await personWithPassword();
    const laptop = createPageClient(t.app, org.address);
    const phone = createPageClient(t.app, org.address);
    await laptop.signIn(person.email, PASSWORD);
    await phone.signIn(person.email, PASSWORD);
    assert.equal((await laptop.get('/admin')).status, 200);
    await t.app.services.people.setPassword(org.id, person.id, 'a brand new password');
    for (const device of [laptop, phone]) {
      const res = await device.get('/admin');
      assert.equal(res.status, 303);
      assert.equal(res.location, '/login?return_to=%2Fadmin');
    }
    await laptop.signIn(person.email, 'a brand new password');
    assert.equal((await laptop.get('/admin')).status, 200);
    await t.app.services.people.remove(org.id, person.id);
    assert.equal((await laptop.get('/admin')).status, 303);
    assert.equal((await laptop.signIn(person.email, 'a brand new password')).status, 401, 'a removed person signs in no more');
  });

  test('idle for 2 hours, or 12 hours after signing in however active: signed out', async () => {
    const { person, browser } = await personWithPassword();
    await browser.signIn(person.email, PASSWORD);
    clock.advance(2 * 3600_000 - 60_000);
    assert.equal((await browser.get('/admin')).status, 200, 'just inside the idle timeout');
    clock.advance(2 * 3600_000 - 60_000);
    assert.equal((await browser.get('/admin')).status, 200, 'activity moved the idle timeout');
    clock.advance(2 * 3600_000);
    assert.equal((await browser.get('/admin')).status, 303, 'idle for 2 hours');

    await browser.signIn(person.email, PASSWORD);
    for (let h = 0; h < 11; h++) {
      clock.advance(3600_000);
      assert.equal((await browser.get('/admin')).status, 200, `active, hour ${h + 1}`);
    }
    clock.advance(3600_000);
    assert.equal((await browser.get('/admin')).status, 303, 'the absolute timeout of 12 hours');
  });

  test("a session of one organisation means nothing at another's address", async () => {
    const { person, browser } = await personWithPassword();
    await browser.signIn(person.email, PASSWORD);
    const other = await t.make.org();
    const elsewhere = createPageClient(t.app, other.address);
    elsewhere.cookies.set('atrium_session', browser.cookies.get('atrium_session')!);
    const res = await elsewhere.get('/admin');
    assert.equal(res.status, 303);
    assert.match(res.location!, /^\/login/);
  });

  test('signing in without a CSRF token, or with a wrong one: 403 page, no session', async () => {
    const { person, org } = await personWithPassword();
    for (const csrf of [null, 'forged-token']) {
      const browser = createPageClient(t.app, org.address);
      await browser.get('/login');
      const res = await browser.post('/login', { email: person.email, password: PASSWORD }, { csrf });
      assert.equal(res.status, 403);
      assert.match(res.html, /security token/);
      assert.equal(browser.cookies.has('atrium_session'), false);
    }
  });

  test('an unknown address is a 404 page', async () => {
    const res = await createPageClient(t.app, 'nowhere.test').get('/login');
    assert.equal(res.status, 404);
    assert.match(res.html, /No organisation is served at nowhere\.test/);
  });
});

describe('the lockout across server processes', () => {
  test('two apps on one database share the counts', async () => {
    const t = await startTestApp();
    const second = await buildApp({ config: t.config, database: t.database, clock: t.clock, logger: false });
    try {
      const org = await t.make.org();
      const person = await t.make.person(org, { password: PASSWORD });
      for (let i = 0; i < 11; i++) {
        const app = i % 2 === 0 ? t.app : second;
        assert.equal((await createPageClient(app, org.address, { remoteAddress: `10.5.0.${i + 1}` }).signIn(person.email, 'wrong')).status, 401);
      }
      for (const app of [t.app, second]) assert.equal((await createPageClient(app, org.address, { remoteAddress: '10.5.1.1' }).signIn(person.email, PASSWORD)).status, 429);
    } finally {
      await second.close();
      await t.close();
    }
  });

  test('with REDIS_URL unreachable, signing in is refused with a 502 page saying why; API requests go on', async () => {
    // Nothing listens on port 1: every Redis command fails.
    const t = await startTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const c = await t.make.caller();
      const person = await t.make.person(c.org, { password: PASSWORD });
      const response = await createPageClient(t.app, c.org.address).signIn(person.email, PASSWORD);
      assert.equal(response.status, 502);
      assert.equal(response.headers['retry-after'], '5');
      assert.match(response.html, /shared_state\.unavailable/);
      assert.equal(response.setCookies.some((c) => c.startsWith('atrium_session=')), false, 'no session was made');
      const sessions = await t.database.db.selectFrom('sessions').select('id').where('person_id', '=', person.id).execute();
      assert.equal(sessions.length, 0);
      // A request with a credential does not need the lockout: the rate limit is skipped while Redis is away.
      assert.equal((await t.api.request({ path: '/me', host: c.org.address, key: c.key })).status, 200);
    } finally {
      await t.close();
    }
  });

  test('with REDIS_URL the counts live in Redis and hold across processes', async (ctx) => {
    const url = testRedisUrl;
    if (!(await redisAnswers())) return ctx.skip(`no Redis answers at ${url}`);
    const t = await startTestApp({ env: { REDIS_URL: url } });
    const second = await buildApp({ config: loadConfig({ ...t.processEnv, REDIS_URL: url, LOG_LEVEL: 'silent' }), database: t.database, clock: t.clock, logger: false });
    try {
      const org = await t.make.org();
      const person = await t.make.person(org, { password: PASSWORD });
      for (let i = 0; i < 11; i++) await createPageClient(i % 2 ? second : t.app, org.address, { remoteAddress: `10.6.0.${i + 1}` }).signIn(person.email, 'wrong');
      assert.equal((await createPageClient(second, org.address, { remoteAddress: '10.6.1.1' }).signIn(person.email, PASSWORD)).status, 429);
      const rows = await t.database.db.selectFrom('login_failures').select('id').where('organisation_id', '=', org.id).execute();
      assert.equal(rows.length, 0, 'nothing was written to the database');
    } finally {
      await second.close();
      await t.close();
    }
  });
});
