// The OpenAPI document is generated from the registry; it must be a valid OpenAPI 3.1 document and say
// for each operation what the registry declares.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { operations } from '../src/all-operations.ts';
import { documentedStatuses } from '../src/openapi/openapi.ts';
import { withArticle } from '../src/operations/resource-operations.ts';
import { schemaName } from '../src/operations/schemas.ts';
import { buildTools } from '../src/mcp/tools.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { standalone } from './support/openapi-schemas.ts';

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
      assert.equal(ajv.validate(standalone(doc, media.schema), media.example), true, `${op.id}: ${ajv.errorsText()}`);
    }
  });

  test('every success body is a $ref to its resource’s named schema in components/schemas, never written out', () => {
    for (const op of operations.filter((o) => o.success.schema)) {
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      const name = schemaName(op.success.schema);
      assert.ok(name, `${op.id}: its success schema has no name (operations/schemas.ts named)`);
      // An operation that honours `Prefer: return=minimal` answers either shape: a named union of both, each a $ref.
      const minimalName = op.minimal && schemaName(op.minimal.schema);
      if (op.minimal) assert.ok(minimalName, `${op.id}: its minimal schema has no name`);
      const bodyName = minimalName ? `${name}OrMinimal` : name;
      for (const status of [op.success.status, ...(op.success.alsoStatuses ?? [])]) {
        assert.deepEqual(entry.responses[String(status)].content['application/json'].schema, { $ref: `#/components/schemas/${bodyName}` }, `${op.id} ${status}`);
      }
      if (minimalName) assert.deepEqual(doc.components.schemas[bodyName], { anyOf: [{ $ref: `#/components/schemas/${name}` }, { $ref: `#/components/schemas/${minimalName}` }] }, op.id);
    }
    // No 2xx JSON body anywhere is inline, whatever declared it.
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, entry] of Object.entries<any>(item)) {
        for (const [status, response] of Object.entries<any>(entry.responses)) {
          const schema = response.content?.['application/json']?.schema;
          if (Number(status) < 300 && schema) assert.ok(typeof schema.$ref === 'string' && Object.keys(schema).length === 1, `${method} ${path} ${status} is inline`);
        }
      }
    }
    const schemas = doc.components.schemas;
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    assert.deepEqual(doc.paths['/sections/{id}'].get.responses['200'].content['application/json'].schema, ref('Section'));
    assert.deepEqual(doc.paths['/sections'].get.responses['200'].content['application/json'].schema, ref('SectionList'));
    assert.deepEqual(schemas.SectionList.properties.data.items, ref('Section'));
    assert.deepEqual(doc.paths['/sections/deletions'].get.responses['200'].content['application/json'].schema, ref('TombstoneList'));
    assert.deepEqual(doc.paths['/sections'].post.requestBody.content['application/json'].schema, ref('CreateSection'));
    assert.deepEqual(schemas.LessonPageBulkResponse.properties.results.items.properties.data, ref('LessonPage'));
    assert.deepEqual(schemas.LessonPageBulkMinimalResponse.properties.results.items.properties.data, ref('BulkResultId'));
    assert.equal(schemas.Section.properties.id.format, 'uuid');
    // Every reference resolves; no component keeps an `$id`.
    const text = JSON.stringify(doc);
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) assert.ok(schemas[name], `dangling $ref to ${name}`);
    assert.doesNotMatch(JSON.stringify(schemas), /"\$id"/);
  });

  test('the bulk operations, and only they, take `Prefer` and answer `Preference-Applied` (RFC 7240 return=minimal)', () => {
    const bulkIds = operations.filter((op) => op.bulk).map((op) => op.id).sort();
    assert.deepEqual(bulkIds, ['bulkEmailMessages', 'bulkEnrolments', 'bulkLessonPages', 'bulkUsers']);
    for (const op of operations) {
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      const prefer = entry.parameters.find((p: any) => p.name === 'Prefer');
      const appliedHeader = entry.responses[String(op.success.status)].headers['Preference-Applied'];
      if (!op.bulk) {
        assert.deepEqual([prefer, appliedHeader, op.minimal], [undefined, undefined, undefined], op.id);
        continue;
      }
      assert.equal(prefer.in, 'header', op.id);
      assert.equal(prefer.required, false, op.id);
      assert.match(prefer.description, /`return=minimal`: each successful result’s `data` holds only the record’s `id`/, op.id);
      assert.deepEqual(appliedHeader, { $ref: '#/components/headers/PreferenceApplied' }, op.id);
    }
    assert.deepEqual(doc.components.headers.PreferenceApplied.schema, { type: 'string', enum: ['return=minimal'] });
  });

  test('MCP tool input schemas stay self-contained (no $ref)', () => {
    for (const tool of buildTools(operations)) assert.doesNotMatch(JSON.stringify(tool.listing.inputSchema), /\$ref/, tool.name);
  });

  test('summaries name each resource in words, with the right article (OpenAPI, MCP tools)', () => {
    // The resource names of paths and payloads (`wiki_page`, `wiki_pages`), from every collection in a path.
    const collections = new Set(operations.flatMap((op) => op.path.split('/').filter((s) => /^[a-z]+(_[a-z]+)+$/.test(s))));
    const joined = [...collections].flatMap((c) => [c, c.replace(/ies$/, 'y').replace(/s$/, '')]);
    const tools = new Map(buildTools(operations).map((tool) => [tool.op.id, tool.listing.description]));
    const texts = operations.flatMap((op) => {
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      return [entry.summary, entry.description, entry.responses[String(op.success.status)].description, tools.get(op.id)].map((text) => [op.id, String(text)]);
    });
    assert.equal(texts.length, 4 * operations.length);
    for (const [id, text] of texts) {
      // Outside `code`, where a field or path is quoted as it is.
      const prose = text.replace(/`[^`]*`/g, '');
      for (const name of joined) assert.ok(!new RegExp(`\\b${name}\\b`).test(prose), `${id}: "${text}" says ${name}`);
      assert.doesNotMatch(prose, /\ba (?!uni|use|usu|eu|one)[aeiou]/i, `${id}: "${text}"`);
      assert.doesNotMatch(prose, /\ban [^aeiou\W]/i, `${id}: "${text}"`);
    }
    const summary = (id: string) => operations.find((op) => op.id === id)!.summary;
    assert.equal(summary('getActivityByExternalId'), 'Read an activity by external_id');
    assert.equal(summary('upsertEmailMessageByExternalId'), 'Create or update an email message by external_id');
    assert.equal(summary('listDeletedWikiPages'), 'List deleted wiki pages');
    assert.equal(summary('listDeletedCategories'), 'List deleted course categories');
    assert.deepEqual(['activity', 'email message', 'section', 'unique key', 'user', 'upload'].map(withArticle), ['an activity', 'an email message', 'a section', 'a unique key', 'a user', 'an upload']);
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
