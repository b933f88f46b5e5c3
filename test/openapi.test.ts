// The OpenAPI document is generated from the registry; it must be a valid OpenAPI 3.1 document and say
// for each operation what the registry declares.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { operations } from '../src/all-operations.ts';
import { documentedStatuses } from '../src/openapi/openapi.ts';
import { startTestApp, type TestContext } from './support/harness.ts';

describe('OpenAPI document', () => {
  let t: TestContext;
  let doc: any;
  before(async () => {
    t = await startTestApp();
    const c = await t.make.caller();
    const res = await t.api.request({ host: c.org.address, path: '/api/v1/openapi.json' });
    assert.equal(res.status, 200);
    doc = res.body;
  });
  after(() => t.close());

  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(doc.openapi, '3.1.0');
  });

  test('has every registered operation with its scope, capability and statuses', () => {
    for (const op of operations) {
      const entry = doc.paths[op.path]?.[op.method.toLowerCase()];
      assert.ok(entry, `${op.method} ${op.path} missing`);
      assert.equal(entry.operationId, op.id);
      assert.equal(entry['x-required-scope'], op.scope);
      assert.equal(entry['x-required-capability'], op.capability);
      const statuses = Object.keys(entry.responses).map(Number).sort((a, b) => a - b);
      const expected = [op.success.status, ...(op.success.alsoStatuses ?? []), ...documentedStatuses(op)].sort((a, b) => a - b);
      assert.deepEqual(statuses, expected, op.id);
      for (const shared of [401, 429, 500]) assert.ok(statuses.includes(shared), `${op.id} lacks ${shared}`);
      if (op.writes) assert.ok(statuses.includes(412), `${op.id} lacks 412`);
    }
  });

  test('every request body has an example that its own schema accepts', () => {
    const ajv = new Ajv2020({ strict: false });
    (addFormatsPlugin as unknown as (a: Ajv2020) => void)(ajv);
    for (const op of operations.filter((o) => o.body)) {
      const media = doc.paths[op.path][op.method.toLowerCase()].requestBody.content['application/json'];
      assert.ok(media.example !== undefined, `${op.id} has no example`);
      assert.equal(ajv.validate(media.schema, media.example), true, `${op.id}: ${ajv.errorsText()}`);
    }
  });

  test("names the server at the organisation's public origin, port included (a generated client calls it as is)", () => {
    assert.match(doc.servers[0].url, /^http:\/\/org-[0-9a-f]+\.test:8080\/api\/v1$/);
  });

  test('the public origin follows PUBLIC_SCHEME and PUBLIC_PORT, never the Host header’s port', async () => {
    const behindProxy = await startTestApp({ env: { PUBLIC_SCHEME: 'https' } });
    try {
      const caller = await behindProxy.make.caller();
      const res = await behindProxy.api.request({ host: `${caller.org.address}:8443`, path: '/api/v1/openapi.json' });
      assert.equal(res.body.servers[0].url, `https://${caller.org.address}/api/v1`);
    } finally {
      await behindProxy.close();
    }
  });

  test('is refused on an unknown address', async () => {
    const res = await t.api.request({ host: 'nowhere.test', path: '/api/v1/openapi.json' });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'tenancy.unknown_organisation');
  });
});
