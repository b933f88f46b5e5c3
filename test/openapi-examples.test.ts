// Every example in the OpenAPI document — request bodies, parameters, success responses, and each problem
// document of each error status — is valid against the schema it illustrates, in every revision's document;
// and every operation has them, so the API reference shows a request and each response.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import Type from 'typebox';
import { buildOpenApiDocument } from '../src/openapi/openapi.ts';
import { defineOperation } from '../src/operations/operation.ts';
import { errorCodesWithStatus } from '../src/operations/operation-errors.ts';
import { apiChanges, createRevisions, type RevisionChange } from '../src/operations/revisions.ts';
import { operations } from '../src/all-operations.ts';
import { standalone } from './support/openapi-schemas.ts';

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsPlugin as unknown as (a: Ajv2020) => void)(ajv);

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

/** One compile per schema; its `#/components/...` references resolve against the document. */
function validator(doc: any, schema: any) {
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (!validate) {
    validate = ajv.compile(standalone(doc, schema));
    compiled.set(text, validate);
  }
  return validate;
}

function checkDocument(doc: any) {
  const failures: string[] = [];
  const check = (where: string, schema: any, value: unknown) => {
    if (value === undefined) return failures.push(`${where}: no example`);
    const validate = validator(doc, schema);
    if (!validate(value)) failures.push(`${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value)}`);
  };
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, entry] of Object.entries<any>(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      const body = entry.requestBody?.content?.['application/json'];
      if (body) check(`${at} request`, body.schema, body.example);
      for (const p of entry.parameters ?? []) if (p.in) check(`${at} parameter ${p.name}`, p.schema, p.example);
      for (const [status, response] of Object.entries<any>(entry.responses)) {
        const json = response.content?.['application/json'];
        if (json) check(`${at} ${status}`, json.schema, json.example);
        const problem = response.content?.['application/problem+json'];
        if (!problem) continue;
        const examples = Object.entries<any>(problem.examples ?? {});
        if (examples.length === 0) failures.push(`${at} ${status}: no problem example`);
        for (const [code, example] of examples) {
          check(`${at} ${status} ${code}`, problem.schema, example.value);
          if (example.value.code !== code || example.value.status !== Number(status)) failures.push(`${at} ${status}: example ${code} has code ${example.value.code}, status ${example.value.status}`);
        }
      }
    }
  }
  return failures;
}

describe('OpenAPI examples', () => {
  const revisions = createRevisions(apiChanges);

  test('every operation has a request example (if it takes a body) and an example of every response', () => {
    const doc: any = buildOpenApiDocument(operations, { serverUrl: 'http://examples.test', revisions });
    for (const op of operations) {
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      if (op.body) assert.ok(entry.requestBody.content['application/json'].example !== undefined, op.id);
      if (op.success.schema) assert.ok(entry.responses[String(op.success.status)].content['application/json'].example !== undefined, op.id);
      for (const [status, response] of Object.entries<any>(entry.responses)) {
        if (Number(status) < 400) continue;
        assert.deepEqual(Object.keys(response.content['application/problem+json'].examples ?? {}), errorCodesWithStatus(op, Number(status)), `${op.id} ${status}`);
      }
    }
  });

  test('every example of every revision’s document is valid against its schema', () => {
    for (const revision of revisions.list) {
      const doc: any = buildOpenApiDocument(operations, { serverUrl: 'http://examples.test', revisions, revision });
      assert.deepEqual(checkDocument(doc), [], `revision ${revision}`);
    }
  });

  test('a success example repeats the request’s values: a rename answers with the new title', () => {
    const doc: any = buildOpenApiDocument(operations, { serverUrl: 'http://examples.test', revisions });
    const patch = doc.paths['/sections/{id}'].patch;
    assert.equal(patch.responses['200'].content['application/json'].example.title, patch.requestBody.content['application/json'].example.title);
  });

  test('an earlier revision whose request shape differs gets an example of that shape, made from its schema', () => {
    const op = defineOperation({
      id: 'testRenameWidget',
      method: 'POST',
      path: '/test_widgets',
      tag: 'Test',
      summary: 'Makes a widget',
      scope: 'courses:write',
      capability: 'course/update',
      writes: true,
      body: Type.Object({ title: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      bodyExample: { title: 'Gear' },
      success: { status: 201, schema: Type.Object({ title: Type.String() }, { additionalProperties: false }), description: 'The widget.' },
      errors: [422],
      handler: async () => ({}),
    });
    const change: RevisionChange = {
      revision: '2027-01-01',
      description: '`name` is now `title`.',
      operations: [op.id],
      downgradeRequestSchema: () => Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      downgradeResponseSchema: () => Type.Object({ name: Type.String() }, { additionalProperties: false }),
    };
    const withChange = createRevisions([change]);
    const old: any = buildOpenApiDocument([op], { serverUrl: 'http://examples.test', revisions: withChange, revision: '2026-11-01' });
    assert.deepEqual(Object.keys(old.paths['/test_widgets'].post.requestBody.content['application/json'].example), ['name']);
    assert.deepEqual(checkDocument(old), []);
    const current: any = buildOpenApiDocument([op], { serverUrl: 'http://examples.test', revisions: withChange });
    assert.deepEqual(current.paths['/test_widgets'].post.requestBody.content['application/json'].example, { title: 'Gear' });
  });
});
