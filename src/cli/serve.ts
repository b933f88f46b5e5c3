// `atrium serve`: the same process as `npm start`.
import type { Command } from './command.ts';

export const serveCommand: Command = {
  words: ['serve'],
  synopsis: '',
  options: {},
  async run(_args, ctx) {
    // Imported here, not at the top: the server pulls in Fastify and every operation, which the
    // one-shot commands do not need and should not wait for.
    const { serve } = await import('../main.ts');
    await serve(ctx.config);
    return undefined;
  },
};
