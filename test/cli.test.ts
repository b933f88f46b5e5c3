// The `atrium` command, run as a real process against a real database, then checked through the real app
// opened on that same database (the way an operator uses it: CLI to set up, API to use).
// With TEST_DATABASE_URL the suite runs on PostgreSQL: each database is a fresh schema, handed to the CLI
// through the connection string's `options` parameter (pg passes it to the server as `-c search_path=…`).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openRuntime } from '../src/runtime.ts';
import { demoSteps } from '../src/cli/seed-demo.ts';
import { errorCatalog, type ErrorCode } from '../src/errors/error-catalog.ts';
import type { FastifyInstance } from 'fastify';
import { createApiClient, type ApiClient } from './support/api-client.ts';
import { createPageClient } from './support/page-client.ts';
import { testDatabaseUrl } from './support/harness.ts';
import { runCliProcess, type CliRun } from './support/cli-process.ts';

const root = path.join(import.meta.dirname, '..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface CliDatabase {
  /** The variables that point the CLI (and loadConfig) at this database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

async function onPostgres(sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}

async function createCliDatabase(): Promise<CliDatabase> {
  if (testDatabaseUrl) {
    const schema = `cli_${randomBytes(6).toString('hex')}`;
    await onPostgres(`create schema ${schema}`);
    const url = new URL(testDatabaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return { env: { DATABASE_URL: url.toString() }, drop: () => onPostgres(`drop schema ${schema} cascade`) };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-cli-'));
  return { env: { DATA_DIR: dir }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

type Run = CliRun;

/** Runs the CLI against `db`, logging nothing and bootstrapping nothing. */
function runCli(db: CliDatabase, args: string[], entry = 'src/cli/main.ts', input = ''): Promise<Run> {
  return runCliProcess({ LOG_LEVEL: 'silent', DEV_BOOTSTRAP: 'false', ...db.env }, args, input, entry);
}

/** Runs a command that must succeed with --json and returns its parsed output. */
async function cliJson(db: CliDatabase, args: string[]): Promise<any> {
  const r = await runCli(db, [...args, '--json']);
  assert.equal(r.code, 0, `atrium ${args.join(' ')} failed: ${r.stderr}`);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /^[^\n]+\n$/, 'one line of JSON');
  return JSON.parse(r.stdout);
}

/**
 * Runs a command that must fail with --json: it exits with `exit`, prints nothing on stdout and exactly one line
 * of JSON on stderr, whose code is `code`; returns that object.
 */
async function cliFailure(db: CliDatabase, args: string[], exit: number, code: string): Promise<{ code: string; title: string; detail: string; errors?: { path: string; code?: string; detail: string }[] }> {
  const r = await runCli(db, [...args, '--json']);
  const what = `atrium ${args.join(' ')} --json: ${r.stderr}`;
  assert.equal(r.code, exit, what);
  assert.equal(r.stdout, '', what);
  assert.match(r.stderr, /^\{[^\n]*\}\n$/, `one line of JSON and nothing else: ${what}`);
  const problem = JSON.parse(r.stderr);
  assert.equal(problem.code, code, what);
  assert.equal(problem.title, errorCatalog[code as ErrorCode].title, 'the title of the code in the catalogue');
  assert.ok(typeof problem.detail === 'string' && problem.detail !== '', what);
  assert.deepEqual(Object.keys(problem).filter((k) => !['code', 'title', 'detail', 'errors'].includes(k)), [], what);
  return problem;
}

/** The real app on the database the CLI wrote, as a second process would open it. */
async function withApi<T>(db: CliDatabase, fn: (api: ApiClient, app: FastifyInstance) => Promise<T>): Promise<T> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DEV_BOOTSTRAP: 'false', ...db.env });
  const { database, clock } = await openRuntime(config);
  const app = await buildApp({ config, database, clock, logger: false });
  try {
    return await fn(createApiClient(app), app);
  } finally {
    await app.close();
    await database.close();
  }
}

const address = () => `org-${randomBytes(4).toString('hex')}.test`;

/** An organisation with an administrator, made through the CLI. */
async function orgWithAdmin(db: CliDatabase): Promise<{ host: string; email: string }> {
  const host = address();
  await cliJson(db, ['org', 'create', '--address', host, '--name', 'CLI test']);
  const email = `admin@${host}`;
  await cliJson(db, ['person', 'create', '--org', host, '--email', email, '--name', 'Admin', '--roles', 'admin']);
  return { host, email };
}

