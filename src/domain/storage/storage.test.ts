import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

describe('storage targets and files', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST', p: string, body?: unknown, headers?: Record<string, string>) => t.api.request({ host: c.org.address, key: c.key, method, path: p, body, headers });
  const upload = async (content: string) => (await call('POST', '/files', { filename: 'notes.txt', content_type: 'text/plain', content_base64: Buffer.from(content).toString('base64') })).body;

  test('POST /storage_targets/actions/restore_deployment (operation 5): existing files stay readable from their recorded targets', async () => {
    const onDeployment = await upload('first, on the deployment storage');
    assert.equal(onDeployment.storage_target_id, 'deployment');
    assert.ok(fs.existsSync(path.join(t.config.storageDir, c.org.id, onDeployment.id)));

    const target = await call('POST', '/storage_targets', { name: 'Archive', directory: 'archive/2027' });
    assert.equal(target.status, 201);
    assert.equal((await call('POST', `/storage_targets/${target.body.id}/actions/make_default`)).status, 200);
    const onTarget = await upload('second, on the archive target');
    assert.equal(onTarget.storage_target_id, target.body.id);
    assert.ok(fs.existsSync(path.join(t.config.storageTargetsRoot, 'archive/2027', c.org.id, onTarget.id)));

    const restored = await call('POST', '/storage_targets/actions/restore_deployment', {});
    assert.equal(restored.status, 200);
    assert.deepEqual(restored.body, { ok: true });
    const listed = await call('GET', '/storage_targets');
    assert.deepEqual(listed.body.data.map((x: { id: string; is_default: boolean }) => [x.id, x.is_default]), [['deployment', true], [target.body.id, false]]);
    const third = await upload('third, on the deployment storage again');
    assert.equal(third.storage_target_id, 'deployment');

    for (const [file, content] of [[onDeployment, 'first, on the deployment storage'], [onTarget, 'second, on the archive target'], [third, 'third, on the deployment storage again']] as const) {
      const res = await call('GET', `/files/${file.id}/content`);
      assert.equal(res.status, 200);
      assert.equal(res.raw, content);
      assert.equal(res.headers['content-type'], 'text/plain');
      assert.equal((await call('GET', `/files/${file.id}`)).body.storage_target_id, file.storage_target_id);
    }
  });

  test('operation 5: 409 when the deployment storage is already the default; 422 for a body that is not an empty object; nothing changes', async () => {
    const o = await t.make.caller();
    const res = await t.api.request({ host: o.org.address, key: o.key, method: 'POST', path: '/storage_targets/actions/restore_deployment', body: {} });
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'storage.already_default');
    const target = await t.make.storageTarget(o.org);
    await t.app.services.storage.makeDefault(t.database.db, o.org.id, target.id);
    for (const body of [{ target: 'deployment' }, [], 'x']) {
      const bad = await t.api.request({ host: o.org.address, key: o.key, method: 'POST', path: '/storage_targets/actions/restore_deployment', body });
      assert.equal(bad.status, 422, JSON.stringify(body));
    }
    const missing = await t.api.request({ host: o.org.address, key: o.key, method: 'POST', path: '/storage_targets/actions/restore_deployment' });
    assert.equal(missing.status, 422);
    const listed = await t.api.request({ host: o.org.address, key: o.key, path: '/storage_targets' });
    assert.equal(listed.body.data.find((x: { id: string }) => x.id === target.id).is_default, true);
  });

  test('a target directory must stay below the allowed root', async () => {
    for (const directory of ['../escape', '/etc', 'a/../../b', 'ok/./x', 'sp ace']) {
      const res = await call('POST', '/storage_targets', { name: 'Bad', directory });
      assert.equal(res.status, 422, directory);
      assert.equal(res.body.errors[0].path, '/directory');
    }
    await call('POST', '/storage_targets', { name: 'One', directory: 'shared' });
    const taken = await call('POST', '/storage_targets', { name: 'Two', directory: 'shared' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.code, 'storage.directory_taken');
  });

  test('make_default: 404 for another organisation’s target, 409 when it already is', async () => {
    const other = await t.make.caller();
    const theirs = await t.make.storageTarget(other.org);
    assert.equal((await call('POST', `/storage_targets/${theirs.id}/actions/make_default`)).status, 404);
    const mine = await t.make.storageTarget(c.org);
    assert.equal((await call('POST', `/storage_targets/${mine.id}/actions/make_default`)).status, 200);
    const again = await call('POST', `/storage_targets/${mine.id}/actions/make_default`);
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'storage.already_default');
  });

  test('files: base64 is checked, the record has size and hash, another organisation cannot read it', async () => {
    const bad = await call('POST', '/files', { filename: 'x.bin', content_base64: 'not base64!' });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.errors[0].path, '/content_base64');
    const f = await upload('abc');
    assert.equal(f.size, 3);
    assert.equal(f.sha256, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const other = await t.make.caller();
    assert.equal((await t.api.request({ host: other.org.address, key: other.key, path: `/files/${f.id}/content` })).status, 404);
  });
});
