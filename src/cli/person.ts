// `atrium person create`: the first people of an organisation (there is no sign-up), e.g. its administrator.
import type { Command } from './command.ts';
import { findOrganisation } from './lookup.ts';

const create: Command = {
  words: ['person', 'create'],
  synopsis: `--org HOST --email E --name N --roles r1,r2 [--platform-admin] [--password P]`,
  options: {
    org: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    roles: { type: 'string' },
    'platform-admin': { type: 'boolean' },
    password: { type: 'string' },
  },
  async run(args, ctx) {
    const host = args.required('org');
    const email = args.required('email');
    const name = args.required('name');
    const roles = args.requiredList('roles');
    const { services } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    // Unknown roles and duplicate e-mails are the service's to refuse (InvalidPersonRequest → exit 1).
    const { id } = await services.people.create({
      organisationId: org.id,
      email,
      name,
      roles,
      isPlatformAdmin: args.flag('platform-admin'),
      password: args.string('password'),
    });
    return { json: { id }, text: `Created person ${id} (${email}) in ${org.address}.` };
  },
};

export const personCommands: Command[] = [create];
