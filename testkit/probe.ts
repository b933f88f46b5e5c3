// The parent's side of process-probe.ts: the `node` arguments that load it, and the question over IPC. The
// child must be spawned with an IPC channel (`stdio: [..., 'ipc']`).
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ProbeReply } from './process-probe.ts';

export type { ProbeReply };

/** Put before the script: `node ...PROBE_ARGS src/main.ts`. */
export const PROBE_ARGS = ['--import', path.join(import.meta.dirname, 'process-probe.ts')];

/** The child's memory now and the packages it has loaded. One question at a time. */
export function askProbe(child: ChildProcess, timeoutMs = 10_000): Promise<ProbeReply> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`the process probe did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: unknown) => {
      clearTimeout(timer);
      resolve(message as ProbeReply);
    };
    child.once('message', onMessage);
    child.send('probe');
  });
}
