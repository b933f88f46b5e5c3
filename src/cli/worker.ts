// `atrium worker`: the background jobs alone (sending scheduled email messages, …), without the HTTP API —
// for running workers apart from API processes. Same as `atrium serve` with ATRIUM_ROLES=worker.
import type { Command } from './command.ts';

export const workerCommand: Command = {
  words: ['worker'],
  synopsis: '',
  options: {},
  async run(_args, ctx) {
    // Imported here, as `serve` does: the one-shot commands should not load the server.
    const { serve } = await import('../main.ts');
    await serve(ctx.config, new Set(['worker']));
    return undefined;
  },
};
