// What clients see of the audit log (docs/audit-log.md).
import Type from 'typebox';
import { PageQuery } from '../../operations/pagination.ts';
import { Nullable, Timestamp, Uuid, nameSchemas } from '../../operations/schemas.ts';

const Outcome = (description?: string) =>
  Type.Union([Type.Literal('success'), Type.Literal('refused'), Type.Literal('failed')], description ? { description } : {});

export const AuditEvent = Type.Object(
  {
    id: Uuid(),
    occurred_at: Timestamp('When the change was made (or refused).'),
    actor: Type.Object(
      {
        type: Type.Union([Type.Literal('user'), Type.Literal('client'), Type.Literal('system')]),
        id: Nullable(Type.String({ description: 'The person (user), OAuth client_id (client), or null: the system, or nobody proven (a refused sign-in).' })),
        name: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
    credential: Nullable(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('api_key'), Type.Literal('oauth'), Type.Literal('session'), Type.Literal('cli')]),
          id: Nullable(Type.String({ description: 'The credential’s id (never its secret).' })),
        },
        { additionalProperties: false },
      ),
    ),
    via: Type.Union([Type.Literal('rest'), Type.Literal('mcp'), Type.Literal('admin'), Type.Literal('cli'), Type.Literal('oauth'), Type.Literal('sign_in')]),
    action: Type.String({ description: 'The operationId, or the page or command: `updateSection`, `POST /admin/integrations/api-keys`, `atrium person create`, `sign_in`.' }),
    target: Nullable(Type.Object({ type: Type.String(), id: Nullable(Type.String()) }, { additionalProperties: false })),
    outcome: Outcome(),
    status: Type.Integer({ description: 'The HTTP status answered (or its equivalent for a command).' }),
    request_id: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
    changed_fields: Type.Array(Type.String(), { description: 'Names of the fields the request set; never their values.' }),
  },
  { additionalProperties: false, description: 'One entry of the audit log.' },
);

const Filter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 255, description }));

export const AuditEventsQuery = Type.Object(
  {
    ...PageQuery,
    actor_id: Filter('Only entries of this actor (a person’s id, or an OAuth client_id).'),
    target_type: Filter('Only entries about this kind of thing (`section`, `api_key`, `user`, …).'),
    target_id: Filter('Only entries about this thing.'),
    action: Filter('Only entries of this action (an operationId, a page or a command).'),
    outcome: Type.Optional(Outcome('Only `success`, `refused` or `failed` entries.')),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or after this RFC 3339 time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries before this RFC 3339 time.' })),
  },
  { additionalProperties: false },
);

// Its name in the OpenAPI document's components/schemas.
nameSchemas({ AuditEvent });
