// `atrium api-key create|revoke`: keys for integrations, issued by an operator on a person's behalf.
import { isUuid } from '../operations/schemas.ts';
import type { Command } from './command.ts';
import { ApiError } from '../errors/api-error.ts';
import { UsageError } from './errors.ts';
import { findOrganisation, findPerson } from './lookup.ts';

const modes = ['live', 'test'] as const;

const create: Command = {
  words: ['api-key', 'create'],
  synopsis: `--org HOST --person EMAIL --scopes s1,s2 [--mode ${modes.join('|')}] [--service-version YYYY-MM-DD] [--name N]`,
  options: {
    org: { type: 'string' },
    person: { type: 'string' },
    scopes: { type: 'string' },
    mode: { type: 'string' },
    'service-version': { type: 'string' },
    name: { type: 'string' },
  },
  async run(args, ctx) {
    const host = args.required('org');
    const email = args.required('person');
    const scopes = args.requiredList('scopes');
    const mode = args.choice('mode', modes);
    const serviceVersion = args.string('service-version');
    const { services } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    const person = await findPerson(services, org, email);
    // Unknown scopes and revisions are the service's to refuse (a 422 ApiError naming its field → exit 1).
    const { id, key } = await services.apiKeys.create({ organisationId: org.id, personId: person.id, name: args.string('name') ?? 'atrium CLI', scopes, mode, serviceVersion });
    return { json: { id, key }, text: `Created API key ${id} for ${person.email} in ${org.address} (shown once, store it now): ${key}` };
  },
};

const revoke: Command = {
  words: ['api-key', 'revoke'],
  synopsis: '--org HOST --id ID',
  options: { org: { type: 'string' }, id: { type: 'string' } },
  async run(args, ctx) {
    const host = args.required('org');
    const id = args.required('id');
    // Checked before the query: PostgreSQL would refuse a non-UUID with a type error rather than find nothing.
    if (!isUuid(id)) throw new UsageError(`--id must be an API key id (a UUID); got ${JSON.stringify(id)}`, { name: 'id', code: 'invalid_format' });
    const { services } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    if (!(await services.apiKeys.revoke(org.id, id))) throw new ApiError('cli.api_key_not_found', `no unrevoked API key ${id} in organisation ${org.address}`);
    return { json: { id, revoked: true }, text: `Revoked API key ${id} in ${org.address}.` };
  },
};

export const apiKeyCommands: Command[] = [create, revoke];
