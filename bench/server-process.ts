// Parent side of bench/server.ts: starts the server process on a database target, waits for it to be
// ready, asks it for its CPU time, and stops it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { DialectName } from '../src/db/database.ts';
import type { DatabaseTarget } from './databases.ts';
import type { Fixture } from './seed.ts';

export interface CpuSample {
  /** Microseconds of user plus system CPU. */
  micros: number;
  /** Of them, user time. */
  userMicros: number;
  rss: number;
  /** The process's voluntary context switches so far: each a time it had nothing to do and slept. */
  sleeps: number;
}

export interface ServerHandle {
  dialect: DialectName;
  pid: number;
  url: string;
  fixture: Fixture;
  cpu(): Promise<CpuSample>;
  /** Milliseconds the server took to insert `count` lesson pages raw in one transaction (bench/raw-lesson-pages.ts). */
  rawLessonPages(count: number, round: string): Promise<number>;
  /** A CPU profile of the server from now until profileStop (bench/profiler.ts). */
  profileStart(): Promise<void>;
  profileStop(file: string): Promise<void>;
  /** Any other command of bench/server.ts: one line out, its one JSON reply back (an `error` member fails). */
  command(line: string): Promise<Record<string, unknown>>;
  /** Lines the app has logged so far (its stdout, read and dropped here as a log collector would). */
  logLines(): number;
  stop(): Promise<void>;
}

const serverEntry = path.join(import.meta.dirname, 'server.ts');
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

// Variables bench/server.ts reads; cleared first so that, say, a PostgreSQL URL in the caller's environment
// cannot turn the SQLite run into a second PostgreSQL run.
const serverVariables = ['DATA_DIR', 'BENCH_DATABASE_URL', 'BENCH_PG_SCHEMA', 'DATABASE_URL'];

/** `entry`: another checkout's bench/server.ts, to measure two versions side by side (bench/compare.ts); it must answer on fd 3 as this one does. */
export async function startServer(target: DatabaseTarget, entry = serverEntry): Promise<ServerHandle> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of serverVariables) delete env[name];
  Object.assign(env, target.env);
  // stdout is the app's log, fd 3 the protocol's replies.
  const child = spawn(process.execPath, [entry], { env, stdio: ['pipe', 'pipe', 'inherit', 'pipe'] });
  let logLines = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) logLines++;
  });
  const replies = child.stdio[3] as NodeJS.ReadableStream;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  // Replies come back in the order the questions went out, so a queue of waiters is enough.
  const waiters: Array<(message: Record<string, unknown>) => void> = [];
  let onReady: ((message: Record<string, unknown>) => void) | undefined;
  readline.createInterface({ input: replies }).on('line', (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      process.stderr.write(`[bench server] ${line}\n`);
      return;
    }
    if (message.ready) onReady?.(message);
    else waiters.shift()?.(message);
  });

  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench server (${target.dialect}) not ready after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    onReady = (message) => {
      clearTimeout(timer);
      resolve(message);
    };
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`bench server (${target.dialect}) exited with code ${code} before it was ready`));
    });
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });

  const ask = (command: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      waiters.push(resolve);
      child.stdin!.write(command + '\n');
    });
  const command = async (line: string) => {
    const reply = await ask(line);
    if (typeof reply.error === 'string') throw new Error(`bench server: ${line.split(' ')[0]} failed: ${reply.error}`);
    return reply;
  };

  return {
    dialect: ready.dialect as DialectName,
    pid: child.pid!,
    url: `http://127.0.0.1:${ready.port as number}`,
    fixture: ready.fixture as Fixture,
    async cpu() {
      const reply = (await ask('cpu')) as { cpu: { user: number; system: number }; rss: number; sleeps: number };
      return { micros: reply.cpu.user + reply.cpu.system, userMicros: reply.cpu.user, rss: reply.rss, sleeps: reply.sleeps };
    },
    async rawLessonPages(count, round) {
      return (await command(`raw-lesson-pages ${count} ${round}`)).rawMs as number;
    },
    async profileStart() {
      await command('profile-start');
    },
    async profileStop(file) {
      await command(`profile-stop ${file}`);
    },
    command,
    logLines: () => logLines,
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin!.end('stop\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const code = await exited;
      clearTimeout(timer);
      if (code !== 0) throw new Error(`bench server (${target.dialect}) exited with code ${code}`);
    },
  };
}
