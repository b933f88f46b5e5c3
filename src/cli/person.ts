// `atrium person create|set-password|remove`: the first people of an organisation (there is no sign-up), e.g.
// its administrator, their passwords for signing in, and removing someone who has left. Creating and removing
// go through the users service, as the REST API and /admin/people do, so the same rules hold here: an e-mail
// address taken in any letter case, an unknown role, removing the last active administrator are refused.
import type { Static } from 'typebox';
import { text } from 'node:stream/consumers';
import { generatePassword, hashPassword } from '../crypto/passwords.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import { MIN_PASSWORD_LENGTH } from '../domain/people/people.service.ts';
import { fieldError, ApiError } from '../errors/api-error.ts';
import { CreateUser } from '../domain/users/users.schemas.ts';
import { operatorAuthority } from '../domain/users/users.service.ts';
import type { Command } from './command.ts';
import { UsageError } from './errors.ts';
import { findOrganisation, findPerson } from './lookup.ts';

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
    const password = args.string('password');
    if (password !== undefined && [...password].length < MIN_PASSWORD_LENGTH) throw fieldError('/password', 'too_short', `a password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const input = validateAsBody<Static<typeof CreateUser>>(CreateUser, { email, name, roles });
    const { services, database } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    const operator = { isPlatformAdmin: args.flag('platform-admin'), ...(password !== undefined ? { passwordHash: await hashPassword(password) } : {}) };
    const { id } = await database.db.transaction().execute((tx) => services.users.create(tx, org.id, operatorAuthority, input, operator));
    return { json: { id }, text: `Created person ${id} (${email}) in ${org.address}.` };
  },
};

const setPassword: Command = {
  words: ['person', 'set-password'],
  synopsis: '--org HOST --email E [--generate]   (the new password on standard input, unless --generate)',
  options: { org: { type: 'string' }, email: { type: 'string' }, generate: { type: 'boolean' } },
  fieldOptions: { password: 'stdin' },
  async run(args, ctx) {
    const host = args.required('org');
    const email = args.required('email');
    // From standard input, not an option: an option is visible to other local users in the process list.
    let password = args.flag('generate') ? generatePassword() : (await text(process.stdin)).replace(/\r?\n$/, '');
    if (password === '') throw new UsageError('give the new password on standard input, or --generate one');
    const { services } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    const person = await findPerson(services, org, email);
    // Too short a password is the service's to refuse (an ApiError at /password → exit 1).
    await services.people.setPassword(org.id, person.id, password);
    const shown = args.flag('generate') ? password : undefined;
    password = '';
    return {
      json: { id: person.id, ...(shown ? { password: shown } : {}) },
      text: `Set the password of ${person.email} in ${org.address}; their sessions have ended.${shown ? ` New password (shown once): ${shown}` : ''}`,
    };
  },
};

const remove: Command = {
  words: ['person', 'remove'],
  synopsis: '--org HOST --email E',
  options: { org: { type: 'string' }, email: { type: 'string' } },
  async run(args, ctx) {
    const host = args.required('org');
    const email = args.required('email');
    const { services, database } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    const person = await findPerson(services, org, email);
    // Not the last active administrator: the service refuses it (ApiError user.last_admin → exit 1).
    await database.db.transaction().execute((tx) => services.users.remove(tx, org.id, operatorAuthority, person.id));
    return { json: { id: person.id, removed: true }, text: `Removed ${person.email} from ${org.address}: their sessions, API keys and tokens no longer work.` };
  },
};

export const personCommands: Command[] = [create, setPassword, remove];
