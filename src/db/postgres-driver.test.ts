// The PostgreSQL driver's routing and deferral (postgres-driver.ts), on a real PostgreSQL: plain reads and
// one-statement writes on the shared pipelined connections (shared-connections.ts), everything of a transaction on
// the transaction's own connection, deferrable statements sent with the next statement or the COMMIT, and a shared
// connection that was lost replaced.
// PostgreSQL only: these are properties of that driver (the suite runs them with TEST_DATABASE_URL).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import pg from 'pg';
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from '../../test/support/harness.ts';
import { newId } from '../ids.ts';
import type { Db } from './database.ts';
import { preparedQuery } from './prepared.ts';
import { migrateToLatest } from './migrate.ts';
import { createRider, withRider } from './riders.ts';
import { deferredWrite } from './deferred-writes.ts';
import { inSavepoint } from './savepoints.ts';
import { LockBusy, withTransactionLock } from './locks.ts';
import { isUniqueViolation } from './errors.ts';
import { FinalStatementRefused, offerFinalStatement } from './final-statement.ts';
import { STATEMENT_HINTS } from './statement-hints.ts';
import { againIfPlansOutdated } from './outdated-plans.ts';
import { WRITER_LOCK_TIMEOUT_MS } from './shared-connections.ts';
import type { CompiledQuery } from 'kysely';

/** The advisory lock Kysely's migrator takes on PostgreSQL (its key; ours holds it for a transaction: postgres-driver.ts). */
const KYSELY_MIGRATION_LOCK_ID = '3853314791062309107';

const skip = testDatabaseUrl ? false : 'PostgreSQL only: run with TEST_DATABASE_URL';

const at = '2026-11-24T12:00:00.000Z';
const insertOrganisation = (db: Db, id: string) =>
  db.insertInto('organisations').values({ id, address: `${id}.test`, name: 'Driver test', plan: 'standard', credentials_epoch: 0, timezone: 'UTC', default_language: 'en', created_at: at, updated_at: at }).execute();
const deferredEvent = preparedQuery(
  (db: Db, id: string, organisationId: string) =>
    db.insertInto('outbox_events').values({ id, organisation_id: organisationId, type: 'test.event', occurred_at: at, data: '{}', dispatched_at: null }),
  { deferrable: true },
);
/** deferredEvent's insert, compiled, for a final statement's tail. */
const eventStatement = (db: Db, organisationId: string): CompiledQuery => deferredEvent.compile(db, newId(), organisationId);
const countEvents = async (db: Db, organisationId: string) =>
  Number((await db.selectFrom('outbox_events').select((eb) => eb.fn.countAll<number>().as('n')).where('organisation_id', '=', organisationId).executeTakeFirstOrThrow()).n);

/**
 * Ends the backend that `run` answered it ran on (from a connection of our own), then runs `run` until it answers
 * again (the statement in flight when the connection goes, if any, fails): the backends before and after.
 */
async function acrossLostConnection(run: (attempt: number) => Promise<number>): Promise<{ before: number; after: number | undefined }> {
  const before = await run(-1);
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1)', [before]);
  } finally {
    await admin.end();
  }
  let after: number | undefined;
  for (let attempt = 0; attempt < 5 && after === undefined; attempt++) after = await run(attempt).catch(() => undefined);
  return { before, after };
}

