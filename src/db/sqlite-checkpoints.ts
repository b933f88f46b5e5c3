// SQLite's checkpoints, moved off the event loop while writes are sustained (docs/decisions.md, "a thread
// checkpoints"). In WAL mode SQLite copies the log back into the database file every 1,000 pages by default,
// inside the COMMIT that crosses the mark, with two fsyncs: 8-20 ms here, during which the event loop serves
// nobody (bench/README.md, `node bench/sqlite-stalls.ts`). Under a sustained write load that is a stall every
// fraction of a second.
//
// So, while the commits come at `startAtCommitsPerSecond` or more, a worker thread with a connection of its own
// checkpoints every `intervalMs` (PASSIVE: it neither waits for a writer nor blocks one), and the service's
// connection checkpoints nothing itself (`wal_autocheckpoint = 0`). PASSIVE alone would let the log grow without
// end (writes that go on during a checkpoint keep it from starting over), so once it holds `restartAtFrames`
// the service holds its writes (they wait on the group commit's lock, off the event loop; SQLite's busy handler
// would sleep on it) while the thread's RESTART copies the little that is left and starts the log over. When the
// commits have stayed below the rate for `idleSeconds`, the thread is stopped and SQLite's own checkpoint is
// back. A thread costs memory (its isolate: about 20 MB), so a process that writes little never starts one, and
// one at rest has none. A thread that fails gives the checkpoints back to SQLite at once.
import { Worker } from 'node:worker_threads';
import type { DatabaseSync } from 'node:sqlite';

export interface CheckpointThreadOptions {
  /** Commits per second (group commits: sqlite-group-commit.ts) at or above which the thread runs. */
  startAtCommitsPerSecond: number;
  /** Seconds below that rate after which it stops. */
  idleSeconds: number;
  /** How often the thread checkpoints, in ms. */
  intervalMs: number;
  /**
   * Frames in the log past which the thread's checkpoint also starts the log over (RESTART: new writers wait
   * for it, briefly, the earlier checkpoints having copied nearly everything). A PASSIVE checkpoint alone never
   * lets the log start over while writes go on during it: it would grow without end.
   */
  restartAtFrames: number;
  /** How often the commit rate is read, in ms (tests shorten it; the rate is scaled to per second). */
  sampleMs: number;
}

export const CHECKPOINT_THREAD: CheckpointThreadOptions = { startAtCommitsPerSecond: 200, idleSeconds: 30, intervalMs: 500, restartAtFrames: 4000, sampleMs: 1000 };

/** After a thread failed, how long before another may start: a cause that persists is reported once a minute. */
const RETRY_AFTER_FAILURE_MS = 60_000;

/** SQLite's own default, restored whenever no thread checkpoints. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

// Plain JavaScript, evaluated in the thread: nothing to load, so the thread costs what an isolate costs. It tells
// the service what each checkpoint that copied something found (the frames in the log, and how many of them are
// now in the database file); when the log is long, it asks the service to hold its writes ('restart'), and once
// told 'go', starts the log over (RESTART: with no writer, it waits only for the turn's readers) and says so.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
let copied = -1;
let asked = false;
const report = (result, restarted) => {
  const log = Number(result.log);
  const checkpointed = Number(result.checkpointed);
  if (restarted || (checkpointed > 0 && checkpointed !== copied)) parentPort.postMessage({ log, checkpointed, restarted });
  copied = checkpointed;
};
const timer = setInterval(() => {
  if (asked) return;
  const result = passive.get();
  report(result, false);
  if (Number(result.log) >= workerData.restartAtFrames) {
    asked = true;
    parentPort.postMessage('restart');
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'go') {
    report(restart.get(), true);
    asked = false;
  }
  if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
parentPort.postMessage('ready');
`;

/** What the thread's checkpoints did so far. */
export interface CheckpointStats {
  /** Checkpoints that copied frames. */
  checkpoints: number;
  /** The last of them: frames in the log, and frames copied into the database file. */
  last?: { log: number; checkpointed: number };
  /** Times the log was started over (RESTART), the service's writes held meanwhile. */
  restarts: number;
}

/** What the thread needs of the service's side of the database. */
export interface CheckpointedConnection {
  connection: DatabaseSync;
  file: string;
  /** Commits so far (sqlite-group-commit.ts). */
  commits(): number;
  /**
   * Holds the connection against writes until the returned function is called (the group commit's lock: writes
   * wait for it without blocking the event loop; reads go on).
   */
  holdWrites(): Promise<() => void>;
}

