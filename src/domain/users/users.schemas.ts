import Type from 'typebox';
import { ExternalId, Nullable, Timestamp, Uuid, nameSchemas } from '../../operations/schemas.ts';
import { ROLE_KEY_PATTERN } from '../roles/roles.schemas.ts';

const Status = Type.Union([Type.Literal('active'), Type.Literal('suspended')], {
  description: '`suspended`: signs in no more, and their sessions, API keys and OAuth grants are refused, until made `active` again.',
});

export const User = Type.Object(
  {
    id: Uuid(),
    email: Type.String({ description: 'Unique in the organisation, compared without regard to letter case; stored in lower case.' }),
    name: Type.String(),
    roles: Type.Array(Type.String(), { description: 'Role keys, built-in or custom (`GET /roles`).' }),
    status: Status,
    platform_admin: Type.Boolean({ description: 'A platform administrator (read-only here; set with the CLI).' }),
    external_id: Nullable(Type.String()),
    last_sign_in_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A person of the organisation.' },
);

// A pragmatic address check: something@something, no spaces; the invitation mail proves the rest.
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'An e-mail address.' });
const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' });
const Roles = Type.Array(Type.String({ pattern: ROLE_KEY_PATTERN }), {
  maxItems: 20,
  uniqueItems: true,
  description: 'Role keys. Setting them needs the scope `roles:write` and the capability `role/assign`, and no role may allow what you may not do.',
});

export const CreateUser = Type.Object(
  {
    email: Email,
    name: Name,
    roles: Type.Optional(Roles),
    status: Type.Optional(Status),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateUser = Type.Object(
  { email: Type.Optional(Email), name: Type.Optional(Name), roles: Type.Optional(Roles), status: Type.Optional(Status) },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value.' },
);

/** `PUT /users/ext:{external_id}`: the external id is in the path. */
export const UpsertUser = Type.Omit(CreateUser, ['external_id'], { additionalProperties: false });

export const UserListFilters = {
  status: Type.Optional(Status),
  role: Type.Optional(Type.String({ pattern: ROLE_KEY_PATTERN, description: 'Only holders of this role.' })),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Only the user with this address (any letter case).' })),
};

/** What `POST /users/{id}/actions/invite` answers: the invitation, never its link. */
export const Invitation = Type.Object({ id: Uuid({ description: 'The invitation.' }), expires_at: Timestamp('When the link stops working.') }, { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ User, CreateUser, UpdateUser, UpsertUser, Invitation });
