// What registering an OAuth client takes (the admin page's form and `atrium oauth-client create`).
import Type from 'typebox';
import { Uuid } from '../../operations/schemas.ts';
import { scopes } from '../../access/capabilities.ts';

export const oauthGrantTypes = ['authorization_code', 'client_credentials'] as const;
export type OAuthGrantType = (typeof oauthGrantTypes)[number];

export const CreateOAuthClient = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    type: Type.Union([Type.Literal('confidential'), Type.Literal('public')]),
    redirect_uris: Type.Array(Type.String({ format: 'uri', maxLength: 2000 }), { maxItems: 20, uniqueItems: true }),
    grant_types: Type.Array(Type.Union([Type.Literal('authorization_code'), Type.Literal('client_credentials')]), { minItems: 1, uniqueItems: true }),
    scopes: Type.Array(Type.Enum([...scopes]), { minItems: 1, uniqueItems: true }),
    service_person_id: Type.Optional(Uuid({ description: 'The person client-credentials tokens act as.' })),
  },
  { additionalProperties: false },
);
