// The group commit (sqlite-group-commit.ts) on a real SQLite file, checked from a second connection to the same
// file, which sees only what was committed: transactions asked for in one turn share one commit, without
// savepoints until one fails after a change (the group then runs again, each in a savepoint); a failing one is
// undone alone; nobody is answered before the commit; a failure that SQLite turns into a rollback of the whole
// transaction fails every caller of the group and loses no later one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Database, Db } from './database.ts';
import { openNotesFile, type NotesFile } from '../../test/support/sqlite-file.ts';
import { inSavepoint } from './savepoints.ts';
import { isDatabaseUnavailable } from './availability.ts';

const note = (db: Db, text: string) => sql`insert into notes (text) values (${text})`.execute(db);

describe('SQLite group commit', () => {
  let file: NotesFile;
  let database: Database;
  /** The notes another connection sees: committed ones only. */
  const committed = () => (file.other.prepare('select text from notes order by text').all() as Array<{ text: string }>).map((r) => r.text);
  /** What each transaction answered: its value, or its failure's message. */
  const outcomesOf = (results: PromiseSettledResult<string>[]) => results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message));
  /** Counts from now: the answer tells the commits made since, and the transactions they carried. */
  const countCommits = () => {
    const before = database.commitStats!();
    return () => {
      const after = database.commitStats!();
      return { commits: after.commits - before.commits, transactions: after.transactions - before.transactions };
    };
  };

  before(async () => {
    file = await openNotesFile('group');
    database = file.database;
  });
  after(() => file.dispose());

  /** A transaction writing the notes `<name> 1` and `<name> 2`, then failing if asked to; answers its name. */
  const run = (name: string, fail: boolean) =>
    database.db.transaction().execute(async (tx) => {
      await note(tx, `${name} 1`);
      // A nested savepoint inside the body (as a bulk request opens per operation).
      await inSavepoint(tx, 'op', () => note(tx, `${name} 2`));
      if (fail) throw new Error(`${name} fails`);
      return name;
    });

  test('a failing transaction in a group is undone alone; the others commit, once, before any caller hears', async () => {
    const commitsSince = countCommits();
    const heard: string[][] = [];
    const outcomes = Promise.allSettled(['a', 'b', 'c', 'd'].map((name) => run(name, name === 'c').then((value) => (heard.push(committed()), value))));
    const results = await outcomes;
    assert.deepEqual(outcomesOf(results), ['a', 'b', 'c fails', 'd']);
    assert.deepEqual(committed(), ['a 1', 'a 2', 'b 1', 'b 2', 'd 1', 'd 2']);
    // Each caller was answered once every write of the group could be seen from outside: after its commit.
    for (const seen of heard) assert.deepEqual(seen, ['a 1', 'a 2', 'b 1', 'b 2', 'd 1', 'd 2']);
    assert.deepEqual(commitsSince(), { commits: 1, transactions: 3 });
  });

  test('the first transactions of a group failing after a change are undone whole, and the rest commit', async () => {
    const start = committed();
    const commitsSince = countCommits();
    const results = await Promise.allSettled([run('e', true), run('f', true), run('g', false), run('h', true), run('i', false)]);
    assert.deepEqual(outcomesOf(results), ['e fails', 'f fails', 'g', 'h fails', 'i']);
    assert.deepEqual(committed(), [...start, 'g 1', 'g 2', 'i 1', 'i 2'].sort());
    assert.deepEqual(commitsSince(), { commits: 1, transactions: 2 });
    // A transaction alone in its group that fails leaves nothing, and no transaction open: the next one commits.
    await assert.rejects(run('j', true), /j fails/);
    assert.equal(await run('k', false), 'k');
    assert.deepEqual(committed(), [...start, 'g 1', 'g 2', 'i 1', 'i 2', 'k 1', 'k 2'].sort());
  });

  /** A transaction counting its runs in `runs` under `name`. */
  const counted = (runs: Map<string, number>, name: string, body: (tx: Db) => Promise<unknown>) =>
    database.db.transaction().execute(async (tx) => {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      await body(tx);
      return name;
    });

  test('a transaction that fails having changed nothing is refused alone: the others run once, in one commit', async () => {
    const start = committed();
    const commitsSince = countCommits();
    const runs = new Map<string, number>();
    const results = await Promise.allSettled([
      counted(runs, 'l', (tx) => note(tx, 'l')),
      // Its one write refused (the note is l's, in the same transaction): SQLite undoes the statement by itself.
      counted(runs, 'm', (tx) => note(tx, 'l')),
      counted(runs, 'n', async (tx) => {
        await sql`select text from notes`.execute(tx);
        throw new Error('n fails');
      }),
      counted(runs, 'o', (tx) => note(tx, 'o')),
    ]);
    const outcomes = outcomesOf(results);
    assert.match(outcomes[1], /UNIQUE/);
    assert.deepEqual([outcomes[0], outcomes[2], outcomes[3]], ['l', 'n fails', 'o']);
    assert.deepEqual(committed(), [...start, 'l', 'o'].sort());
    assert.deepEqual(Object.fromEntries(runs), { l: 1, m: 1, n: 1, o: 1 }, 'no transaction ran twice');
    assert.deepEqual(commitsSince(), { commits: 1, transactions: 2 });
  });

  test('a transaction that fails after a change undoes the group, whose others run again and commit once', async () => {
    const start = committed();
    const commitsSince = countCommits();
    const runs = new Map<string, number>();
    const results = await Promise.allSettled([
      counted(runs, 'p', (tx) => note(tx, 'p')),
      counted(runs, 'q', async (tx) => {
        await note(tx, 'q');
        throw new Error('q fails');
      }),
      counted(runs, 'r', (tx) => note(tx, 'r')),
      counted(runs, 's', async (tx) => {
        await note(tx, 's');
        throw new Error('s fails');
      }),
      counted(runs, 't', (tx) => note(tx, 't')),
    ]);
    assert.deepEqual(outcomesOf(results), ['p', 'q fails', 'r', 's fails', 't']);
    assert.deepEqual(committed(), [...start, 'p', 'r', 't'].sort());
    // p ran before q's failure and again after it; from then on each body has its savepoint, so s fails alone.
    assert.deepEqual(Object.fromEntries(runs), { p: 2, q: 1, r: 1, s: 1, t: 1 });
    assert.deepEqual(commitsSince(), { commits: 1, transactions: 3 });
  });

  test('writes that keep arriving turn after turn share one commit; the wait for more is bounded', async () => {
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const write = (text: string) => database.db.transaction().execute((tx) => note(tx, text));
    /**
     * Two writes in one turn of the event loop (two requests read from their sockets in the same turn: under load,
     * more will come), then one a turn for `more` turns.
     */
    const underLoad = async (prefix: string, more: number) => {
      const writes = [write(`${prefix} a`), write(`${prefix} b`)];
      for (let i = 0; i < more; i++) {
        await nextTurn();
        writes.push(write(`${prefix} ${i}`));
      }
      await Promise.all(writes);
    };
    const commitsFor = async (writes: () => Promise<unknown>) => {
      const commitsSince = countCommits();
      await writes();
      return commitsSince();
    };
    // The group waits while each turn brings another write: four over three turns go in one commit.
    assert.deepEqual(await commitsFor(() => underLoad('turn', 2)), { commits: 1, transactions: 4 });
    // It does not wait for ever: a write every turn still commits every few turns.
    const steady = await commitsFor(() => underLoad('steady', 20));
    assert.equal(steady.transactions, 22);
    assert.ok(steady.commits >= 4, `22 writes over 21 turns took ${steady.commits} commits; a group waits 4 turns at most`);
    // A write alone in its turn does not wait for company: it has committed when the turn ends.
    let committedSoon = false;
    const lone = write('lone').then(() => (committedSoon = true));
    await nextTurn();
    assert.ok(committedSoon, 'a lone write commits at the end of its turn');
    await lone;
  });

  test('a read outside the group waits for its commit and never sees its uncommitted rows', async () => {
    const { db } = database;
    let inside: () => void = () => {};
    const holding = new Promise<void>((resolve) => (inside = resolve));
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const writing = db.transaction().execute(async (tx) => {
      await note(tx, 'pending');
      inside();
      await released;
    });
    await holding;
    let read: string[] | undefined;
    const reading = sql<{ text: string }>`select text from notes where text = 'pending'`.execute(db).then((r) => (read = r.rows.map((row) => row.text)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(read, undefined, 'the read waits while the group is open');
    release();
    await writing;
    await reading;
    assert.deepEqual(read, ['pending']);
  });

  test('a statement left running after its transaction ended is refused, not run in another transaction', async () => {
    const { db } = database;
    let leaked: Db | undefined;
    await db.transaction().execute(async (tx) => {
      leaked = tx;
    });
    await assert.rejects(note(leaked!, 'late'), /after its transaction ended/);
    assert.ok(!committed().includes('late'));
  });

  test('SQLite rolling the whole transaction back (disk full) fails every caller of the group; the next group commits', async () => {
    const { db } = database;
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0].page_count;
    await sql.raw(`pragma max_page_count = ${pages + 2}`).execute(db);
    try {
      const small = db.transaction().execute((tx) => note(tx, 'small'));
      const big = db.transaction().execute((tx) => note(tx, 'x'.repeat(200_000)));
      const [smallOutcome, bigOutcome] = await Promise.allSettled([small, big]);
      assert.equal(smallOutcome.status, 'rejected');
      assert.equal(bigOutcome.status, 'rejected');
      assert.ok(isDatabaseUnavailable((smallOutcome as PromiseRejectedResult).reason), 'the small write fails as the database being unavailable (a 502), with the big one');
      assert.ok(!committed().includes('small'));
    } finally {
      await sql.raw('pragma max_page_count = 1073741823').execute(db);
    }
    await db.transaction().execute((tx) => note(tx, 'after'));
    assert.ok(committed().includes('after'));
  });
});
