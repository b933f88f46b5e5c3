// `atrium org create|update`: organisations are made and re-planned by operators, never through the API.
import { isUniqueViolation } from '../db/errors.ts';
import { normaliseAddress, plans } from '../domain/organisations/organisations.service.ts';
import type { Command } from './command.ts';
import { ApiError } from '../errors/api-error.ts';
import { UsageError } from './errors.ts';
import { unknownOrganisation } from './lookup.ts';

// The address is matched against request Host headers, so it must be something a Host header can carry:
// a DNS name or a bracketed IPv6 literal. The service stores whatever it is given, hence the check here.
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

function address(raw: string): string {
  const normalised = normaliseAddress(raw);
  if (!HOST_NAME.test(normalised)) throw new UsageError(`--address must be a host name; got ${JSON.stringify(raw)}`, { name: 'address', code: 'invalid_format' });
  return normalised;
}

const create: Command = {
  words: ['org', 'create'],
  synopsis: `--address HOST --name NAME [--plan ${plans.join('|')}]`,
  options: { address: { type: 'string' }, name: { type: 'string' }, plan: { type: 'string' } },
  async run(args, ctx) {
    const input = { address: address(args.required('address')), name: args.required('name'), plan: args.choice('plan', plans) };
    const { services } = await ctx.runtime();
    const taken = () => new ApiError('cli.address_taken', `an organisation at address ${input.address} exists already`);
    if (await services.organisations.findByAddress(input.address)) throw taken();
    try {
      const org = await services.organisations.create(input);
      return { json: { id: org.id, address: org.address }, text: `Created organisation ${org.id} at ${org.address} (plan ${org.plan}).` };
    } catch (err) {
      // Another process may have taken the address between the check and the insert.
      if (isUniqueViolation(err)) throw taken();
      throw err;
    }
  },
};

const update: Command = {
  words: ['org', 'update'],
  synopsis: `--address HOST [--plan ${plans.join('|')}] [--name NAME]`,
  options: { address: { type: 'string' }, name: { type: 'string' }, plan: { type: 'string' } },
  async run(args, ctx) {
    const host = args.required('address');
    const patch = { ...withValue('plan', args.choice('plan', plans)), ...withValue('name', args.string('name')) };
    if (Object.keys(patch).length === 0) throw new UsageError('nothing to change: give --plan or --name');
    const { services } = await ctx.runtime();
    const org = await services.organisations.update(host, patch);
    if (!org) throw unknownOrganisation(host);
    return {
      json: { id: org.id, address: org.address, name: org.name, plan: org.plan },
      text: `Updated organisation ${org.address}: name ${JSON.stringify(org.name)}, plan ${org.plan}.`,
    };
  },
};

/** `{ key: value }` when the option was given, `{}` otherwise, so an absent option never overwrites. */
function withValue<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

export const orgCommands: Command[] = [create, update];
