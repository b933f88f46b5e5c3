// Loaded into a server process with `node --import` by the memory bench (bench/memory.ts) and the start-up
// modules test (test/startup-modules.test.ts): it records which packages under node_modules the process loads
// (every file, whether imported or required, passes through the load hook) and, asked over the IPC channel
// the parent opened, answers with them and the process's memory. Nothing of it is in the service itself.
import { registerHooks } from 'node:module';

export interface ProbeReply {
  /** process.memoryUsage(), in bytes. */
  memory: NodeJS.MemoryUsage;
  /** Names of the packages (`fastify`, `@fastify/static`) whose files were loaded so far, sorted. */
  packages: string[];
}

const packages = new Set<string>();
const PACKAGE = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g;

registerHooks({
  load(url, context, nextLoad) {
    // The innermost node_modules names the package (a nested copy is that package, not its parent).
    const name = [...url.matchAll(PACKAGE)].at(-1)?.[1];
    if (name !== undefined) packages.add(decodeURIComponent(name));
    return nextLoad(url, context);
  },
});

if (process.send) {
  process.on('message', (message) => {
    if (message !== 'probe') return;
    const reply: ProbeReply = { memory: process.memoryUsage(), packages: [...packages].sort() };
    process.send!(reply);
  });
  // The channel must not keep the process alive, nor change how it shuts down.
  process.channel?.unref();
}
