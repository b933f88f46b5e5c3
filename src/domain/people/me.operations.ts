import Type from 'typebox';
import { ApiError } from '../../errors/api-error.ts';
import { defineOperation } from '../../operations/operation.ts';
import { named, Uuid } from '../../operations/schemas.ts';

const Me = named(
  'Me',
  Type.Object(
  {
    organisation: Type.Object({ id: Uuid(), address: Type.String(), name: Type.String(), plan: Type.String() }, { additionalProperties: false }),
    subject: Type.Object({ person_id: Uuid(), email: Type.String(), name: Type.String() }, { additionalProperties: false }),
    credential: Type.Object(
      {
        kind: Type.Union([Type.Literal('api_key'), Type.Literal('oauth_token')]),
        id: Uuid(),
        mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
        pinned_revision: Type.String({ description: 'Applied when a request sends no Service-Version.' }),
      },
      { additionalProperties: false },
    ),
    scopes: Type.Array(Type.String()),
    capabilities: Type.Array(Type.String()),
  },
  { additionalProperties: false },
  ),
);

export const meOperations = [
  defineOperation({
    id: 'getMe',
    method: 'GET',
    path: '/me',
    tag: 'Caller',
    summary: 'Who am I',
    description: 'The organisation, the person the credential acts for, its scopes and that person’s capabilities.',
    scope: null,
    capability: null,
    writes: false,
    success: { status: 200, schema: Me, description: 'The caller.' },
    errors: [],
    async handler(ctx) {
      const { actor, organisation: org } = ctx;
      const person = await ctx.services.people.findById(org.id, actor.personId);
      if (!person) throw new ApiError('auth.invalid_credential', 'The person this credential acts for no longer exists.');
      return {
        organisation: { id: org.id, address: org.address, name: org.name, plan: org.plan },
        subject: { person_id: person.id, email: person.email, name: person.name },
        credential: { kind: actor.kind, id: actor.credentialId, mode: actor.mode, pinned_revision: actor.pinnedRevision },
        scopes: [...actor.scopes].sort(),
        capabilities: [...actor.capabilities].sort(),
      };
    },
  }),
];
