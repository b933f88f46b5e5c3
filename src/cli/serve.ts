// `atrium serve`: the same process as `npm start`.
import type { Role } from '../config.ts';
import type { Command } from './command.ts';

/** A command that runs the long-lived process: with `roles`, only those (the worker alone); else as configured. */
export function serverCommand(word: string, roles?: ReadonlySet<Role>): Command {
  return {
    words: [word],
    synopsis: '',
    options: {},
    async run(_args, ctx) {
      // Imported here, not at the top: the server pulls in Fastify and every operation, which the
      // one-shot commands do not need and should not wait for.
      const { serve } = await import('../main.ts');
      await serve(ctx.config, roles);
      return undefined;
    },
  };
}

export const serveCommand = serverCommand('serve');
