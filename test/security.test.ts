// The reusable security suite: for every registered operation, who may not call it. It iterates over the
// operation registry, so an operation gets these checks by being registered — no new test code.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scopes as allScopes } from '../src/access/capabilities.ts';
import { generateApiKey } from '../src/auth/api-key-format.ts';
import { operations } from '../src/all-operations.ts';
import type { Operation } from '../src/operations/operation.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller, CredentialKind } from './support/factories.ts';
import { exampleRequest } from './support/examples.ts';


/**
 * Who may not call `ops`, with credentials of `kind`. API keys go through every operation; OAuth access tokens
 * through one operation of each family (tag): the same auth hook checks both, so what differs is only how the
 * credential is found, which one operation per family proves.
 */
function securitySuite(title: string, kind: CredentialKind, ops: Operation[]) {
describe(title, () => {
  let t: TestContext;
  let owner: Caller;
  let stranger: Caller;
  before(async () => {
    t = await startTestApp();
    owner = await t.make.caller({ credential: kind });
    stranger = await t.make.caller({ credential: kind });
  });
  after(() => t.close());

  /** A request for `op` in the caller's organisation, on a real resource of `resourceOrg` when the path names one. */
  async function requestFor(op: Operation, caller: Caller | undefined, opts: { resourceOrg?: Caller; key?: string } = {}) {
    const org = (caller ?? owner).org;
    const example = await exampleRequest(t.make, op, org, (opts.resourceOrg ?? caller ?? owner).org);
    return t.api.request({
      method: op.method,
      path: example.path,
      host: org.address,
      key: opts.key ?? caller?.key,
      ...(op.body ? { body: example.body } : {}),
      ...(op.idempotency === 'required' ? { headers: { 'idempotency-key': `sec-${Math.random()}` } } : {}),
    });
  }

  for (const op of ops) {
    describe(`${op.method} ${op.path}`, () => {
      test('no credential → 401 with a Bearer challenge', async () => {
        const res = await requestFor(op, undefined);
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 'auth.missing_credential');
        assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      });

      test('a malformed or unknown credential → 401', async () => {
        for (const key of ['atr_live_short', 'atr_test_' + 'A'.repeat(49), 'sk_live_123', generateApiKey('live'), 'atr_at_unknownTokenValue0123456789abcdefghijk']) {
          const res = await requestFor(op, owner, { key });
          assert.equal(res.status, 401, key);
          assert.equal(res.body.code, 'auth.invalid_credential');
        }
      });

      test("another organisation's credential → 401, with no hint that it exists elsewhere", async () => {
        const res = await requestFor(op, owner, { key: stranger.key });
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 'auth.invalid_credential');
      });

      if (op.scope !== null) {
        test(`a credential without ${op.scope} → 403`, async () => {
          const c = await t.make.caller({ org: owner.org, scopes: allScopes.filter((s) => s !== op.scope), credential: kind });
          const res = await requestFor(op, c);
          assert.equal(res.status, 403);
          assert.equal(res.body.code, 'auth.insufficient_scope');
          assert.match(res.body.detail, new RegExp(op.scope!));
        });
      }

      if (op.capability !== null) {
        test(`a person without ${op.capability} → 403`, async () => {
          const c = await t.make.caller({ org: owner.org, roles: [], platformAdmin: false, credential: kind });
          const res = await requestFor(op, c);
          assert.equal(res.status, 403);
          assert.equal(res.body.code, 'auth.missing_capability');
          assert.match(res.body.detail, new RegExp(op.capability!));
        });
      }

      if (op.path.includes('{id}') || (op.path.includes('{external_id}') && op.method !== 'PUT')) {
        test("a resource of another organisation → 404", async () => {
          const res = await requestFor(op, owner, { resourceOrg: stranger });
          assert.equal(res.status, 404);
          assert.equal(res.body.code, op.notFoundCode);
        });
      }

      test(op.writes ? 'a plan without the API entitlement → 412' : 'a plan without the API entitlement can still read', async () => {
        const c = await t.make.caller({ plan: 'no-api', credential: kind });
        const res = await requestFor(op, c);
        if (op.writes) {
          assert.equal(res.status, 412);
          assert.equal(res.body.code, 'commerce.plan_entitlement');
          assert.equal(res.body.category, 'precondition');
        } else {
          assert.ok(res.status < 300, `read answered ${res.status}`);
        }
      });
    });
  }
});
}

securitySuite('security suite (every operation, API keys)', 'api_key', operations);

const oneOperationPerFamily = [...new Map(operations.map((op) => [op.tag, op])).values()];
securitySuite('security suite (one operation per family, OAuth access tokens)', 'oauth_token', oneOperationPerFamily);

describe('credential lifecycle', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a revoked key → 401 auth.revoked_credential', async () => {
    const c = await t.make.caller();
    assert.equal((await t.api.request({ host: c.org.address, key: c.key, path: '/me' })).status, 200);
    assert.equal(await t.app.services.apiKeys.revoke(c.org.id, c.keyId), true);
    const res = await t.api.request({ host: c.org.address, key: c.key, path: '/me' });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'auth.revoked_credential');
    assert.match(String(res.headers['www-authenticate']), /invalid_token/);
  });

  test('an access token whose client is deleted → 401 at once; an expired one → 401 auth.expired_credential', async () => {
    const c = await t.make.caller({ credential: 'oauth_token' });
    assert.equal((await t.api.request({ host: c.org.address, key: c.key, path: '/me' })).status, 200);
    await t.app.services.oauthClients.remove(c.org.id, c.keyId);
    const res = await t.api.request({ host: c.org.address, key: c.key, path: '/me' });
    assert.equal(res.status, 401);
    assert.match(String(res.headers['www-authenticate']), /invalid_token/);

    const other = await t.make.caller({ org: c.org, credential: 'oauth_token' });
    const { client_id } = await t.database.db.selectFrom('oauth_clients').select('client_id').where('id', '=', other.keyId).executeTakeFirstOrThrow();
    await t.database.db.updateTable('oauth_records').set({ expires_at: '2020-01-01T00:00:00.000Z' }).where('client_id', '=', client_id).execute();
    const expired = await t.api.request({ host: c.org.address, key: other.key, path: '/me' });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.code, 'auth.expired_credential');
  });

  test('an expired key → 401 auth.expired_credential', async () => {
    const o = await t.make.org();
    const p = await t.make.person(o);
    const k = await t.make.apiKey(o, p.id, { expiresAt: '2020-01-01T00:00:00.000Z' });
    const res = await t.api.request({ host: o.address, key: k.key, path: '/me' });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'auth.expired_credential');
  });

  test('a scheme other than Bearer → 401', async () => {
    const c = await t.make.caller();
    const res = await t.api.request({ host: c.org.address, path: '/me', headers: { authorization: `Basic ${c.key}` } });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'auth.invalid_credential');
  });

  test('an unknown address → 404 tenancy.unknown_organisation', async () => {
    const c = await t.make.caller();
    const res = await t.api.request({ host: 'nobody.test', key: c.key, path: '/me' });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'tenancy.unknown_organisation');
  });
});
