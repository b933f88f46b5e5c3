// `atrium oauth-client create`: registers an OAuth client, as the admin page does (the same service and rules).
import { scopes as allScopes } from '../access/capabilities.ts';
import { CreateOAuthClient, oauthGrantTypes } from '../auth/oauth/clients.schemas.ts';
import type { CreateOAuthClientInput } from '../auth/oauth/clients.service.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import type { Command } from './command.ts';
import { findOrganisation, findPerson } from './lookup.ts';

const types = ['confidential', 'public'] as const;

const create: Command = {
  words: ['oauth-client', 'create'],
  synopsis: `--org HOST --name N --type ${types.join('|')} [--redirect-uri U]… [--grants ${oauthGrantTypes.join(',')}] [--scopes s1,s2] [--person E]`,
  options: {
    org: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    grants: { type: 'string' },
    scopes: { type: 'string' },
    person: { type: 'string' },
  },
  fieldOptions: { redirect_uris: '--redirect-uri', grant_types: '--grants', service_person_id: '--person' },
  async run(args, ctx) {
    const host = args.required('org');
    const name = args.required('name');
    const type = args.choice('type', types);
    if (type === undefined) args.required('type');
    const personEmail = args.string('person');
    const { services } = await ctx.runtime();
    const org = await findOrganisation(services, host);
    const servicePerson = personEmail === undefined ? undefined : await findPerson(services, org, personEmail);
    // The same schema and rules as the admin page's form: a refusal names the option's field (exit 1).
    const input = validateAsBody<CreateOAuthClientInput>(CreateOAuthClient, {
      name,
      type,
      redirect_uris: args.many('redirect-uri'),
      grant_types: args.list('grants') ?? ['authorization_code'],
      scopes: args.list('scopes') ?? [...allScopes],
      ...(servicePerson ? { service_person_id: servicePerson.id } : {}),
    });
    const client = await services.oauthClients.create(org.id, null, input);
    const secret = client.client_secret;
    return {
      json: { client_id: client.client_id, ...(secret ? { client_secret: secret } : {}) },
      text: `Registered ${type} OAuth client ${client.client_id} in ${org.address}${secret ? ` (secret shown once, store it now): ${secret}` : ' (public: no secret)'}.`,
    };
  },
};

export const oauthClientCommands: Command[] = [create];
