// SQLite's checkpoints in a thread while writes are sustained (sqlite-checkpoints.ts), on a real file with a real
// worker thread: sustained commits start it and turn the connection's own checkpoints off; its checkpoints copy the
// log into the database file; once the writes stop it ends and SQLite's own checkpoints are back; closing the
// database ends it; a thread that fails hands the checkpoints back at once and is reported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { watchCheckpoints, type CheckpointThreadOptions } from './sqlite-checkpoints.ts';
import { openNotesFile, type NotesFile } from '../../test/support/sqlite-file.ts';

// Rates and times small enough for a test: 20 commits a second start it, half a second without them ends it.
const quick: CheckpointThreadOptions = { startAtCommitsPerSecond: 20, idleSeconds: 0.5, intervalMs: 20, restartAtFrames: 50, sampleMs: 100 };

const autocheckpoint = async (db: Db) => ((await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(db)).rows[0]!.wal_autocheckpoint);

async function until(what: string, condition: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

describe('SQLite: checkpoints in a thread while writes are sustained', () => {
  let file: NotesFile;
  let written = 0;
  /** A turn's worth of writes: ten transactions, which the group commit makes one commit. */
  const writeTurn = (db: Db) => Promise.all(Array.from({ length: 10 }, () => db.transaction().execute((tx) => sql`insert into notes (text) values (${`note ${++written}`})`.execute(tx))));
  /** Writes turn after turn, `pauseMs` apart, until the function it returns is called (which waits for the last). */
  function keepWriting(db: Db, pauseMs: number): () => Promise<void> {
    let writing = true;
    const writes = (async () => {
      while (writing) {
        await writeTurn(db);
        if (pauseMs > 0) await sleep(pauseMs);
      }
    })();
    return () => {
      writing = false;
      return writes;
    };
  }

  /** What the database told of the thread: true when it started, false when it ended. */
  const reported: boolean[] = [];

  before(async () => {
    file = await openNotesFile('checkpoints', { checkpointThread: quick, onCheckpointThread: { running: (running) => reported.push(running) } });
  });
  after(() => file.dispose());

  test('sustained commits start the thread, whose checkpoints copy the log into the file; SQLite’s own are off meanwhile', async () => {
    const { db, checkpoints } = file.database;
    assert.ok(checkpoints);
    assert.equal(checkpoints.running, false, 'no thread before any write');
    assert.equal(await autocheckpoint(db), 1000);

    const stopWriting = keepWriting(db, 2);
    try {
      await until('the thread runs', () => checkpoints.running);
      assert.equal(await autocheckpoint(db), 0, "the connection's own checkpoints are off while the thread runs");
      await until('a checkpoint copied frames', () => (checkpoints.stats.last?.checkpointed ?? 0) > 0);
    } finally {
      await stopWriting();
    }
    const copied = checkpoints.stats.last!;
    assert.ok(copied.checkpointed <= copied.log);
    assert.ok(checkpoints.stats.checkpoints >= 1);

    await until('the thread has stopped after the writes', () => !checkpoints.running, 3000);
    assert.equal(await autocheckpoint(db), 1000, "SQLite's own checkpoints are back");
    assert.deepEqual(reported, [true, false], 'its start and its end are reported (the serving process logs them)');
    // Nothing was lost on the way.
    assert.equal(Number((file.other.prepare('select count(*) as n from notes').get() as { n: number }).n), written);
  });

  test('the log starts over while the writes go on: it does not grow with them', async () => {
    const busy = await openNotesFile('checkpoints-restart', { checkpointThread: quick });
    const { db, checkpoints } = busy.database;
    const commitsBefore = busy.database.commitStats!().commits;
    // No pause between turns: a PASSIVE checkpoint never finds the log caught up when a writer begins.
    const stopWriting = keepWriting(db, 0);
    try {
      await until('the thread runs', () => checkpoints!.running);
      await sleep(1000);
    } finally {
      await stopWriting();
    }
    const commits = busy.database.commitStats!().commits - commitsBefore;
    // Every commit writes at least one page (4 KB) to the log, which a log that never started over would hold
    // (11-19 MB here without the RESTART). Before the thread starts, SQLite's own checkpoint lets it reach 1,000
    // pages; after, it stays far below that. The file keeps its longest length, which on a quick machine (8,000-9,000
    // commits in the second) reached 1,000-2,100 pages: so the bound is twice SQLite's own mark or a third of the
    // pages the commits wrote, whichever is more; a log that grew with the writes would hold all of them.
    const logBytes = fs.statSync(`${busy.file}-wal`).size;
    assert.ok(commits > 500, `enough commits to tell (${commits})`);
    const bound = Math.max(2000, Math.ceil(commits / 3)) * 4096;
    assert.ok(logBytes < bound, `the log (${logBytes} bytes, after ${commits} commits) stays within ${bound} bytes`);
    assert.ok(checkpoints!.stats.restarts > 0);
    await busy.dispose();
  });

  test('closing the database ends a running thread', async () => {
    const closing = await openNotesFile('checkpoints-close', { checkpointThread: quick });
    const { db, checkpoints } = closing.database;
    const stopWriting = keepWriting(db, 2);
    try {
      await until('the thread runs', () => checkpoints!.running);
    } finally {
      await stopWriting();
    }
    // dispose() closes the database: it resolves only once the thread has exited.
    await closing.dispose();
    assert.equal(checkpoints!.running, false);
  });
});

describe('SQLite: a checkpoint thread that fails', () => {
  let dir: string;
  let connection: DatabaseSync;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-checkpoint-fails-'));
    connection = new DatabaseSync(path.join(dir, 'db.sqlite'));
    connection.exec('PRAGMA journal_mode = WAL');
  });
  after(() => {
    connection.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('hands the checkpoints back to SQLite at once, and is reported once, not started again at every sample', async () => {
    let commits = 0;
    const failures: Error[] = [];
    // The thread cannot open this file (its directory does not exist), so it fails as it starts.
    const watcher = watchCheckpoints(
      { connection, file: path.join(dir, 'missing', 'db.sqlite'), commits: () => (commits += 1000), holdWrites: async () => () => {} },
      { failed: (err) => failures.push(err) },
      quick,
    );
    try {
      await until('the failure is reported', () => failures.length > 0);
      assert.equal(watcher.running, false);
      assert.equal((connection.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 1000);
      await sleep(quick.sampleMs * 4);
      assert.equal(failures.length, 1, 'the commits still come fast, but no second thread was started yet');
    } finally {
      await watcher.close();
    }
  });
});
