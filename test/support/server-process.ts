// A real server process (`node src/main.ts`) for tests of what only a process shows: start-up before the
// database, signals, exit codes. It listens on an ephemeral port, learnt from its `atrium listening` log line.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export const serverEntry = path.join(import.meta.dirname, '..', '..', 'src', 'main.ts');

export interface ServerProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:port`, once the listener is open. */
  url: Promise<string>;
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  /** Every line the process wrote so far, on either stream (stderr is passed on to ours as well). */
  output: Array<{ stream: 'stdout' | 'stderr'; line: string }>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGKILL if it has not exited after `timeoutMs`) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

/**
 * `args`: what node runs, `src/main.ts` unless told otherwise (the `atrium` command, say: `bin/atrium.js serve`).
 * `ipc`: open an IPC channel to the child (for testkit/probe.ts).
 */
export function startServerProcess(env: Record<string, string>, args: string[] = [serverEntry], options: { ipc?: boolean } = {}): ServerProcess {
  const child = spawn(process.execPath, args, {
    // Its log is how the test learns the port, so LOG_LEVEL is info whatever `env` says.
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', DEV_BOOTSTRAP: 'false', ...env, LOG_LEVEL: 'info' },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const output: ServerProcess['output'] = [];
  child.stderr!.pipe(process.stderr, { end: false });
  readline.createInterface({ input: child.stderr! }).on('line', (line) => output.push({ stream: 'stderr', line }));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs: Array<Record<string, unknown>> = [];
  const url = new Promise<string>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`the server exited (${code}) before it listened`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push({ stream: 'stdout', line });
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === 'atrium listening') resolve(entry.address as string);
    });
  });
  url.catch(() => {});
  return {
    child,
    url,
    logs,
    output,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
