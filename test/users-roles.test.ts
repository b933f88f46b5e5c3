// Users, roles and the organisation's settings over REST (docs/api-guide.md#users-roles-and-the-organisation): happy paths, each refusal the
// operations can answer with, the guard rails (yourself, the last administrator, roles you may not give), a
// test per privileged scope, and a suspended or removed person's credentials refused on the next request.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scopes as allScopes, organisationCapabilities } from '../src/access/capabilities.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

describe('users, roles and the organisation over REST', () => {
  let t: TestContext;
  let admin: Caller;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const call = (c: Caller, method: string, path: string, body?: unknown) => t.api.request({ method: method as never, path, host: c.org.address, key: c.key, body });
  const withoutScope = (scope: string) => allScopes.filter((s) => s !== scope);
  const countUsers = async (c: Caller) => Number((await t.database.db.selectFrom('people').select((eb) => eb.fn.countAll<number>().as('n')).where('organisation_id', '=', c.org.id).executeTakeFirstOrThrow()).n);
  const eventsOf = async (c: Caller, type: string) => (await t.database.db.selectFrom('outbox_events').select('data').where('organisation_id', '=', c.org.id).where('type', '=', type).execute()).map((e) => JSON.parse(e.data));

  before(async () => {
    admin = await t.make.caller({ platformAdmin: false });
  });

  describe('users', () => {
    test('create, read, list with filters, PATCH, and the events each writes', async () => {
      const created = await call(admin, 'POST', '/users', { email: 'Grace.Hopper@Example.edu', name: 'Grace Hopper', roles: ['teacher'], external_id: 'sis-1' });
      assert.equal(created.status, 201);
      assert.equal(created.body.email, 'grace.hopper@example.edu', 'stored in lower case');
      assert.deepEqual(created.body.roles, ['teacher']);
      assert.equal(created.body.status, 'active');
      assert.equal(created.body.platform_admin, false);
      assert.equal(created.body.last_sign_in_at, null);
      assert.equal((await eventsOf(admin, 'user.created')).filter((e) => e.id === created.body.id).length, 1);

      assert.equal((await call(admin, 'GET', `/users/${created.body.id}`)).body.name, 'Grace Hopper');
      assert.equal((await call(admin, 'GET', '/users/ext:sis-1')).body.id, created.body.id);
      const byEmail = await call(admin, 'GET', '/users?email=GRACE.HOPPER@example.edu');
      assert.deepEqual(byEmail.body.data.map((u: { id: string }) => u.id), [created.body.id], 'the e-mail filter ignores letter case');
      const teachers = await call(admin, 'GET', '/users?role=teacher');
      assert.ok(teachers.body.data.every((u: { roles: string[] }) => u.roles.includes('teacher')));
      assert.ok(teachers.body.data.some((u: { id: string }) => u.id === created.body.id));
      assert.equal((await call(admin, 'GET', '/users?role=admin')).body.data.some((u: { id: string }) => u.id === created.body.id), false);

      const patched = await call(admin, 'PATCH', `/users/${created.body.id}`, { name: 'Grace B. Hopper', status: 'suspended' });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.status, 'suspended');
      assert.deepEqual((await call(admin, 'GET', '/users?status=suspended')).body.data.map((u: { id: string }) => u.id), [created.body.id]);
      assert.equal((await eventsOf(admin, 'user.updated')).filter((e) => e.id === created.body.id).length, 1);
      const unchanged = await call(admin, 'PATCH', `/users/${created.body.id}`, { name: 'Grace B. Hopper' });
      assert.equal(unchanged.body.updated_at, patched.body.updated_at, 'a PATCH that changes nothing is no update');
    });

    test('an e-mail address taken in another letter case is a 409 naming the field, and nothing is created', async () => {
      await call(admin, 'POST', '/users', { email: 'ada@example.edu', name: 'Ada' });
      const before = await countUsers(admin);
      const res = await call(admin, 'POST', '/users', { email: 'ADA@Example.EDU', name: 'Ada again' });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'user.email_taken');
      assert.equal(res.body.errors[0].path, '/email');
      assert.equal(await countUsers(admin), before);
      const other = await call(admin, 'POST', '/users', { email: 'other@example.edu', name: 'Other' });
      const renamed = await call(admin, 'PATCH', `/users/${other.body.id}`, { email: 'Ada@example.edu' });
      assert.equal(renamed.status, 409);
      assert.equal(renamed.body.code, 'user.email_taken');
      assert.equal((await call(admin, 'GET', `/users/${other.body.id}`)).body.email, 'other@example.edu');
    });

    test('bad input names the field: an unknown role, a malformed address; 404 for an unknown id', async () => {
      const before = await countUsers(admin);
      const unknownRole = await call(admin, 'POST', '/users', { email: 'x@example.edu', name: 'X', roles: ['teacher', 'wizard'] });
      assert.equal(unknownRole.status, 422);
      assert.equal(unknownRole.body.errors[0].path, '/roles/1');
      const badEmail = await call(admin, 'POST', '/users', { email: 'not an address', name: 'X' });
      assert.equal(badEmail.status, 422);
      assert.equal(badEmail.body.errors[0].path, '/email');
      assert.equal(await countUsers(admin), before);
      assert.equal((await call(admin, 'GET', '/users/0193a5b2-1d2e-7f30-8a41-52b6c7d8e9f0')).status, 404);
      assert.equal((await call(admin, 'PATCH', '/users/0193a5b2-1d2e-7f30-8a41-52b6c7d8e9f0', { name: 'Y' })).body.code, 'user.not_found');
    });

    test('delete is soft: readable with deleted_at, out of lists, a tombstone in /users/deletions; a second delete is 409 user.deleted', async () => {
      const u = await call(admin, 'POST', '/users', { email: 'leaver@example.edu', name: 'Leaver', external_id: 'sis-leaver' });
      assert.equal((await call(admin, 'DELETE', `/users/${u.body.id}`)).status, 204);
      assert.ok((await call(admin, 'GET', `/users/${u.body.id}`)).body.deleted_at);
      assert.equal((await call(admin, 'GET', '/users?limit=200')).body.data.some((x: { id: string }) => x.id === u.body.id), false);
      assert.ok((await call(admin, 'GET', '/users?limit=200&include_deleted=true')).body.data.some((x: { id: string }) => x.id === u.body.id));
      const tombstones = await call(admin, 'GET', '/users/deletions');
      assert.ok(tombstones.body.data.some((d: { id: string; external_id: string }) => d.id === u.body.id && d.external_id === 'sis-leaver'));
      const again = await call(admin, 'DELETE', `/users/${u.body.id}`);
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'user.deleted');
      assert.equal((await call(admin, 'PATCH', `/users/${u.body.id}`, { name: 'Back' })).body.code, 'user.deleted');
    });

    test('upsert by external_id: 201 created, then 200 updated', async () => {
      const first = await call(admin, 'PUT', '/users/ext:sis-42', { email: 'sis42@example.edu', name: 'Forty Two' });
      assert.equal(first.status, 201);
      const second = await call(admin, 'PUT', '/users/ext:sis-42', { email: 'sis42@example.edu', name: 'Forty-Two' });
      assert.equal(second.status, 200);
      assert.equal(second.body.id, first.body.id);
      assert.equal(second.body.name, 'Forty-Two');
    });

    test('bulk: creates, updates and deletes in one request, each with its own status', async () => {
      const target = await call(admin, 'POST', '/users', { email: 'bulk-target@example.edu', name: 'Target', external_id: 'bulk-target' });
      const res = await t.api.request({
        method: 'POST',
        path: '/users/bulk',
        host: admin.org.address,
        key: admin.key,
        headers: { 'idempotency-key': 'bulk-users-1' },
        body: {
          operations: [
            { ref: 'a', op: 'create', data: { email: 'bulk-a@example.edu', name: 'A' } },
            { ref: 'dup', op: 'create', data: { email: 'BULK-A@example.edu', name: 'A twin' } },
            { ref: 'u', op: 'update', external_id: 'bulk-target', data: { name: 'Target renamed' } },
            { ref: 'd', op: 'delete', id: target.body.id },
          ],
        },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.results.map((r: { status: number }) => r.status), [201, 409, 200, 204]);
      assert.equal(res.body.results[1].error.code, 'user.email_taken');
    });

    test('bulk upsert: a resend of people already as asked answers 200 unchanged, writes nothing and emits nothing; a change emits user.updated', async () => {
      const bulk = (key: string, operations: unknown[]) =>
        t.api.request({ method: 'POST', path: '/users/bulk', host: admin.org.address, key: admin.key, headers: { 'idempotency-key': key }, body: { operations } });
      const people = [
        { ref: 'p1', op: 'upsert', external_id: 'resend-1', data: { email: 'resend-1@example.edu', name: 'Resend One', roles: ['teacher'] } },
        { ref: 'p2', op: 'upsert', external_id: 'resend-2', data: { email: 'Resend-2@Example.edu', name: 'Resend Two' } },
      ];
      const first = await bulk('bulk-users-resend-1', people);
      assert.deepEqual(first.body.results.map((r: { status: number }) => r.status), [201, 201]);
      const rows = () => t.database.db.selectFrom('people').select(['id', 'updated_at']).where('organisation_id', '=', admin.org.id).where('external_id', 'in', ['resend-1', 'resend-2']).orderBy('external_id').execute();
      const countEvents = async () => (await eventsOf(admin, 'user.updated')).length + (await eventsOf(admin, 'user.created')).length;
      const rowsBefore = await rows();
      const eventsBefore = await countEvents();

      const resend = await bulk('bulk-users-resend-2', people);
      assert.equal(resend.status, 200);
      for (const [i, result] of resend.body.results.entries()) {
        assert.equal(result.status, 200);
        assert.equal(result.unchanged, true);
        assert.equal(result.data.id, first.body.results[i].data.id);
        assert.equal(result.data.updated_at, first.body.results[i].data.updated_at);
      }
      assert.deepEqual(await rows(), rowsBefore, 'no updated_at moved');
      assert.equal(await countEvents(), eventsBefore, 'no event');

      const changed = await bulk('bulk-users-resend-3', [{ ...people[0], data: { ...people[0].data, name: 'Resend One renamed' } }, people[1]]);
      assert.equal(changed.body.results[0].status, 200);
      assert.equal(changed.body.results[0].unchanged, undefined);
      assert.equal(changed.body.results[0].data.name, 'Resend One renamed');
      assert.equal(changed.body.results[1].unchanged, true);
      const updated = (await eventsOf(admin, 'user.updated')).filter((e) => e.id === first.body.results[0].data.id);
      assert.equal(updated.length, 1, 'the changed person alone emits user.updated');
      assert.equal(await countEvents(), eventsBefore + 1);
    });

    test('nobody removes or suspends themselves (409 user.self)', async () => {
      const suspend = await call(admin, 'PATCH', `/users/${admin.personId}`, { status: 'suspended' });
      assert.equal(suspend.status, 409);
      assert.equal(suspend.body.code, 'user.self');
      const remove = await call(admin, 'DELETE', `/users/${admin.personId}`);
      assert.equal(remove.status, 409);
      assert.equal(remove.body.code, 'user.self');
      assert.equal((await call(admin, 'GET', '/me')).status, 200);
    });

    test('the last active administrator cannot be removed, suspended or lose the role (409 user.last_admin)', async () => {
      const org = await t.make.org();
      const onlyAdmin = await t.make.person(org, { roles: ['admin'] });
      const manager = await t.make.caller({ org, roles: ['manager'], platformAdmin: false });
      for (const [method, body] of [['DELETE', undefined], ['PATCH', { status: 'suspended' }], ['PATCH', { roles: ['manager'] }]] as const) {
        const res = await call(manager, method, `/users/${onlyAdmin.id}`, body);
        assert.equal(res.status, 409, `${method} ${JSON.stringify(body)}`);
        assert.equal(res.body.code, 'user.last_admin');
      }
      assert.equal((await call(manager, 'GET', `/users/${onlyAdmin.id}`)).body.status, 'active');
    });

    test('roles: setting them needs roles:write and role/assign, and nobody gives a role allowing more than they may do', async () => {
      const noRolesWrite = await t.make.caller({ org: admin.org, scopes: withoutScope('roles:write') });
      const res = await call(noRolesWrite, 'POST', '/users', { email: 'r1@example.edu', name: 'R1', roles: ['teacher'] });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'auth.insufficient_scope');
      assert.match(res.body.detail, /roles:write/);
      // Without roles nothing needs roles:write.
      assert.equal((await call(noRolesWrite, 'POST', '/users', { email: 'r2@example.edu', name: 'R2' })).status, 201);

      const manager = await t.make.caller({ org: admin.org, roles: ['manager'], platformAdmin: false });
      const grantAdmin = await call(manager, 'POST', '/users', { email: 'r3@example.edu', name: 'R3', roles: ['admin'] });
      assert.equal(grantAdmin.status, 403);
      assert.equal(grantAdmin.body.code, 'auth.missing_capability');
      assert.match(grantAdmin.body.detail, /tenant\/configure/);
      assert.equal((await call(manager, 'POST', '/users', { email: 'r4@example.edu', name: 'R4', roles: ['teacher'] })).status, 201);
    });

    test("a suspended person's key is refused on the next request, and works again once they are active; a removed person's too", async () => {
      const target = await t.make.caller({ org: admin.org, roles: ['teacher'], platformAdmin: false });
      assert.equal((await call(target, 'GET', '/me')).status, 200);
      assert.equal((await call(admin, 'PATCH', `/users/${target.personId}`, { status: 'suspended' })).status, 200);
      const refused = await call(target, 'GET', '/me');
      assert.equal(refused.status, 401);
      assert.equal(refused.body.code, 'auth.revoked_credential');
      assert.equal((await call(admin, 'PATCH', `/users/${target.personId}`, { status: 'active' })).status, 200);
      assert.equal((await call(target, 'GET', '/me')).status, 200);
      assert.equal((await call(admin, 'DELETE', `/users/${target.personId}`)).status, 204);
      assert.equal((await call(target, 'GET', '/me')).status, 401);
    });

    test('users:delete is privileged: a token without it cannot remove anyone', async () => {
      const u = await call(admin, 'POST', '/users', { email: 'keep@example.edu', name: 'Keep' });
      const c = await t.make.caller({ org: admin.org, scopes: withoutScope('users:delete') });
      const res = await call(c, 'DELETE', `/users/${u.body.id}`);
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'auth.insufficient_scope');
      assert.match(res.body.detail, /users:delete/);
      assert.equal((await call(admin, 'GET', `/users/${u.body.id}`)).body.deleted_at, null);
    });
  });

  describe('roles and capabilities', () => {
    test('GET /capabilities describes every capability in one sentence', async () => {
      const res = await call(admin, 'GET', '/capabilities');
      assert.equal(res.status, 200);
      const names = res.body.data.map((c: { name: string }) => c.name);
      for (const c of organisationCapabilities) assert.ok(names.includes(c), c);
      for (const c of res.body.data) assert.match(c.description, /^[A-Z].*\.$/, c.name);
    });

    test('built-in roles are listed and read-only (409 role.built_in)', async () => {
      const list = await call(admin, 'GET', '/roles');
      assert.deepEqual(list.body.data.slice(0, 4).map((r: { key: string }) => r.key), ['admin', 'manager', 'teacher', 'integration']);
      assert.ok(list.body.data[0].capabilities.includes('audit/view'));
      assert.equal(list.body.data[1].capabilities.includes('audit/view'), false, 'only admin holds audit/view by default');
      for (const [method, body] of [['PATCH', { name: 'Boss' }], ['DELETE', undefined]] as const) {
        const res = await call(admin, method, '/roles/admin', body);
        assert.equal(res.status, 409);
        assert.equal(res.body.code, 'role.built_in');
      }
      assert.equal((await call(admin, 'POST', '/roles', { key: 'teacher', name: 'T', capabilities: [] })).body.code, 'role.key_taken');
    });

    test('custom roles: create, an unknown capability is a 422 at its pointer and creates nothing, 404 for an unknown key', async () => {
      const bad = await call(admin, 'POST', '/roles', { key: 'librarian', name: 'Librarian', capabilities: ['course/view', 'library/lend'] });
      assert.equal(bad.status, 422);
      assert.equal(bad.body.errors[0].path, '/capabilities/1');
      assert.equal((await call(admin, 'GET', '/roles/librarian')).status, 404);
      const created = await call(admin, 'POST', '/roles', { key: 'librarian', name: 'Librarian', capabilities: ['course/view'] });
      assert.equal(created.status, 201);
      assert.equal(created.body.built_in, false);
      assert.equal((await call(admin, 'POST', '/roles', { key: 'librarian', name: 'Again', capabilities: [] })).status, 409);
      const patchBad = await call(admin, 'PATCH', '/roles/librarian', { capabilities: ['nope'] });
      assert.equal(patchBad.status, 422);
      assert.equal(patchBad.body.errors[0].path, '/capabilities/0');
      assert.deepEqual((await call(admin, 'GET', '/roles/librarian')).body.capabilities, ['course/view']);
      assert.equal((await eventsOf(admin, 'role.created')).length >= 1, true);
    });

    test("a change to a role applies to its holders on their next request; a held role cannot be deleted (409 role.in_use)", async () => {
      await call(admin, 'POST', '/roles', { key: 'reader', name: 'Reader', capabilities: ['course/view', 'person/view'] });
      const holder = await t.make.caller({ org: admin.org, roles: [], platformAdmin: false });
      assert.equal((await call(holder, 'GET', '/users')).status, 403);
      assert.equal((await call(admin, 'PATCH', `/users/${holder.personId}`, { roles: ['reader'] })).status, 200);
      assert.equal((await call(holder, 'GET', '/users')).status, 200, 'the custom role counts at once');
      assert.equal((await call(admin, 'PATCH', '/roles/reader', { capabilities: ['course/view'] })).status, 200);
      const refused = await call(holder, 'GET', '/users');
      assert.equal(refused.status, 403, 'the narrowed role applies on the next request');
      assert.equal(refused.body.code, 'auth.missing_capability');
      const inUse = await call(admin, 'DELETE', '/roles/reader');
      assert.equal(inUse.status, 409);
      assert.equal(inUse.body.code, 'role.in_use');
      await call(admin, 'PATCH', `/users/${holder.personId}`, { roles: [] });
      assert.equal((await call(admin, 'DELETE', '/roles/reader')).status, 204);
      assert.equal((await call(admin, 'GET', '/roles/reader')).status, 404);
    });

    test('a key with `_` matches only itself (no `like` wildcard): held-by and the role filter', async () => {
      await call(admin, 'POST', '/roles', { key: 'lib_a', name: 'Lib A', capabilities: ['course/view'] });
      await call(admin, 'POST', '/roles', { key: 'libxa', name: 'Lib X A', capabilities: ['course/view'] });
      const holder = await call(admin, 'POST', '/users', { email: 'libxa@example.edu', name: 'Holder', roles: ['libxa'] });
      assert.equal((await call(admin, 'GET', '/users?role=lib_a')).body.data.length, 0);
      assert.deepEqual((await call(admin, 'GET', '/users?role=libxa')).body.data.map((u: { id: string }) => u.id), [holder.body.id]);
      assert.equal((await call(admin, 'DELETE', '/roles/lib_a')).status, 204);
    });

    test("another organisation's custom role is not found", async () => {
      const stranger = await t.make.caller();
      await call(stranger, 'POST', '/roles', { key: 'secret_role', name: 'Secret', capabilities: ['course/view'] });
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Mine' }], ['DELETE', undefined]] as const) {
        const res = await call(admin, method, '/roles/secret_role', body);
        assert.equal(res.status, 404, method);
        assert.equal(res.body.code, 'role.not_found');
      }
      const grant = await call(admin, 'POST', '/users', { email: 'steal@example.edu', name: 'Steal', roles: ['secret_role'] });
      assert.equal(grant.status, 422);
      assert.equal(grant.body.errors[0].path, '/roles/0');
    });

    test('roles:write is privileged: a token without it cannot create or change a role', async () => {
      const c = await t.make.caller({ org: admin.org, scopes: withoutScope('roles:write') });
      const res = await call(c, 'POST', '/roles', { key: 'sneaky', name: 'Sneaky', capabilities: ['course/view'] });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'auth.insufficient_scope');
      assert.match(res.body.detail, /roles:write/);
      assert.equal((await call(admin, 'GET', '/roles/sneaky')).status, 404);
    });
  });

  describe('the organisation', () => {
    test('any valid credential reads it; PATCH changes name, timezone and language and writes organisation.updated', async () => {
      const reader = await t.make.caller({ org: admin.org, scopes: [] });
      const read = await call(reader, 'GET', '/organisation');
      assert.equal(read.status, 200);
      assert.equal(read.body.address, admin.org.address);
      assert.equal(read.body.timezone, 'UTC');
      const res = await call(admin, 'PATCH', '/organisation', { name: 'Northfield', timezone: 'Europe/Paris', default_language: 'fr-FR' });
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.name, res.body.timezone, res.body.default_language], ['Northfield', 'Europe/Paris', 'fr-FR']);
      assert.equal((await eventsOf(admin, 'organisation.updated')).length, 1);
    });

    test('a time zone that is not an IANA name is a 422 at /timezone and changes nothing; read-only fields are refused', async () => {
      const before = (await call(admin, 'GET', '/organisation')).body;
      const res = await call(admin, 'PATCH', '/organisation', { name: 'Changed?', timezone: 'Mars/Olympus_Mons' });
      assert.equal(res.status, 422);
      assert.equal(res.body.errors[0].path, '/timezone');
      assert.deepEqual((await call(admin, 'GET', '/organisation')).body, before);
      const plan = await call(admin, 'PATCH', '/organisation', { plan: 'no-api' });
      assert.equal(plan.status, 422);
      assert.equal(plan.body.errors[0].path, '/plan');
    });

    test('tenants:write is privileged: a token without it cannot change the organisation', async () => {
      const c = await t.make.caller({ org: admin.org, scopes: withoutScope('tenants:write') });
      const res = await call(c, 'PATCH', '/organisation', { name: 'Hijacked' });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'auth.insufficient_scope');
      assert.notEqual((await call(admin, 'GET', '/organisation')).body.name, 'Hijacked');
    });
  });
});
