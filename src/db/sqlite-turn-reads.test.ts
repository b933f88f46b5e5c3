// The direct reads of one turn of the event loop share one read transaction on SQLite (sqlite-adapter.ts,
// readInTurn), on a real file, against a second connection to it: the turn's reads see one snapshot, which ends
// with the turn; any other statement (a write, a group's BEGIN) ends it first, so this process always reads its
// own writes; a read that fails ends it too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DatabaseSync } from 'node:sqlite';
import { sql } from 'kysely';
import type { Database, Db } from './database.ts';
import { openNotesFile, type NotesFile } from '../../test/support/sqlite-file.ts';
import { preparedQuery } from './prepared.ts';

// Prepared reads run directly (direct-statements.ts): the path every hot read takes.
const readNotes = preparedQuery((db: Db) => db.selectFrom('notes' as never).select('text' as never).orderBy('text' as never));
const texts = async (db: Db) => ((await readNotes(db)) as Array<{ text: string }>).map((r) => r.text);
// The same read, its rows shared by the turn's callers (prepared.ts, sharedInTurn).
const readNotesShared = preparedQuery((db: Db, from: string) => db.selectFrom('notes' as never).select('text' as never).where('text' as never, '>=', from as never).orderBy('text' as never), { sharedInTurn: true });
const sharedTexts = (rows: unknown) => (rows as Array<{ text: string }>).map((r) => r.text);
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('SQLite: the reads of one turn share one read transaction', () => {
  let file: NotesFile;
  let database: Database;
  let other: DatabaseSync;

  before(async () => {
    file = await openNotesFile('turn-reads');
    ({ database, other } = file);
  });
  after(() => file.dispose());

  test("a turn's reads see one snapshot; another connection's commit is seen from the next turn on", async () => {
    const { db } = database;
    await nextTurn();
    const first = readNotes(db);
    // The same turn: node:sqlite is synchronous, so the read above has run and holds the turn's snapshot.
    other.exec("insert into notes (text) values ('from another process')");
    const second = readNotes(db);
    assert.deepEqual(await first, []);
    assert.deepEqual(await second, [], 'the same turn reads the same snapshot');
    await nextTurn();
    assert.deepEqual(await texts(db), ['from another process'], 'the next turn reads a new one');
    // Once the turn is over its transaction has let the lock go: a checkpoint that must wait for every reader
    // (TRUNCATE) is not kept waiting.
    await nextTurn();
    assert.equal((other.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number }).busy, 0);
  });

  test('a write in the turn ends its read transaction first: the read after it sees the write', async () => {
    const { db } = database;
    await nextTurn();
    assert.ok(!(await texts(db)).includes('mine'));
    // Through Kysely's queue (not a group): the turn's read must not swallow it into its transaction.
    await sql`insert into notes (text) values ('mine')`.execute(db);
    assert.ok((await texts(db)).includes('mine'));
    // A group's transaction, asked for in a turn whose read is open, begins and commits as ever.
    const before = await texts(db);
    await db.transaction().execute((tx) => sql`insert into notes (text) values ('grouped')`.execute(tx));
    assert.deepEqual(await texts(db), [...before, 'grouped'].sort());
    await nextTurn();
    // Nothing is left open: another connection sees every write, committed.
    assert.deepEqual(
      (other.prepare("select text from notes where text in ('mine', 'grouped') order by text").all() as Array<{ text: string }>).map((r) => r.text),
      ['grouped', 'mine'],
    );
  });

  test("a shared read runs once a turn for the same arguments; a write in the turn, or the next turn, reads again", async () => {
    const { db } = database;
    await nextTurn();
    const first = readNotesShared.now(db, 'shared');
    assert.equal(readNotesShared.now(db, 'shared'), first, 'the same turn and arguments: the same rows');
    assert.notEqual(readNotesShared.now(db, 'shared-b'), first, 'other arguments: a read of their own');
    // Another connection's commit is not in this turn's snapshot, shared or not.
    other.exec("insert into notes (text) values ('shared by another')");
    assert.deepEqual(sharedTexts(readNotesShared.now(db, 'shared')), sharedTexts(first));
    await nextTurn();
    // Another read opens the next turn's snapshot first: what the last turn shared is gone with its own.
    readNotesShared.now(db, 'shared-b');
    const next = readNotesShared.now(db, 'shared');
    assert.notEqual(next, first, 'the next turn reads again');
    assert.deepEqual(sharedTexts(next), ['shared by another']);
    // This process's own write, in the same turn, ends the snapshot and what it shared.
    let turned = false;
    setImmediate(() => (turned = true));
    await sql`insert into notes (text) values ('shared mine')`.execute(db);
    assert.deepEqual(sharedTexts(readNotesShared.now(db, 'shared')), ['shared by another', 'shared mine']);
    assert.ok(!turned, 'the write and the read after it ran in the turn of the read before it');
  });

  test('a read that fails ends the read transaction with it; the next read runs', async () => {
    const { db } = database;
    // Fails as it runs, not as it is prepared.
    const broken = preparedQuery((d: Db) => d.selectNoFrom(sql<string>`json('{not json')`.as('x')));
    await nextTurn();
    await texts(db);
    await assert.rejects(broken(db), /malformed JSON/);
    other.exec("insert into notes (text) values ('after the failure')");
    assert.ok((await texts(db)).includes('after the failure'), 'the failed read ended the snapshot');
  });
});
