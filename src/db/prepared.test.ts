// Prepared queries (prepared.ts) on the database under test: a read outside any transaction never sees another
// transaction's uncommitted rows, and every statement still reaches `onQuery`. On SQLite an idle connection
// answers a prepared read at once, without Kysely; a read issued while a transaction is open must wait for it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompiledQuery } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../test/support/harness.ts';
import { newId } from '../ids.ts';
import type { Db } from './database.ts';
import { preparedQuery } from './prepared.ts';

const at = '2026-11-25T12:00:00.000Z';
const nameQuery = preparedQuery((db: Db, id: string) => db.selectFrom('organisations').select('name').where('id', '=', id));
/** The names read. */
const nameOf = async (db: Db, id: string) => (await nameQuery(db, id)).map((row) => row.name);
const rename = (db: Db, id: string, name: string) => db.updateTable('organisations').set({ name }).where('id', '=', id).execute();
/** A write without RETURNING, whose count of changes `changes` answers: only a name that differs is written. */
const renameIfDifferent = preparedQuery((db: Db, id: string, name: string) => db.updateTable('organisations').set({ name }).where('id', '=', id).where('name', '<>', name));

describe('prepared queries', () => {
  let t: TestDatabase;
  const seen: string[] = [];
  const id = newId();

  before(async () => {
    t = await createTestDatabase(undefined, { onQuery: (query: CompiledQuery) => void seen.push(query.sql) });
    await t.database.db.insertInto('organisations').values({ id, address: `${id}.test`, name: 'Committed', plan: 'standard', credentials_epoch: 0, timezone: 'UTC', default_language: 'en', created_at: at, updated_at: at }).execute();
  });
  after(() => t.drop());

  test('a read issued while another transaction is open sees only committed rows, also once that transaction rolls back', async () => {
    const { db } = t.database;
    let during: Promise<string[]> | undefined;
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await rename(tx, id, 'Uncommitted');
        during = nameOf(db, id);
        // Give a queued read every chance to run early: it must not.
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await during, ['Committed']);
  });

  test('outside a transaction a read sees the latest commit, and onQuery sees it', async () => {
    const { db } = t.database;
    await rename(db, id, 'Renamed');
    seen.length = 0;
    assert.deepEqual(await nameOf(db, id), ['Renamed']);
    assert.equal(seen.length, 1);
    assert.match(seen[0], /select "name" from "organisations"/);
  });

  test('inside a transaction a read sees that transaction’s own rows', async () => {
    const { db } = t.database;
    await db.transaction().execute(async (tx) => {
      await rename(tx, id, 'Mine');
      assert.deepEqual(await nameOf(tx, id), ['Mine']);
    });
  });

  test('changes: how many rows a write changed, at once in a SQLite transaction, else its promise', async () => {
    const { db } = t.database;
    const counted = await db.transaction().execute(async (tx) => {
      const answers = [];
      // One after another: the second finds the name already so, the third no such row.
      for (const target of [id, id, newId()]) {
        const answer = renameIfDifferent.changes(tx, target, 'Counted');
        if (t.database.dialect === 'sqlite') assert.equal(typeof answer, 'number', 'a SQLite transaction answers at once');
        answers.push(await answer);
      }
      return answers;
    });
    assert.deepEqual(counted, [1, 0, 0]);
    // Outside a transaction, through Kysely: a promise on either database.
    const outside = renameIfDifferent.changes(db, id, 'Outside');
    assert.ok(outside instanceof Promise);
    assert.equal(await outside, 1);
    assert.deepEqual(await nameOf(db, id), ['Outside']);
  });
});
