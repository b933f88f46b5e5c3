// PostgreSQL's transactions as pg-transactions.ts runs them, in place of Kysely's TransactionBuilder, on a real
// PostgreSQL: the same answers as Kysely's (committed, rolled back, aborted at the COMMIT, a late statement refused,
// the settings asked), every statement seen by `onQuery`, and the pooled connection given back whatever happens.
// PostgreSQL only (the suite runs it with TEST_DATABASE_URL).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedTransactionError, sql, type CompiledQuery } from 'kysely';
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from '../../test/support/harness.ts';
import { newId } from '../ids.ts';
import type { Db } from './database.ts';
import { preparedQuery } from './prepared.ts';
import { deferredWrite } from './deferred-writes.ts';
import { inSavepoint } from './savepoints.ts';

const skip = testDatabaseUrl ? false : 'PostgreSQL only: run with TEST_DATABASE_URL';

const at = '2026-11-30T12:00:00.000Z';
const organisation = (id: string) => ({ id, address: `${id}.test`, name: 'Transactions test', plan: 'standard' as const, credentials_epoch: 0, timezone: 'UTC', default_language: 'en', created_at: at, updated_at: at });
const organisationName = preparedQuery((db: Db, id: string) => db.selectFrom('organisations').select('name').where('id', '=', id));
const exists = async (db: Db, id: string) => (await db.selectFrom('organisations').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

describe('PostgreSQL transactions (pg-transactions.ts)', { skip }, () => {
  let t: TestDatabase;
  let db: Db;
  const seen: string[] = [];
  before(async () => {
    t = await createTestDatabase(undefined, { onQuery: (query: CompiledQuery) => void seen.push(query.sql) });
    db = t.database.db;
  });
  after(() => t.drop());

  /** The pool has every connection back (none checked out). */
  const allReturned = () => {
    const stats = t.database.poolStats!();
    assert.equal(stats.total, stats.idle);
  };

  test('commits what the body wrote, and onQuery sees each statement: a builder query, a prepared one, a deferred write, a savepoint', async () => {
    const id = newId();
    seen.length = 0;
    const name = await db.transaction().execute(async (tx) => {
      await tx.insertInto('organisations').values(organisation(id)).execute();
      await inSavepoint(tx, 'rename', () => deferredWrite(tx, tx.updateTable('organisations').set({ name: 'Renamed' }).where('id', '=', id)));
      return (await organisationName(tx, id))[0]?.name;
    });
    assert.equal(name, 'Renamed');
    assert.equal((await organisationName(db, id))[0]?.name, 'Renamed');
    assert.ok(seen.some((s) => s.startsWith('insert into "organisations"')));
    assert.ok(seen.some((s) => s.startsWith('update "organisations"')));
    assert.ok(seen.some((s) => s.startsWith('savepoint')));
    assert.ok(seen.filter((s) => s.startsWith('select "name"')).length >= 2);
    allReturned();
  });

  test('a body that throws after writing is rolled back, and its own error is what the caller gets', async () => {
    const id = newId();
    const failure = new Error('the body gave up');
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('organisations').values(organisation(id)).execute();
        throw failure;
      }),
      (err) => err === failure,
    );
    // Rolled back on its connection before that went back to the pool: the next transaction there commits its
    // own write, not the one given up.
    const next = newId();
    await db.transaction().execute((tx) => tx.insertInto('organisations').values(organisation(next)).execute());
    assert.equal(await exists(db, next), true);
    assert.equal(await exists(db, id), false);
    allReturned();
  });

  test('a failure the body catches leaves the transaction aborted: the COMMIT answers AbortedTransactionError and nothing is kept', async () => {
    const id = newId();
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('organisations').values(organisation(id)).execute();
        await sql`select 1 / 0`.execute(tx).catch(() => undefined);
      }),
      AbortedTransactionError,
    );
    assert.equal(await exists(db, id), false);
    // The connection was given back clean: the next transaction on it commits.
    const next = newId();
    await db.transaction().execute((tx) => tx.insertInto('organisations').values(organisation(next)).execute());
    assert.equal(await exists(db, next), true);
    allReturned();
  });

  test('a statement of the transaction sent after it ended is refused, and does nothing', async () => {
    let late: Db | undefined;
    await db.transaction().execute(async (tx) => {
      late = tx;
      await sql`select 1`.execute(tx);
    });
    const id = newId();
    await assert.rejects(late!.insertInto('organisations').values(organisation(id)).execute(), /already committed or rolled back/);
    await assert.rejects(organisationName(late!, id), /already committed or rolled back/);
    assert.equal(await exists(db, id), false);
  });

  test('the isolation level and access mode asked are the transaction\'s', async () => {
    const level = await db
      .transaction()
      .setIsolationLevel('serializable')
      .execute(async (tx) => (await sql<{ transaction_isolation: string }>`show transaction_isolation`.execute(tx)).rows[0].transaction_isolation);
    assert.equal(level, 'serializable');
    await assert.rejects(
      db
        .transaction()
        .setAccessMode('read only')
        .execute((tx) => tx.insertInto('organisations').values(organisation(newId())).execute()),
      (err: { code?: string }) => err.code === '25006',
    );
    await assert.rejects(
      db
        .transaction()
        .setIsolationLevel('whenever' as 'serializable')
        .execute(async () => undefined),
      /invalid transaction isolation level/,
    );
    allReturned();
  });

  // Bounded: statements that raced for the connection would hold pooled connections and never answer.
  test('statements a body starts at once run one after another on its connection, in the order given', { timeout: 10_000 }, async () => {
    const ids = Array.from({ length: 6 }, () => newId());
    const backends = await db.transaction().execute(async (tx) => {
      await Promise.all(ids.map((id) => tx.insertInto('organisations').values(organisation(id)).execute()));
      // Prepared reads and builder reads, started together: each sees every write started before it.
      return Promise.all([
        ...ids.map(async (id) => (await organisationName(tx, id))[0]?.name),
        sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx).then((r) => r.rows[0].pid),
        sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx).then((r) => r.rows[0].pid),
      ]);
    });
    assert.deepEqual(backends.slice(0, ids.length), Array(ids.length).fill('Transactions test'));
    assert.equal(backends[ids.length], backends[ids.length + 1]);
    for (const id of ids) assert.equal(await exists(db, id), true);
    allReturned();
  });

  test('concurrent transactions each commit their own writes on their own connection', async () => {
    const ids = Array.from({ length: 8 }, () => newId());
    const backends = await Promise.all(
      ids.map((id) =>
        db.transaction().execute(async (tx) => {
          await tx.insertInto('organisations').values(organisation(id)).execute();
          return (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx)).rows[0].pid;
        }),
      ),
    );
    for (const id of ids) assert.equal(await exists(db, id), true);
    // The pool has five connections: eight transactions at once shared them, one at a time each.
    assert.ok(new Set(backends).size <= 5);
    allReturned();
  });
});