describe('PostgreSQL driver', { skip }, () => {
  let t: TestDatabase;
  let db: Db;
  before(async () => {
    t = await createTestDatabase();
    db = t.database.db;
  });
  after(() => t.drop());

  test('a read inside a transaction runs on the transaction, seeing its uncommitted writes', async () => {
    const id = newId();
    const seen = await db.transaction().execute(async (tx) => {
      await insertOrganisation(tx, id);
      return tx.selectFrom('organisations').select('id').where('id', '=', id).executeTakeFirst();
    });
    assert.equal(seen?.id, id);
  });

  test('a deferred statement commits with its transaction, even as its only statement', async () => {
    const org = newId();
    await insertOrganisation(db, org);
    await db.transaction().execute(async (tx) => void (await deferredEvent(tx, newId(), org)));
    assert.equal(await countEvents(db, org), 1);
  });

  test('a deferred statement that fails fails the COMMIT, and the whole transaction is rolled back', async () => {
    const org = newId();
    await insertOrganisation(db, org);
    const taken = newId();
    await deferredEvent(db, taken, org);
    const second = newId();
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await insertOrganisation(tx, second);
        await deferredEvent(tx, taken, org); // the same id again: a unique violation, but only at COMMIT
      }),
      (err: { code?: string }) => err.code === '23505',
    );
    assert.equal(await db.selectFrom('organisations').select('id').where('id', '=', second).executeTakeFirst(), undefined);
    assert.equal(await countEvents(db, org), 1);
  });

  test('a deferred statement that fails fails the next statement of its transaction, not a later one', async () => {
    const org = newId();
    await insertOrganisation(db, org);
    const taken = newId();
    await deferredEvent(db, taken, org);
    let reached = false;
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await deferredEvent(tx, taken, org);
        await tx.selectFrom('organisations').select('id').where('id', '=', org).execute();
        reached = true;
      }),
      (err: { code?: string }) => err.code === '23505',
    );
    assert.equal(reached, false);
  });

  /** A rider that reads the organisation's name and fails its check unless it is `expected`. */
  const nameRider = (db: Db, id: string, expected: string) =>
    createRider(db.selectFrom('organisations').select('name').where('id', '=', id).compile(), (rows) => {
      if ((rows[0] as { name?: string } | undefined)?.name !== expected) throw new Error('stale');
    });

  test("a rider goes with the request's first read, whose result waits for the rider's check", async () => {
    const org = newId();
    await insertOrganisation(db, org);
    const passing = nameRider(db, org, 'Driver test');
    const rows = await withRider(passing, () => db.selectFrom('organisations').select('id').where('id', '=', org).execute());
    assert.deepEqual(rows, [{ id: org }]);
    assert.equal(passing.taken, true);
    await passing.outcome;
    const failing = nameRider(db, org, 'Another name');
    await assert.rejects(withRider(failing, () => db.selectFrom('organisations').select('id').where('id', '=', org).execute()), /stale/);
  });

  test("a rider whose check fails rolls its transaction back, before the COMMIT even when it rides with deferred statements only", async () => {
    const org = newId();
    await insertOrganisation(db, org);
    const rider = nameRider(db, org, 'Another name');
    const write = withRider(rider, () =>
      db.transaction().execute(async (tx) => {
        await tx.updateTable('organisations').set({ timezone: 'Europe/Paris' }).where('id', '=', org).execute();
      }),
    );
    await assert.rejects(write, /stale/);
    const row = await db.selectFrom('organisations').select('timezone').where('id', '=', org).executeTakeFirstOrThrow();
    assert.equal(row.timezone, 'UTC');

    const deferredOnly = nameRider(db, org, 'Another name');
    await assert.rejects(withRider(deferredOnly, () => db.transaction().execute(async (tx) => void (await deferredEvent(tx, newId(), org)))), /stale/);
    assert.equal(await countEvents(db, org), 0);
  });

  class Clash extends Error {}
  const asClash = (err: unknown) => (isUniqueViolation(err) ? new Clash('taken') : err);
  const insertOrganisationDeferred = (tx: Db, id: string) =>
    deferredWrite(tx, tx.insertInto('organisations').values({ id, address: `${id}.test`, name: 'Driver test', plan: 'standard', credentials_epoch: 0, timezone: 'UTC', default_language: 'en', created_at: at, updated_at: at }), asClash);

  test("a deferred write's failure surfaces where it is sent, as its caller translated it, and rolls everything back", async () => {
    const taken = newId();
    await insertOrganisation(db, taken);
    const org = newId();
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await insertOrganisation(tx, org);
        await insertOrganisationDeferred(tx, taken); // sent with the COMMIT
      }),
      Clash,
    );
    assert.equal(await db.selectFrom('organisations').select('id').where('id', '=', org).executeTakeFirst(), undefined);
  });

  test("a deferred write is sent before its savepoint's release: its failure undoes that savepoint alone", async () => {
    const taken = newId();
    await insertOrganisation(db, taken);
    const [first, third] = [newId(), newId()];
    const outcomes: string[] = [];
    await db.transaction().execute(async (tx) => {
      for (const id of [first, taken, third]) {
        try {
          await inSavepoint(tx, 'driver_test', () => insertOrganisationDeferred(tx, id));
          outcomes.push('kept');
        } catch (err) {
          outcomes.push(err instanceof Clash ? 'clash' : String(err));
        }
      }
    });
    assert.deepEqual(outcomes, ['kept', 'clash', 'kept']);
    const kept = await db.selectFrom('organisations').select('id').where('id', 'in', [first, third]).execute();
    assert.equal(kept.length, 2);
  });

  test('a transaction lock rides with the first statement of its transaction, never with a read outside it', async () => {
    const [org, other] = [newId(), newId()];
    await insertOrganisation(db, org);
    await insertOrganisation(db, other);
    const key = `driver-test:${org}`;
    // A read outside the transaction does not take the lock; the transaction's first statement does.
    const first = withTransactionLock('postgres', key, async () => {
      await db.selectFrom('organisations').select('id').where('id', '=', org).execute();
      return db.transaction().execute(async (tx) => {
        await tx.updateTable('organisations').set({ name: 'Locked' }).where('id', '=', org).execute();
        // Held now: the same key in another transaction is refused, and its work (on another row: this one is
        // locked by the update above) rolled back.
        await assert.rejects(
          withTransactionLock('postgres', key, () => db.transaction().execute((tx2) => tx2.updateTable('organisations').set({ timezone: 'Europe/Paris' }).where('id', '=', other).execute())),
          LockBusy,
        );
      });
    });
    await first;
    assert.equal((await db.selectFrom('organisations').select('name').where('id', '=', org).executeTakeFirstOrThrow()).name, 'Locked');
    assert.equal((await db.selectFrom('organisations').select('timezone').where('id', '=', other).executeTakeFirstOrThrow()).timezone, 'UTC');
    // Released with its COMMIT.
    await withTransactionLock('postgres', key, () => db.transaction().execute((tx) => tx.updateTable('organisations').set({ timezone: 'Europe/Oslo' }).where('id', '=', org).execute()));
  });

  /** Renames the organisation, as a final statement that refuses its transaction when no row was renamed. */
  const renameFinally = (tx: Db, id: string, name: string) => {
    const query = sql`with u as (update organisations set name = ${name} where id = ${id} returning id)
      select atrium_require(exists(select 1 from u), 'renamed') as held`.compile(tx);
    const translate = (err: unknown) => ((err as { code?: string }).code === 'AT001' ? new FinalStatementRefused({ cause: err }) : err);
    return tx.executeQuery({ ...query, [STATEMENT_HINTS]: { deferrable: false, final: true, translate } } as typeof query);
  };

  test('a final statement goes with its tail and COMMIT where it is offered, and nothing may follow it', async () => {
    const org = newId();
    await insertOrganisation(db, org);
    const tail = () => [eventStatement(db, org)];
    let after: unknown;
    await offerFinalStatement(tail, (offer) =>
      db.transaction().execute(async (tx) => {
        await renameFinally(tx, org, 'Finally');
        assert.equal(offer.used, true);
        after = await tx.selectFrom('organisations').select('id').execute().catch((err: Error) => err);
      }),
    );
    assert.match(String(after), /after its transaction's final statement/);
    assert.equal((await db.selectFrom('organisations').select('name').where('id', '=', org).executeTakeFirstOrThrow()).name, 'Finally');
    assert.equal(await countEvents(db, org), 1, 'the tail committed with it');
  });

  test('a final statement that refuses rolls its transaction back, tail and deferred statements with it; unoffered, it is an ordinary statement', async () => {
    const org = newId();
    await insertOrganisation(db, org);
    await assert.rejects(
      offerFinalStatement(() => [eventStatement(db, org)], () =>
        db.transaction().execute(async (tx) => {
          await deferredEvent(tx, newId(), org);
          await renameFinally(tx, newId(), 'Nobody'); // no such organisation: refused
        }),
      ),
      FinalStatementRefused,
    );
    assert.equal(await countEvents(db, org), 0);
    // Not offered (a keyed write): sent alone, and the transaction goes on to its own COMMIT.
    await db.transaction().execute(async (tx) => {
      await renameFinally(tx, org, 'Unoffered');
      await deferredEvent(tx, newId(), org);
    });
    assert.equal((await db.selectFrom('organisations').select('name').where('id', '=', org).executeTakeFirstOrThrow()).name, 'Unoffered');
    assert.equal(await countEvents(db, org), 1);
  });

  /** A premise rider (as the cached organisation's check is): its statement fails unless the name is `expected`. */
  const premiseRider = (tx: Db, id: string, expected: string) =>
    createRider(sql`select atrium_require(exists(select 1 from organisations where id = ${id} and name = ${expected}), 'test premise') as held`.compile(tx), () => {}, {
      premise: 'test premise',
      refused: (failure) => ((failure as { code?: string }).code === 'AT001' ? new Error('stale premise') : failure),
    });

  describe('a final statement with its riders and tail folded into one statement, without BEGIN or COMMIT (single-statement.ts)', () => {
    let counted: TestDatabase;
    let trips: string[][] = [];
    before(async () => {
      counted = await createTestDatabase('postgres', { onRoundTrip: (statements) => trips.push(statements) });
    });
    after(() => counted.drop());

    /** The rename offered as the final statement, with an event as its tail and `rider` waiting. */
    const renameWith = (rider: ReturnType<typeof premiseRider>, org: string, name: string, final = renameFinally, target = org) =>
      withRider(rider, () => offerFinalStatement(() => [eventStatement(counted.database.db, org)], () => counted.database.db.transaction().execute((tx) => final(tx, target, name))));
    const nameOf = async (org: string) => (await counted.database.db.selectFrom('organisations').select('name').where('id', '=', org).executeTakeFirstOrThrow()).name;

    test('all of it in one round trip, one statement: the change, its tail and the rider, committed together', async () => {
      const org = newId();
      await insertOrganisation(counted.database.db, org);
      const rider = premiseRider(counted.database.db, org, 'Driver test');
      trips = [];
      await renameWith(rider, org, 'Folded');
      assert.equal(trips.length, 1, JSON.stringify(trips));
      assert.equal(trips[0].length, 1);
      assert.match(trips[0][0], /^with .*atrium_tail_0 as \(insert into "outbox_events".*atrium_main as materialized .* where \(select atrium_require/s);
      await rider.outcome;
      assert.equal(await nameOf(org), 'Folded');
      assert.equal(await countEvents(counted.database.db, org), 1);
    });

    test("a rider whose premise fails is the refusal, and nothing of the write is kept; even when the final statement answers no row", async () => {
      const org = newId();
      await insertOrganisation(counted.database.db, org);
      await assert.rejects(renameWith(premiseRider(counted.database.db, org, 'Another name'), org, 'Not kept'), /stale premise/);
      // A final statement whose main query answers nothing: the rider is checked all the same.
      const renameQuietly = (tx: Db, id: string, name: string) => {
        const query = sql`with u as (update organisations set name = ${name} where id = ${id} returning id) select id from u where false`.compile(tx);
        return tx.executeQuery({ ...query, [STATEMENT_HINTS]: { deferrable: false, final: true } } as typeof query);
      };
      await assert.rejects(renameWith(premiseRider(counted.database.db, org, 'Another name'), org, 'Not kept either', renameQuietly), /stale premise/);
      assert.equal(await nameOf(org), 'Driver test');
      assert.equal(await countEvents(counted.database.db, org), 0);
    });

    test('a prepared read and its rider are one statement; a failing rider is the refusal', async () => {
      const org = newId();
      await insertOrganisation(counted.database.db, org);
      const nameById = preparedQuery((db: Db, id: string) => db.selectFrom('organisations').select('name').where('id', '=', id));
      trips = [];
      const rows = await withRider(premiseRider(counted.database.db, org, 'Driver test'), () => nameById(counted.database.db, org));
      assert.deepEqual(rows, [{ name: 'Driver test' }]);
      assert.equal(trips.length, 1);
      assert.match(trips[0][0], /^with atrium_main as materialized \(select "name" from "organisations".*\) select atrium_main\.\* from atrium_main where \(select atrium_require/s);
      await assert.rejects(withRider(premiseRider(counted.database.db, org, 'Another name'), () => nameById(counted.database.db, org)), /stale premise/);
    });

    test('a folded write whose prepared form a migration outdated runs again on a fresh connection: no failure at all', async () => {
      const db = counted.database.db;
      const table = `probe_${newId().replaceAll('-', '')}`;
      await sql`create table ${sql.table(table)} (id int primary key, note text)`.execute(db);
      await sql`insert into ${sql.table(table)} values (1, 'a')`.execute(db);
      // Run as a request's write is (operation-runner.ts): again, whole, if a migration outdated its statement.
      const touch = (note: string) =>
        againIfPlansOutdated(() =>
          offerFinalStatement(() => [], () =>
            db.transaction().execute(async (tx) => {
              const query = sql`with u as (update ${sql.table(table)} set note = ${note} where id = 1 returning *) select * from u`.compile(tx);
              return (await tx.executeQuery({ ...query, [STATEMENT_HINTS]: { deferrable: false, final: true } } as typeof query)).rows;
            }),
          ),
        );
      // Prepared on several of the pool's connections (transactions at once take several).
      await Promise.all(Array.from({ length: 6 }, (_, i) => touch(`before ${i}`)));
      await sql`alter table ${sql.table(table)} add column extra text`.execute(db);
      const after = await Promise.all(Array.from({ length: 6 }, (_, i) => touch(`after ${i}`)));
      for (const rows of after) assert.deepEqual(Object.keys(rows[0] as object).sort(), ['extra', 'id', 'note']);
      await sql`drop table ${sql.table(table)}`.execute(db);
    });

    test("the final statement's own refusal leaves the rider unchecked, for the full path's first statement to take", async () => {
      const org = newId();
      await insertOrganisation(counted.database.db, org);
      const rider = premiseRider(counted.database.db, org, 'Driver test');
      await assert.rejects(renameWith(rider, org, 'Nobody', renameFinally, newId()), FinalStatementRefused);
      assert.equal(rider.taken, false);
      assert.equal(await countEvents(counted.database.db, org), 0);
      // The full path then: a statement of a new transaction takes it.
      await withRider(rider, () => counted.database.db.transaction().execute((tx) => tx.updateTable('organisations').set({ name: 'Full path' }).where('id', '=', org).execute()));
      await rider.outcome;
      assert.equal(await nameOf(org), 'Full path');
    });
  });

  describe('one-statement writes on the shared writers, committed in groups (shared-connections.ts, pg-group-commit.ts)', () => {
    /**
     * A rename folded into one statement (no rider, no tail), answering the backend and the transaction that ran
     * it; after `sleepMs` in the statement, if given.
     */
    const renameRunning = async (id: string, name: string, sleepMs = 0) =>
      offerFinalStatement(() => [], () =>
        db.transaction().execute(async (tx) => {
          const query = sql<{ pid: number; xid: string }>`with s as (select pg_sleep(${sleepMs / 1000}::float8)), u as (update organisations set name = ${name} where id = ${id} returning id)
            select pg_backend_pid() as pid, pg_current_xact_id()::text as xid from u cross join s`.compile(tx);
          const rows = (await tx.executeQuery({ ...query, [STATEMENT_HINTS]: { deferrable: false, final: true } } as typeof query)).rows;
          assert.equal(rows.length, 1, `renamed ${id}`);
          return rows[0];
        }),
      );
    /** The same, answering the backend alone. */
    const renameAlone = async (id: string, name: string) => (await renameRunning(id, name)).pid;
    const nameOf = async (id: string) => (await db.selectFrom('organisations').select('name').where('id', '=', id).executeTakeFirstOrThrow()).name;
    const organisations = async (n: number) => {
      const ids = Array.from({ length: n }, () => newId());
      for (const id of ids) await insertOrganisation(db, id);
      return ids;
    };

    test('the writes of one turn are committed together: one backend, one transaction; a lone write has its own', async () => {
      const ids = await organisations(4);
      const ran = await Promise.all(ids.map((id, i) => renameRunning(id, `Together ${i}`)));
      assert.equal(new Set(ran.map((r) => r.pid)).size, 1, `one backend: ${JSON.stringify(ran)}`);
      assert.equal(new Set(ran.map((r) => r.xid)).size, 1, `one transaction: ${JSON.stringify(ran)}`);
      for (const [i, id] of ids.entries()) assert.equal(await nameOf(id), `Together ${i}`);
      const later = await renameRunning(ids[0], 'Later');
      assert.notEqual(later.xid, ran[0].xid);
    });

    test("no write of a group is answered before the group's COMMIT: when the first answers, the slow one is committed too", async () => {
      const [quick, slow] = await organisations(2);
      const slowRename = renameRunning(slow, 'Slow, committed', 150);
      const quickRan = await renameRunning(quick, 'Quick');
      // Read as another process would: what is committed now.
      const other = t.reopen();
      try {
        const { name } = await other.db.selectFrom('organisations').select('name').where('id', '=', slow).executeTakeFirstOrThrow();
        assert.equal(name, 'Slow, committed', 'the slow write of the group was committed before the quick one was answered');
      } finally {
        await other.close();
      }
      assert.equal((await slowRename).xid, quickRan.xid);
    });

    test('a premise refused in a group is that write\'s refusal alone: the others of the group are committed', async () => {
      const [kept, alsoKept] = await organisations(2);
      const refused = offerFinalStatement(() => [], () => db.transaction().execute((tx) => renameFinally(tx, newId(), 'Nobody')));
      const first = renameAlone(kept, 'Kept');
      const second = renameAlone(alsoKept, 'Also kept');
      await assert.rejects(refused, FinalStatementRefused);
      await Promise.all([first, second]);
      assert.equal(await nameOf(kept), 'Kept');
      assert.equal(await nameOf(alsoKept), 'Also kept');
    });

    test('writes the writers have run before leave as one batch (one Sync, pg-shaped-query.ts batchOn): one transaction, and a refusal in it is still its write\'s alone', async () => {
      // Counts the batches node-postgres is handed (observed, not replaced).
      const query = pg.Client.prototype.query;
      let batches = 0;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        if ((args[0] as object | undefined)?.constructor?.name === 'ShapedBatch') batches++;
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      try {
        const ids = await organisations(3);
        // Each round runs every shape on whichever writer takes it: from the second or third on, both have run them.
        for (let round = 0; round < 4; round++) {
          const ran = await Promise.all(ids.map((id, i) => renameRunning(id, `Round ${round} ${i}`)));
          assert.equal(new Set(ran.map((r) => r.xid)).size, 1, `one transaction in round ${round}`);
          const refused = offerFinalStatement(() => [], () => db.transaction().execute((tx) => renameFinally(tx, newId(), 'Nobody')));
          const [first, second] = [renameAlone(ids[0], `Kept ${round}`), renameAlone(ids[1], `Also kept ${round}`)];
          await assert.rejects(refused, FinalStatementRefused);
          await Promise.all([first, second]);
          assert.deepEqual([await nameOf(ids[0]), await nameOf(ids[1]), await nameOf(ids[2])], [`Kept ${round}`, `Also kept ${round}`, `Round ${round} 2`]);
        }
        assert.ok(batches >= 2, `groups went as batches (${batches})`);
      } finally {
        pg.Client.prototype.query = query;
      }
    });

    test('a write that takes a transaction lock is never grouped (never folded): in a transaction of its own, the lock is its alone', async () => {
      const [a, b] = await organisations(2);
      // Two keys, so that both may take theirs: in one transaction, either would also have the other's.
      const under = (id: string) => withTransactionLock('postgres', `group-commit-${id}`, () => renameRunning(id, 'Under a lock'));
      const [ranA, ranB] = await Promise.all([under(a), under(b)]);
      assert.notEqual(ranA.xid, ranB.xid);
      assert.equal(await nameOf(a), 'Under a lock');
      assert.equal(await nameOf(b), 'Under a lock');
    });

    test('a write that fails in a group fails alone: the others of its group commit', async () => {
      const [first, second] = await organisations(2);
      const taken = newId();
      await deferredEvent(db, taken, first);
      // An event with an id already taken, folded with a rename of the first organisation: a unique violation.
      const failing = offerFinalStatement(() => [deferredEvent.compile(db, taken, first)], () =>
        db.transaction().execute((tx) => renameFinally(tx, first, 'Not kept')),
      );
      const passing = renameAlone(second, 'Kept');
      await assert.rejects(failing, (err: { code?: string }) => err.code === '23505');
      await passing;
      assert.equal(await nameOf(first), 'Driver test');
      assert.equal(await nameOf(second), 'Kept');
      assert.equal(await countEvents(db, first), 1);
    });

    test('a write that fails before it reaches PostgreSQL fails alone; the others of its group are committed once', async () => {
      const [kept, notKept] = await organisations(2);
      // A value node-postgres cannot send (it fails to serialise it while it binds the statement).
      const unsendable: Record<string, unknown> = {};
      unsendable.self = unsendable;
      const failing = offerFinalStatement(() => [], () => db.transaction().execute((tx) => renameFinally(tx, notKept, unsendable as unknown as string)));
      // Its event has an id of its own: were the write sent twice, the second would fail on it.
      const passing = offerFinalStatement(() => [eventStatement(db, kept)], () => db.transaction().execute((tx) => renameFinally(tx, kept, 'Kept once')));
      await assert.rejects(failing, /circular/i);
      await passing;
      assert.equal(await nameOf(kept), 'Kept once');
      assert.equal(await nameOf(notKept), 'Driver test');
      assert.equal(await countEvents(db, kept), 1);
    });

    test('a shared write connection that was lost is replaced; writes go on', async () => {
      const [id] = await organisations(1);
      const { before, after } = await acrossLostConnection((attempt) => renameAlone(id, attempt < 0 ? 'Before' : `After ${attempt}`));
      assert.ok(after !== undefined && after !== before, `writes run on a new backend (before ${before}, after ${after})`);
      assert.match(await nameOf(id), /^After \d$/);
    });

    test('a write that waits for a row lock gives way to the writes sent behind it, and runs on a pooled connection once the lock is free', async () => {
      const [locked, free] = await organisations(2);
      // A transaction elsewhere holds the row until it is told to end.
      let end!: () => void;
      const ended = new Promise<void>((resolve) => (end = resolve));
      let lockTaken!: () => void;
      const taken = new Promise<void>((resolve) => (lockTaken = resolve));
      const holder = db.transaction().execute(async (tx) => {
        await tx.selectFrom('organisations').select('id').where('id', '=', locked).forUpdate().execute();
        lockTaken();
        await ended;
      });
      await taken;
      try {
        // In one turn, so on one writer, the blocked write first.
        let blockedDone = false;
        const blocked = renameAlone(locked, 'After the lock').finally(() => (blockedDone = true));
        // Held up until the lock is free, it would never answer: the lock is freed only after it.
        const heldUp = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the write behind the blocked one was held up')), WRITER_LOCK_TIMEOUT_MS + 2_000).unref());
        const writerPid = await Promise.race([renameAlone(free, 'Not held up'), heldUp]);
        await new Promise((resolve) => setTimeout(resolve, 2 * WRITER_LOCK_TIMEOUT_MS));
        assert.equal(blockedDone, false, 'the blocked write waits for the lock, on a connection of its own');
        end();
        const pooledPid = await blocked;
        assert.notEqual(pooledPid, writerPid, 'it ran again on a connection of its own');
      } finally {
        end();
        await holder;
      }
      assert.equal(await nameOf(locked), 'After the lock');
      assert.equal(await nameOf(free), 'Not held up');
    });
  });

  test('a final statement is prepared once per connection: named by its text, the same name for the same text', async () => {
    const org = newId();
    await insertOrganisation(db, org);
    // Ten renames, each in a transaction of its own; then, on the connection of another, what it has prepared.
    for (let i = 0; i < 10; i++) await db.transaction().execute((tx) => renameFinally(tx, org, `Prepared ${i}`));
    const prepared = await db.transaction().execute(async (tx) => {
      await renameFinally(tx, org, 'Prepared last');
      return (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements where name like 'atrium_f%'`.execute(tx)).rows;
    });
    // The rename alone (the folded form, with a tail, is another text): prepared once, under one name.
    const renames = prepared.filter((p) => p.statement.startsWith('with u as (update organisations set name') && !p.statement.includes('atrium_main'));
    assert.equal(renames.length, 1, JSON.stringify(prepared));
    assert.equal(new Set(prepared.map((p) => p.statement)).size, prepared.length, 'one name a text');
    assert.equal((await db.selectFrom('organisations').select('name').where('id', '=', org).executeTakeFirstOrThrow()).name, 'Prepared last');
  });

  test('a prepared statement that outlived a change of its table (a migration of the next release) fails once in the pool at most, and not again when its transaction runs again; a plain read not even once', async () => {
    const table = `probe_${newId().replaceAll('-', '')}`;
    await sql`create table ${sql.table(table)} (id int)`.execute(db);
    await sql`insert into ${sql.table(table)} values (1)`.execute(db);
    // `select *`, named: parsed once per connection, its result's columns fixed then.
    const probe = { ...db.selectFrom(table as never).selectAll().compile(), [STATEMENT_HINTS]: { name: `atrium_test_${table}`, deferrable: false } } as CompiledQuery;
    const inTransaction = () => db.transaction().execute((tx) => tx.executeQuery(probe));
    const outcome = (run: Promise<unknown>) => run.then(() => 'ok', (err: { code?: string }) => err.code);
    assert.equal((await db.executeQuery(probe)).rows.length, 1);
    // Parsed on six of the pool's connections: six transactions at once each take one.
    await Promise.all(Array.from({ length: 6 }, inTransaction));
    await sql`alter table ${sql.table(table)} add column note text`.execute(db);

    // A plain read, on a shared connection that had parsed it: run again on a new one.
    assert.deepEqual((await db.executeQuery(probe)).rows, [{ id: 1, note: null }]);
    // In a transaction the statement fails where it ran; after that refusal no connection that had parsed it is
    // lent again, so six at once all run on connections that parse it afresh.
    assert.equal(await outcome(inTransaction()), '0A000');
    assert.deepEqual(await Promise.all(Array.from({ length: 6 }, () => outcome(inTransaction()))), Array(6).fill('ok'));
    // Run by againIfPlansOutdated (as a request's write is), a transaction refused that way runs again, and its
    // second run finds a fresh connection.
    await sql`alter table ${sql.table(table)} add column more text`.execute(db);
    const rows = (await againIfPlansOutdated(inTransaction)).rows;
    assert.deepEqual(rows, [{ id: 1, note: null, more: null }]);
    await sql`drop table ${sql.table(table)}`.execute(db);
  });

  test('migrating leaves no advisory lock behind: another process may migrate at once', async () => {
    // The database was migrated by createTestDatabase over this pool, whose connections are still open.
    await migrateToLatest(db);
    const other = new pg.Client({ connectionString: testDatabaseUrl });
    await other.connect();
    try {
      const { rows } = await other.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [KYSELY_MIGRATION_LOCK_ID]);
      assert.equal(rows[0].locked, true, "Kysely's migration lock is free");
    } finally {
      await other.end();
    }
  });

  test('a migration that fails fails with its own error, leaves nothing of it and no lock; the next run goes on', async () => {
    const schema = `failing_${newId().replaceAll('-', '')}`;
    await sql`create schema ${sql.id(schema)}`.execute(db);
    const migrations = {
      '1-table': { up: (on: Kysely<any>) => on.schema.createTable(`${schema}.made`).addColumn('id', 'integer').execute() },
      '2-broken': { up: async (on: Kysely<any>) => void (await sql`select * from ${sql.id(schema)}.no_such_table`.execute(on)) },
    };
    // As migrate.ts runs it: one transaction, the migrator inside it.
    const run = (only: Record<string, Migration>) =>
      db.transaction().execute(async (tx) => {
        const migrator = new Migrator({ db: tx, provider: { getMigrations: async () => only }, migrationTableSchema: schema, migrationTableName: 'm', migrationLockTableName: 'm_lock' });
        const { error } = await migrator.migrateToLatest();
        if (error) throw error;
      });
    await assert.rejects(run(migrations), /relation ".*no_such_table" does not exist/);
    const other = new pg.Client({ connectionString: testDatabaseUrl });
    await other.connect();
    try {
      const { rows } = await other.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [KYSELY_MIGRATION_LOCK_ID]);
      assert.equal(rows[0].locked, true, 'the migration lock is free');
      await other.query('select pg_advisory_unlock($1::bigint)', [KYSELY_MIGRATION_LOCK_ID]);
      assert.equal((await other.query('select 1 from information_schema.tables where table_schema = $1', [schema])).rowCount, 0, 'nothing of the run stays');
    } finally {
      await other.end();
    }
    await run({ '1-table': migrations['1-table'] });
    assert.equal((await sql<{ n: number }>`select count(*)::int as n from ${sql.id(schema)}.made`.execute(db)).rows[0].n, 0);
    await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  });

  test('a shared read connection that was lost is replaced; reads go on', async () => {
    // The backend serving plain reads, asked through a plain read.
    const pidOf = async () => (await db.selectNoFrom(sql<number>`pg_backend_pid()`.as('pid')).executeTakeFirstOrThrow()).pid;
    const { before, after } = await acrossLostConnection(pidOf);
    assert.ok(after !== undefined && after !== before, `reads run on a new backend (before ${before}, after ${after})`);
  });
});