describe('atrium CLI', () => {
  let db: CliDatabase;
  before(async () => {
    db = await createCliDatabase();
  });
  after(() => db.drop());

  test('org create → person create → api-key create issues a key that works at the organisation’s address', async () => {
    const host = address();
    const org = await cliJson(db, ['org', 'create', '--address', host.toUpperCase(), '--name', 'Acme']);
    assert.deepEqual(Object.keys(org).sort(), ['address', 'id']);
    assert.match(org.id, UUID);
    assert.equal(org.address, host, 'the address is stored normalised');

    const person = await cliJson(db, ['person', 'create', '--org', host, '--email', `Ada@${host}`, '--name', 'Ada', '--roles', 'teacher,integration', '--platform-admin', '--password', 'correct horse']);
    assert.deepEqual(Object.keys(person), ['id']);
    assert.match(person.id, UUID);

    const key = await cliJson(db, ['api-key', 'create', '--org', host, '--person', `ada@${host}`, '--scopes', 'courses:write,courses:read', '--mode', 'test', '--service-version', '2027-01-15', '--name', 'ci']);
    assert.deepEqual(Object.keys(key).sort(), ['id', 'key']);
    assert.match(key.id, UUID);
    assert.match(key.key, /^atr_test_[0-9A-Za-z]{49}$/);

    await withApi(db, async (api) => {
      const me = await api.request({ path: '/me', host, key: key.key });
      assert.equal(me.status, 200);
      assert.deepEqual(me.body.organisation, { id: org.id, address: host, name: 'Acme', plan: 'standard' });
      assert.deepEqual(me.body.subject, { person_id: person.id, email: `ada@${host}`, name: 'Ada' });
      assert.deepEqual(me.body.credential, { kind: 'api_key', id: key.id, mode: 'test', pinned_revision: '2026-11-01' });
      assert.deepEqual(me.body.scopes, ['courses:read', 'courses:write']);
      assert.ok(me.body.capabilities.includes('platform/email_templates_edit'), '--platform-admin grants platform capabilities');
      assert.ok(!me.body.capabilities.includes('api_key/manage'), 'teacher and integration do not manage keys');
    });
  });

  test('without --json each command prints one sentence, and api-key create shows the key', async () => {
    const host = address();
    const created = await runCli(db, ['org', 'create', '--address', host, '--name', 'Plain']);
    assert.equal(created.code, 0);
    assert.match(created.stdout, new RegExp(`^Created organisation [0-9a-f-]{36} at ${host.replaceAll('.', '\\.')}[^\\n]*\\n$`));
    await cliJson(db, ['person', 'create', '--org', host, '--email', `p@${host}`, '--name', 'P', '--roles', 'admin']);
    const key = await runCli(db, ['api-key', 'create', '--org', host, '--person', `p@${host}`, '--scopes', 'courses:read']);
    assert.equal(key.code, 0);
    assert.match(key.stdout, /^[^\n]*: atr_live_[0-9A-Za-z]{49}\n$/);
  });

  test('api-key revoke makes the key fail; revoking it again is an error', async () => {
    const { host, email } = await orgWithAdmin(db);
    const key = await cliJson(db, ['api-key', 'create', '--org', host, '--person', email, '--scopes', 'courses:read']);
    assert.deepEqual(await cliJson(db, ['api-key', 'revoke', '--org', host, '--id', key.id]), { id: key.id, revoked: true });
    await withApi(db, async (api) => {
      const me = await api.request({ path: '/me', host, key: key.key });
      assert.equal(me.status, 401);
      assert.equal(me.body.code, 'auth.revoked_credential');
    });
    const again = await runCli(db, ['api-key', 'revoke', '--org', host, '--id', key.id]);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, `atrium: no unrevoked API key ${key.id} in organisation ${host}\n`);
  });

  test('org update changes the plan and the name', async () => {
    const { host, email } = await orgWithAdmin(db);
    const key = await cliJson(db, ['api-key', 'create', '--org', host, '--person', email, '--scopes', 'courses:read']);
    const updated = await cliJson(db, ['org', 'update', '--address', host, '--plan', 'no-api', '--name', 'Renamed']);
    assert.deepEqual(updated, { id: updated.id, address: host, name: 'Renamed', plan: 'no-api' });
    // Another process sees the change (reads keep working on a plan without API entitlement).
    await withApi(db, async (api) => {
      const me = await api.request({ path: '/me', host, key: key.key });
      assert.equal(me.status, 200);
      assert.equal(me.body.organisation.plan, 'no-api');
      assert.equal(me.body.organisation.name, 'Renamed');
    });
  });

  test('person set-password reads the password from standard input (or --generate prints one); the person signs in with it', async () => {
    const { host, email } = await orgWithAdmin(db);
    const set = await runCli(db, ['person', 'set-password', '--org', host, '--email', email, '--json'], undefined, 'a long enough secret\n');
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(Object.keys(JSON.parse(set.stdout)), ['id']);
    const generated = await cliJson(db, ['person', 'set-password', '--org', host, '--email', email, '--generate']);
    assert.match(generated.password, /^[A-Za-z0-9_-]{24}$/);
    await withApi(db, async (_api, app) => {
      assert.equal((await createPageClient(app, host).signIn(email, 'a long enough secret')).status, 401, 'the first password was replaced');
      const res = await createPageClient(app, host).signIn(email, generated.password);
      assert.equal(res.status, 303);
    });
    const short = await runCli(db, ['person', 'set-password', '--org', host, '--email', email], undefined, 'short\n');
    assert.deepEqual([short.code, short.stderr], [1, 'atrium: a password needs at least 8 characters\n']);
    const none = await runCli(db, ['person', 'set-password', '--org', host, '--email', email]);
    assert.equal(none.code, 2);
  });

  test('person remove: the person signs in no more and their API keys are refused at once', async () => {
    const { host, email } = await orgWithAdmin(db);
    await runCli(db, ['person', 'set-password', '--org', host, '--email', email], undefined, 'a long enough secret');
    const key = await cliJson(db, ['api-key', 'create', '--org', host, '--person', email, '--scopes', 'courses:read']);
    // Not the last administrator, whom the CLI refuses to remove like the API does.
    await cliJson(db, ['person', 'create', '--org', host, '--email', `second@${host}`, '--name', 'Second', '--roles', 'admin']);
    const removed = await cliJson(db, ['person', 'remove', '--org', host, '--email', email]);
    assert.deepEqual(Object.keys(removed), ['id', 'removed']);
    assert.match(removed.id, UUID);
    await withApi(db, async (api, app) => {
      const me = await api.request({ host, key: key.key, path: '/me' });
      assert.equal(me.status, 401);
      assert.equal((await createPageClient(app, host).signIn(email, 'a long enough secret')).status, 401);
    });
    const again = await runCli(db, ['person', 'remove', '--org', host, '--email', email]);
    assert.equal(again.code, 1);
  });

  test('oauth-client create registers a client (the secret once, none for a public client) that gets tokens at the address', async () => {
    const { host, email } = await orgWithAdmin(db);
    const machine = await cliJson(db, ['oauth-client', 'create', '--org', host, '--name', 'Nightly sync', '--type', 'confidential', '--grants', 'client_credentials', '--scopes', 'courses:read', '--person', email]);
    assert.deepEqual(Object.keys(machine), ['client_id', 'client_secret']);
    const app = await cliJson(db, ['oauth-client', 'create', '--org', host, '--name', 'Phone app', '--type', 'public', '--redirect-uri', 'http://127.0.0.1:7/cb', '--redirect-uri', 'https://app.example/cb']);
    assert.deepEqual(Object.keys(app), ['client_id']);
    await withApi(db, async (api, fastify) => {
      const res = await fastify.inject({ method: 'POST', url: '/oauth/token', headers: { host, 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=client_credentials&client_id=${machine.client_id}&client_secret=${machine.client_secret}` });
      assert.equal(res.statusCode, 200);
      const me = await api.request({ host, key: JSON.parse(res.body).access_token, path: '/me' });
      assert.deepEqual(me.body.scopes, ['courses:read']);
    });
    for (const [args, message] of [
      [['--type', 'public', '--grants', 'client_credentials'], 'A public client cannot use client_credentials'],
      [['--type', 'public', '--redirect-uri', 'http://evil.example/cb'], 'must be https, or http on a loopback address'],
      [['--type', 'confidential', '--grants', 'client_credentials'], 'act as a service person'],
    ] as const) {
      const r = await runCli(db, ['oauth-client', 'create', '--org', host, '--name', 'X', ...args]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(message));
    }
    assert.equal((await runCli(db, ['oauth-client', 'create', '--org', host, '--name', 'X', '--type', 'weird'])).code, 2);
  });

  test('an unknown organisation is a runtime error: exit 1 and one clear line, no stack, no usage', async () => {
    const r = await runCli(db, ['person', 'create', '--org', 'nowhere.test', '--email', 'a@nowhere.test', '--name', 'A', '--roles', 'admin']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'atrium: no organisation at address nowhere.test\n');
  });

  test('requests the services refuse exit 1 with their reason', async () => {
    const { host, email } = await orgWithAdmin(db);
    const refusals: [string[], string][] = [
      [['org', 'create', '--address', host, '--name', 'Again'], `an organisation at address ${host} exists already`],
      [['person', 'create', '--org', host, '--email', `x@${host}`, '--name', 'X', '--roles', 'admin,wizard'], 'No role wizard in this organisation (GET /roles lists them).'],
      // The same rules as the REST API: an address taken in another letter case is taken.
      [['person', 'create', '--org', host, '--email', email.toUpperCase(), '--name', 'Twin', '--roles', 'admin'], `Another user of this organisation has the e-mail address ${email}.`],
      [['person', 'remove', '--org', host, '--email', email], `${email} is the last active administrator of this organisation; give another person the admin role first.`],
      [['api-key', 'create', '--org', host, '--person', email, '--scopes', 'courses:read,courses:fly'], 'unknown scopes: courses:fly'],
      [['api-key', 'create', '--org', host, '--person', `ghost@${host}`, '--scopes', 'courses:read'], `no person with e-mail ghost@${host} in organisation ${host}`],
      [['api-key', 'create', '--org', host, '--person', email, '--scopes', 'courses:read', '--service-version', '2020-01-01'], 'not a revision of this API: 2020-01-01'],
    ];
    for (const [args, message] of refusals) {
      const r = await runCli(db, args);
      assert.equal(r.code, 1, `atrium ${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, `atrium: ${message}\n`);
    }
  });

  test('with --json each refusal is one JSON object on stderr with the API’s code, and the options at fault', async () => {
    const { host, email } = await orgWithAdmin(db);
    const key = ['api-key', 'create', '--org', host, '--person', email];

    const unknownOrg = await cliFailure(db, ['api-key', 'create', '--org', 'nowhere.test', '--person', email, '--scopes', 'courses:read'], 1, 'tenancy.unknown_organisation');
    assert.equal(unknownOrg.detail, 'no organisation at address nowhere.test');
    await cliFailure(db, ['org', 'update', '--address', 'nowhere.test', '--name', 'X'], 1, 'tenancy.unknown_organisation');
    await cliFailure(db, [...key.slice(0, 4), '--person', `ghost@${host}`, '--scopes', 'courses:read'], 1, 'user.not_found');
    await cliFailure(db, ['org', 'create', '--address', host, '--name', 'Again'], 1, 'cli.address_taken');

    const twin = await cliFailure(db, ['person', 'create', '--org', host, '--email', email.toUpperCase(), '--name', 'Twin', '--roles', 'admin'], 1, 'user.email_taken');
    assert.equal(twin.detail, `Another user of this organisation has the e-mail address ${email}.`);
    const roles = await cliFailure(db, ['person', 'create', '--org', host, '--email', `x@${host}`, '--name', 'X', '--roles', 'admin,wizard'], 1, 'cli.invalid_argument');
    assert.deepEqual(roles.errors, [{ path: '--roles', code: 'unknown_role', detail: 'No role wizard in this organisation (GET /roles lists them).' }]);

    const scope = await cliFailure(db, [...key, '--scopes', 'courses:read,courses:fly'], 1, 'cli.invalid_argument');
    assert.deepEqual(scope.errors, [{ path: '--scopes', code: 'invalid_value', detail: 'unknown scopes: courses:fly' }]);
    const version = await cliFailure(db, [...key, '--scopes', 'courses:read', '--service-version', '2020-01-01'], 1, 'versioning.invalid_revision');
    assert.deepEqual(version.errors?.map((e) => e.path), ['--service-version']);
    const redirect = await cliFailure(db, ['oauth-client', 'create', '--org', host, '--name', 'X', '--type', 'public', '--redirect-uri', 'http://evil.example/cb'], 1, 'cli.invalid_argument');
    assert.deepEqual(redirect.errors?.map((e) => [e.path, e.code]), [['--redirect-uri', 'invalid_format']], 'the body field is named by its option');

    const made = await cliJson(db, [...key, '--scopes', 'courses:read']);
    await cliJson(db, ['api-key', 'revoke', '--org', host, '--id', made.id]);
    await cliFailure(db, ['api-key', 'revoke', '--org', host, '--id', made.id], 1, 'cli.api_key_not_found');

    await cliJson(db, ['org', 'update', '--address', host, '--plan', 'no-api']);
    const plan = await cliFailure(db, [...key, '--scopes', 'courses:read'], 1, 'commerce.plan_entitlement');
    assert.match(plan.detail, /plan does not include the API/);
    assert.equal(plan.errors, undefined, 'no option is at fault');
  });

  test('seed demo fills the organisation; the sections it made are listed by the API; a second run changes nothing', async () => {
    const { host, email } = await orgWithAdmin(db);
    const summary = await cliJson(db, ['seed', 'demo', '--org', host]);
    assert.deepEqual(Object.keys(summary).sort(), ['created', 'organisation']);
    assert.equal(summary.organisation.address, host);
    assert.deepEqual(Object.keys(summary.created), demoSteps.map((step) => step.collection));
    assert.deepEqual(Object.keys(summary.created).slice(0, 3), ['categories', 'courses', 'sections']);
    assert.ok(summary.created.categories >= 1 && summary.created.courses >= 2, JSON.stringify(summary));
    assert.ok(summary.created.sections >= 2 * summary.created.courses, 'several sections per course');

    const again = await runCli(db, ['seed', 'demo', '--org', host]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(`^atrium: ${host.replaceAll('.', '\\.')} already holds the demo content`));

    const key = await cliJson(db, ['api-key', 'create', '--org', host, '--person', email, '--scopes', 'courses:read']);
    await withApi(db, async (api) => {
      const sections = await api.request({ path: '/sections?limit=200', host, key: key.key });
      assert.equal(sections.status, 200);
      assert.equal(sections.body.data.length, summary.created.sections, 'the rolled-back second run added nothing');
      assert.ok(sections.body.data.some((s: { title: string }) => s.title === 'Cells'));
      const courses = await api.request({ path: '/courses?limit=200', host, key: key.key });
      assert.equal(courses.body.data.length, summary.created.courses);
      const courseIds = new Set(courses.body.data.map((c: { id: string }) => c.id));
      assert.ok(sections.body.data.every((s: { course_id: string }) => courseIds.has(s.course_id)));
    });
  });
});

describe('atrium migrate', () => {
  test('names the migrations it applied, then none', async () => {
    const fresh = await createCliDatabase();
    try {
      const first = await cliJson(fresh, ['migrate']);
      assert.ok(first.applied.length > 0);
      for (const name of first.applied) assert.match(name, /^\d{14}-/);
      assert.deepEqual(await cliJson(fresh, ['migrate']), { applied: [] });
    } finally {
      await fresh.drop();
    }
  });
});

// Refused before any database is opened, and proved so: their data directory stays empty.
describe('atrium usage', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-cli-usage-'));
  const untouched: CliDatabase = { env: { DATA_DIR: dataDir }, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  after(async () => {
    assert.deepEqual(fs.readdirSync(dataDir), [], 'no database was opened');
    await untouched.drop();
  });

  const usageErrors: [string, string[], RegExp][] = [
    ['no command', [], /no command given/],
    ['an unknown command', ['frob'], /unknown command: frob/],
    ['a group without its subcommand', ['org'], /org: which one\?/],
    ['an unknown subcommand', ['org', 'delete'], /unknown command: org delete/],
    ['a missing required option', ['org', 'create', '--address', 'x.test'], /missing required option --name/],
    ['an unknown option', ['org', 'create', '--address', 'x.test', '--name', 'X', '--colour', 'red'], /--colour/],
    ['a value outside the choices', ['org', 'create', '--address', 'x.test', '--name', 'X', '--plan', 'gold'], /--plan must be one of standard, no-api/],
    ['an address that is not a host name', ['org', 'create', '--address', 'not a host', '--name', 'X'], /--address must be a host name/],
    ['an option without its value', ['person', 'create', '--org'], /--org/],
    ['an update with nothing to change', ['org', 'update', '--address', 'x.test'], /nothing to change/],
    ['an id that cannot be a key id', ['api-key', 'revoke', '--org', 'x.test', '--id', 'nope'], /--id must be an API key id/],
  ];
  for (const [what, args, message] of usageErrors) {
    test(`${what} is a usage error: exit 2, the usage on stderr, nothing on stdout`, async () => {
      const r = await runCli(untouched, args);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^atrium: /);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\busage:\s+atrium /);
    });
  }

  test('with --json a wrong invocation is cli.usage (exit 2) naming the option at fault, and no usage text', async () => {
    assert.equal((await cliFailure(untouched, ['frob'], 2, 'cli.usage')).detail, 'unknown command: frob');
    await cliFailure(untouched, ['org', 'delete'], 2, 'cli.usage');
    const missing = await cliFailure(untouched, ['org', 'create', '--address', 'x.test'], 2, 'cli.usage');
    assert.deepEqual(missing.errors, [{ path: '--name', code: 'required', detail: 'missing required option --name' }]);
    const mode = await cliFailure(untouched, ['api-key', 'create', '--org', 'x.test', '--person', 'a@x.test', '--scopes', 'courses:read', '--mode', 'fly'], 2, 'cli.usage');
    assert.deepEqual(mode.errors?.map((e) => [e.path, e.code]), [['--mode', 'invalid_value']]);
    const unknown = await cliFailure(untouched, ['org', 'create', '--address', 'x.test', '--name', 'X', '--colour', 'red'], 2, 'cli.usage');
    assert.deepEqual(unknown.errors?.map((e) => [e.path, e.code]), [['--colour', 'unknown_option']]);
    const address = await cliFailure(untouched, ['org', 'create', '--address', 'not a host', '--name', 'X'], 2, 'cli.usage');
    assert.deepEqual(address.errors?.map((e) => [e.path, e.code]), [['--address', 'invalid_format']]);
  });

  test('with --json a bad environment, an unreachable database and an unexpected error have their codes, and no stack', async () => {
    const config = await cliFailure({ env: { DATABASE_URL: 'mysql://db.example/atrium' }, drop: async () => {} }, ['migrate'], 1, 'cli.invalid_configuration');
    assert.deepEqual(config.errors?.map((e) => e.path), ['DATABASE_URL']);
    // Port 1 on loopback: refused at once, on any machine.
    await cliFailure({ env: { DATABASE_URL: 'postgres://atrium@127.0.0.1:1/atrium' }, drop: async () => {} }, ['migrate'], 1, 'database.unavailable');
    // A data directory that is a file cannot be made: no rule of ours refuses it, so it is unexpected.
    const file = path.join(dataDir, '..', `atrium-cli-not-a-dir-${randomBytes(4).toString('hex')}`);
    fs.writeFileSync(file, '');
    try {
      const unexpected = await cliFailure({ env: { DATA_DIR: file }, drop: async () => {} }, ['migrate'], 1, 'internal.error');
      assert.doesNotMatch(unexpected.detail, /\n\s+at /, 'no stack');
    } finally {
      fs.rmSync(file);
    }
  });

  test('--help prints the usage on stdout and exits 0', async () => {
    const all = await runCli(untouched, ['--help']);
    assert.equal(all.code, 0);
    assert.match(all.stdout, /^usage:\n {2}atrium serve\n/);
    const one = await runCli(untouched, ['api-key', 'create', '--help']);
    assert.equal(one.code, 0);
    assert.equal(one.stdout, 'usage: atrium api-key create --org HOST --person EMAIL --scopes s1,s2 [--mode live|test] [--service-version YYYY-MM-DD] [--name N]\n');
  });

  test('bin/atrium.js is an executable node script that runs the CLI', async () => {
    const file = path.join(root, 'bin/atrium.js');
    assert.ok((fs.statSync(file).mode & 0o111) !== 0, 'executable');
    // `env -S` passes node its flags (test/startup-modules.test.ts checks they are production's).
    assert.match(fs.readFileSync(file, 'utf8'), /^#!\/usr\/bin\/env -S node( --\S+)+\n/);
    const r = await runCli(untouched, ['--help'], 'bin/atrium.js');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^usage:/);
  });
});
