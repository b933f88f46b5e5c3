// The tools come from the operation registry alone (docs/mcp.md#tools), and the confirmations of destructive tools
// are one-time, bound and short-lived — checked here over the whole registry, on a real database and with a
// clock the test moves.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { operations } from '../src/all-operations.ts';
import { defineOperation, type Operation } from '../src/operations/operation.ts';
import { buildOpenApiDocument } from '../src/openapi/openapi.ts';
import { createRevisions } from '../src/operations/revisions.ts';
import { manualClock } from '../src/clock.ts';
import { readDeploymentSecret } from '../src/db/deployment-secrets.ts';
import { buildTools, toolName } from '../src/mcp/tools.ts';
import { createConfirmations, CONFIRMATION_TTL_MS } from '../src/mcp/confirmations.ts';
import { createTestDatabase, type TestDatabase } from './support/harness.ts';
import { createFactories } from './support/factories.ts';
import { servicesFor } from '../src/runtime.ts';
import { loadConfig } from '../src/config.ts';

describe('tools from the operation registry', () => {
  const tools = buildTools(operations);
  const openapi = buildOpenApiDocument(operations, { serverUrl: 'http://x/api/v1', revisions: createRevisions() }) as { paths: Record<string, Record<string, Record<string, unknown>>> };

  test('one tool per operation, named by its id in snake_case, described by its summary', () => {
    assert.equal(tools.length, operations.length);
    assert.equal(toolName('updateSection'), 'update_section');
    assert.equal(toolName('restoreWikiPageVersion'), 'restore_wiki_page_version');
    for (const [i, tool] of tools.entries()) {
      const op = operations[i];
      assert.equal(tool.name, toolName(op.id));
      assert.match(tool.name, /^[a-z][a-z0-9_]*$/);
      assert.equal(tool.listing.description, op.summary);
    }
  });

  test('annotations always explicit; destructive exactly where the OpenAPI document says x-destructive', () => {
    for (const tool of tools) {
      const { readOnlyHint, destructiveHint, idempotentHint } = tool.listing.annotations!;
      for (const hint of [readOnlyHint, destructiveHint, idempotentHint]) assert.equal(typeof hint, 'boolean', tool.name);
      assert.equal(readOnlyHint, !tool.op.writes, tool.name);
      const documented = openapi.paths[tool.op.path][tool.op.method.toLowerCase()]['x-destructive'] === true;
      assert.equal(destructiveHint, documented, tool.name);
      if (readOnlyHint) assert.equal(destructiveHint, false, tool.name);
    }
    assert.ok(tools.some((x) => x.listing.annotations!.destructiveHint), 'some tools are destructive');
  });

  test('one input object merging path, query and body fields, plus idempotency_key and confirmation_token where they apply', () => {
    for (const tool of tools) {
      const { properties, required = [], additionalProperties } = tool.listing.inputSchema as unknown as { properties: Record<string, any>; required?: string[]; additionalProperties: boolean };
      assert.equal(additionalProperties, false);
      const fields = [...tool.pathFields, ...tool.queryFields, ...tool.bodyFields];
      const own = [...(tool.op.idempotency ? ['idempotency_key'] : []), ...(tool.op.destructive ? ['confirmation_token'] : [])];
      assert.deepEqual(Object.keys(properties).sort(), [...fields, ...own].sort(), tool.name);
      for (const name of tool.pathFields) assert.ok(required.includes(name), `${tool.name}: path field ${name} is required`);
      assert.ok(!required.includes('idempotency_key') && !required.includes('confirmation_token'));
      if (tool.op.destructive) assert.equal(properties.confirmation_token.type, 'string');
    }
  });

  test('a field in two places, or named like a tool argument, stops start-up naming the operation', () => {
    const op = (params: Operation['params'], body: Operation['body']) =>
      defineOperation({ id: 'clashing', method: 'PATCH', path: '/things/{id}', tag: 'x', summary: 'x', scope: null, capability: null, writes: true, params, body, success: { status: 200, description: 'x' }, errors: [], handler: async () => ({}) }) as Operation;
    assert.throws(() => buildTools([op(Type.Object({ id: Type.String() }), Type.Object({ id: Type.String() }))]), /`id` is both a path and a body field of operation clashing/);
    assert.throws(() => buildTools([op(Type.Object({ id: Type.String() }), Type.Object({ confirmation_token: Type.String() }))]), /keeps for itself/);
  });
});

describe('confirmations', () => {
  const clock = manualClock(new Date('2026-11-24T10:00:00.000Z'));
  let database: TestDatabase;
  let key: string;
  let binding: Parameters<ReturnType<typeof createConfirmations>['issue']>[1];

  before(async () => {
    database = await createTestDatabase();
    key = await readDeploymentSecret(database.database.db, 'mcp_confirmation_key');
    const services = await servicesFor(loadConfig({ LOG_LEVEL: 'silent' }), database.database, clock);
    const make = createFactories(services, database.database);
    const org = await make.org();
    binding = { organisationId: org.id, personId: (await make.person(org)).id, tool: 'delete_section', arguments: { id: 'a', nested: { x: 1, y: [1, 2] } } };
  });
  after(() => database.drop());

  test('good once: a second use is refused, also by another process on the same database', async () => {
    const here = createConfirmations({ db: database.database.db, clock, key });
    const otherDb = database.reopen();
    const there = createConfirmations({ db: otherDb.db, clock, key });
    const { value } = here.issue('token', binding);
    assert.match(value, /^atr_cf_/);
    // The same arguments in another key order are the same call.
    assert.equal(await there.redeem('token', value, { ...binding, arguments: { nested: { y: [1, 2], x: 1 }, id: 'a' } }), true);
    assert.equal(await here.redeem('token', value, binding), false);
    await otherDb.close();
  });

  test('expired after 5 minutes; bound to its kind, person, tool, organisation and exact arguments; signed', async () => {
    const confirmations = createConfirmations({ db: database.database.db, clock, key });
    const late = confirmations.issue('token', binding);
    clock.advance(CONFIRMATION_TTL_MS);
    assert.equal(await confirmations.redeem('token', late.value, binding), false, 'expired');
    const mismatches = [
      { ...binding, personId: binding.organisationId },
      { ...binding, organisationId: binding.personId },
      { ...binding, tool: 'delete_course' },
      { ...binding, arguments: { ...binding.arguments, id: 'b' } },
    ];
    for (const other of mismatches) assert.equal(await confirmations.redeem('token', confirmations.issue('token', binding).value, other), false, JSON.stringify(other));
    assert.equal(await confirmations.redeem('elicitation', confirmations.issue('token', binding).value.slice('atr_cf_'.length), binding), false, 'a token is no request state');
    const forged = createConfirmations({ db: database.database.db, clock, key: 'another deployment key, 32 bytes long' }).issue('token', binding).value;
    assert.equal(await confirmations.redeem('token', forged, binding), false, 'signed by another key');
    for (const junk of [undefined, 42, '', 'atr_cf_x.y', 'x'.repeat(5000)]) assert.equal(await confirmations.redeem('token', junk, binding), false);
    assert.equal(await confirmations.redeem('token', confirmations.issue('token', binding).value, binding), true);
  });
});
