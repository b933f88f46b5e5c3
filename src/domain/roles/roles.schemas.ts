import Type from 'typebox';
import { organisationCapabilities } from '../../access/capabilities.ts';
import { Nullable, Timestamp, nameSchemas } from '../../operations/schemas.ts';

/** A custom role's key: lower-case letters, digits and `_`, starting with a letter (so no `like` wildcard, no clash with a path). */
export const ROLE_KEY_PATTERN = '^[a-z][a-z0-9_]{1,39}$';
export const RoleKey = Type.String({ pattern: ROLE_KEY_PATTERN, description: 'Lower-case letters, digits and `_`, 2 to 40 characters, starting with a letter.' });

export const Role = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    built_in: Type.Boolean({ description: 'Built-in roles (`admin`, `manager`, `teacher`, `integration`) cannot change.' }),
    capabilities: Type.Array(Type.String(), { description: 'Names from `GET /capabilities`.' }),
    created_at: Nullable(Timestamp(), { description: 'Null for a built-in role.' }),
    updated_at: Nullable(Timestamp(), { description: 'Null for a built-in role.' }),
  },
  { additionalProperties: false, description: 'A role: a named set of capabilities people hold.' },
);

const RoleName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Capabilities = Type.Array(Type.Unsafe<string>({ type: 'string', enum: [...organisationCapabilities] }), {
  maxItems: organisationCapabilities.length,
  uniqueItems: true,
  description: 'Capability names from `GET /capabilities` (organisation capabilities only).',
});

export const CreateRole = Type.Object({ key: RoleKey, name: RoleName, capabilities: Capabilities }, { additionalProperties: false });
export const UpdateRole = Type.Object(
  { name: Type.Optional(RoleName), capabilities: Type.Optional(Capabilities) },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value.' },
);
export const RoleParams = Type.Object({ key: RoleKey }, { additionalProperties: false });

export const CapabilityInfo = Type.Object(
  {
    name: Type.String(),
    description: Type.String({ description: 'What it allows, in one sentence.' }),
    platform: Type.Boolean({ description: 'A platform capability: held by platform administrators, never by a role.' }),
  },
  { additionalProperties: false },
);

/** `GET /capabilities`: the whole catalogue, unpaged. */
export const CapabilityList = Type.Object({ data: Type.Array(CapabilityInfo) }, { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Role, CreateRole, UpdateRole, CapabilityInfo, CapabilityList });
