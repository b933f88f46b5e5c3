// GET and PATCH /organisation: the caller's organisation and its settings (docs/api-guide.md#users-roles-and-the-organisation).
import Type, { type Static } from 'typebox';
import { fieldError } from '../../errors/api-error.ts';
import { defineOperation } from '../../operations/operation.ts';
import { Timestamp, Uuid, nameSchemas } from '../../operations/schemas.ts';
import type { Organisation as OrganisationRow } from '../organisations/organisations.repository.ts';

const Organisation = Type.Object(
  {
    id: Uuid(),
    address: Type.String({ description: 'The host name it is served at (read-only).' }),
    name: Type.String(),
    timezone: Type.String({ description: 'An IANA time zone name, e.g. `Europe/Paris`.' }),
    default_language: Type.String({ description: 'A BCP 47 language tag, e.g. `en` or `fr-CA`.' }),
    plan: Type.String({ description: '`standard`, or `no-api` (read-only).' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { additionalProperties: false, description: 'The organisation.' },
);

const UpdateOrganisation = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone name.' })),
    default_language: Type.Optional(Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$', description: 'A BCP 47 language tag.' })),
  },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value.' },
);

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Organisation, UpdateOrganisation });

type SettingsBody = Static<typeof UpdateOrganisation>;

export const toOrganisationView = (o: OrganisationRow): Static<typeof Organisation> => ({
  id: o.id,
  address: o.address,
  name: o.name,
  timezone: o.timezone,
  default_language: o.default_language,
  plan: o.plan,
  created_at: o.created_at,
  updated_at: o.updated_at,
});

/** IANA names only, as this runtime's time zone database knows them (`Intl` refuses anything else). */
export function checkSettings(settings: SettingsBody): void {
  if (settings.timezone !== undefined) {
    let known = false;
    try {
      known = new Intl.DateTimeFormat('en', { timeZone: settings.timezone }).resolvedOptions().timeZone !== undefined;
    } catch {
      known = false;
    }
    if (!known) throw fieldError('/timezone', 'unknown_timezone', `${JSON.stringify(settings.timezone)} is not an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC).`);
  }
  if (settings.default_language !== undefined) {
    try {
      Intl.getCanonicalLocales(settings.default_language);
    } catch {
      throw fieldError('/default_language', 'invalid_language', `${JSON.stringify(settings.default_language)} is not a BCP 47 language tag.`);
    }
  }
}

export const organisationOperations = [
  defineOperation({
    id: 'getOrganisation',
    method: 'GET',
    path: '/organisation',
    tag: 'Organisation',
    summary: 'Read the organisation',
    description: 'Any valid credential of the organisation may read it.',
    scope: null,
    capability: null,
    writes: false,
    success: { status: 200, schema: Organisation, description: 'The organisation.' },
    errors: [],
    handler: async (ctx) => toOrganisationView((await ctx.services.organisations.findById(ctx.organisation.id))!),
  }),
  defineOperation({
    id: 'updateOrganisation',
    method: 'PATCH',
    path: '/organisation',
    tag: 'Organisation',
    summary: 'Change the organisation’s name, time zone or default language',
    description: 'The address and the plan are not changed here. An unknown time zone is a 422 at `/timezone`.',
    scope: 'tenants:write',
    capability: 'tenant/configure',
    writes: true,
    idempotency: 'optional',
    emits: ['organisation.updated'],
    body: UpdateOrganisation,
    bodyExample: { name: 'Northfield College', timezone: 'Europe/London', default_language: 'en-GB' },
    success: { status: 200, schema: Organisation, description: 'The organisation as it is now.' },
    errors: [422],
    handler: async (ctx, { body }) => {
      checkSettings(body);
      return toOrganisationView(await ctx.services.organisations.updateSettings(ctx.db, ctx.organisation.id, body));
    },
  }),
];
