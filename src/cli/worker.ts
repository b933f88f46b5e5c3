// `atrium worker`: the background jobs alone (sending scheduled email messages, …), without the HTTP API —
// for running workers apart from API processes. Same as `atrium serve` with ATRIUM_ROLES=worker.
import { serverCommand } from './serve.ts';

export const workerCommand = serverCommand('worker', new Set(['worker']));