/** The longest the service's writes wait for one RESTART: past it they go on, and the log starts over later. */
const RESTART_HOLD_LIMIT_MS = 2000;

export interface CheckpointThread {
  /** Whether a thread checkpoints now (and the connection's own checkpoints are off). */
  readonly running: boolean;
  readonly stats: Readonly<CheckpointStats>;
  close(): Promise<void>;
}

/** Who hears of the thread: a thread that failed (SQLite checkpoints again meanwhile), and when one runs or ends. */
export interface CheckpointReports {
  failed?(err: Error): void;
  running?(running: boolean): void;
}

/** Watches the connection's commits and runs the checkpoint thread for its file while they come at the start rate or more. */
export function watchCheckpoints(database: CheckpointedConnection, reports: CheckpointReports, options: CheckpointThreadOptions = CHECKPOINT_THREAD): CheckpointThread {
  const { connection, file, commits } = database;
  let worker: Worker | undefined;
  let ready = false;
  let quietSince: number | undefined;
  let lastCommits = commits();
  let closed = false;
  let startsAfter = 0;
  const stats: CheckpointStats = { checkpoints: 0, restarts: 0 };
  /** Lets the writes go again, when they are held for a RESTART. */
  let letWritesGo: (() => void) | undefined;

  const writesGo = () => {
    const go = letWritesGo;
    letWritesGo = undefined;
    go?.();
  };

  /** Holds the writes, then tells the thread to start the log over; writes go again on its answer (or after the limit). */
  async function restartFor(thread: Worker): Promise<void> {
    const letGo = await database.holdWrites();
    if (worker !== thread) return letGo();
    const limit = setTimeout(writesGo, RESTART_HOLD_LIMIT_MS);
    letWritesGo = () => {
      clearTimeout(limit);
      letGo();
    };
    thread.postMessage('go');
  }

  /** No thread checkpoints any more: SQLite's own checkpoints are back. */
  function handBack(): void {
    worker = undefined;
    if (ready) reports.running?.(false);
    ready = false;
    writesGo();
    if (connection.isOpen) connection.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }

  function stop(): Promise<void> {
    const stopping = worker;
    handBack();
    if (stopping === undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      stopping.once('exit', () => resolve());
      // Held by its exit from here: a close that waits for it is not cut short by a loop with nothing else to do.
      stopping.ref();
      stopping.postMessage('stop');
    });
  }

  function start(): void {
    const started = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { file, intervalMs: options.intervalMs, restartAtFrames: options.restartAtFrames },
      // The service's node flags (--max-old-space-size and the like) are not the thread's to take.
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    // A process that ends without closing its database is not held up by the thread (a checkpoint cut short is
    // one SQLite finishes later).
    started.unref();
    worker = started;
    started.on('message', (message: unknown) => {
      if (worker !== started) return;
      if (message === 'ready') {
        ready = true;
        connection.exec('PRAGMA wal_autocheckpoint = 0');
        reports.running?.(true);
        return;
      }
      if (message === 'restart') {
        restartFor(started).catch((err: Error) => reports.failed?.(err));
        return;
      }
      const { log, checkpointed, restarted } = message as { log: number; checkpointed: number; restarted: boolean };
      if (restarted) {
        stats.restarts++;
        writesGo();
      }
      if (checkpointed > 0) {
        stats.checkpoints++;
        stats.last = { log, checkpointed };
      }
    });
    // 'exit' follows 'error'; a thread that ends by itself (it should not) hands the checkpoints back as well.
    started.on('error', (err) => {
      if (worker !== started) return;
      startsAfter = Date.now() + RETRY_AFTER_FAILURE_MS;
      reports.failed?.(err);
    });
    started.on('exit', () => {
      if (worker === started) handBack();
    });
  }

  const sample = setInterval(() => {
    const now = commits();
    const perSecond = ((now - lastCommits) * 1000) / options.sampleMs;
    lastCommits = now;
    if (perSecond >= options.startAtCommitsPerSecond) {
      quietSince = undefined;
      if (worker === undefined && !closed && Date.now() >= startsAfter) start();
      return;
    }
    if (worker === undefined) return;
    quietSince ??= Date.now();
    if (Date.now() - quietSince >= options.idleSeconds * 1000) void stop();
  }, options.sampleMs);
  sample.unref();

  return {
    get running() {
      return ready;
    },
    stats,
    close() {
      closed = true;
      clearInterval(sample);
      return stop();
    },
  };
}
