// `atrium seed demo`: fills an organisation with demo content so every operation can be tried at once.
import { ApiError } from '../errors/api-error.ts';
import type { Command } from './command.ts';
import { findOrganisation } from './lookup.ts';
import { demoSteps, type SeedContext } from './seed-demo.ts';

const demo: Command = {
  words: ['seed', 'demo'],
  synopsis: '--org HOST',
  options: { org: { type: 'string' } },
  async run(args, ctx) {
    const host = args.required('org');
    const { database, services } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    let counts: Record<string, number>;
    try {
      counts = await database.db.transaction().execute(async (trx) => {
        const seed: SeedContext = { db: trx, services, organisationId: org.id, created: {} };
        for (const step of demoSteps) seed.created[step.collection] = await step.run(seed);
        return Object.fromEntries(Object.entries(seed.created).map(([collection, made]) => [collection, made.size]));
      });
    } catch (err) {
      // The demo rows carry fixed external ids, so a second run collides on the first row and rolls back.
      if (err instanceof ApiError && err.code === 'resource.external_id_taken') throw new ApiError(err.code, `${org.address} already holds the demo content (${err.message})`);
      throw err;
    }
    const described = Object.entries(counts).map(([collection, n]) => `${n} ${collection}`).join(', ');
    return { json: { organisation: { id: org.id, address: org.address }, created: counts }, text: `Seeded ${org.address}: ${described}.` };
  },
};

export const seedCommands: Command[] = [demo];
