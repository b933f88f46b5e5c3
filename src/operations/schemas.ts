// Schema building blocks shared by every operation. They are plain JSON Schema (TypeBox), so the same
// object validates requests, serialises responses (as an allow-list) and lands in the OpenAPI document.
import Type, { type TSchema } from 'typebox';

// spec: Resources and fields — canonical UUIDs, versions 1-8, variants 8/9/a/b, plus the nil and max forms.
export const UUID_PATTERN =
  '^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$';
const uuidRegex = new RegExp(UUID_PATTERN);
export const isUuid = (value: string): boolean => uuidRegex.test(value);

export const Uuid = (options: { description?: string } = {}) =>
  Type.String({ format: 'uuid', pattern: UUID_PATTERN, ...options });

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** `T | null`, always present: expressed as a type list so validation errors stay about one type. */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const s = schema as unknown as { type?: string };
  if (typeof s.type === 'string') return { ...schema, type: [s.type, 'null'], ...options } as unknown as ReturnType<typeof Type.Union<[T, ReturnType<typeof Type.Null>]>>;
  return Type.Union([schema, Type.Null()], options);
}

export const ExternalId = Type.String({ minLength: 1, maxLength: 255, description: 'Your own identifier for this record, unique per organisation and resource type.' });

export const MAX_SAFE = 9007199254740991;

export const FieldErrorSchema = Type.Object(
  {
    path: Type.String({ description: 'RFC 6901 JSON Pointer into the request body' }),
    code: Type.String(),
    detail: Type.String(),
  },
  { additionalProperties: false },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable dotted code, `area.name`; decide behaviour on this.' }),
    category: Type.Union(
      ['validation', 'authentication', 'authorization', 'not_found', 'conflict', 'precondition', 'quota', 'rate_limit', 'upstream', 'internal'].map((c) => Type.Literal(c)),
    ),
    detail: Type.String(),
    request_id: Type.String(),
    docs_url: Type.String({ format: 'uri' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
    retry_after: Type.Optional(Nullable(Type.Integer())),
  },
  { additionalProperties: false, $id: 'Problem' },
);

// The names of schemas in the OpenAPI document's `components/schemas` (`Section`, `SectionList`), which every
// operation that takes or returns them `$ref`s, so that client generators make one model per resource. Kept
// beside the schema objects rather than in them (as an `$id`): request validation, response serialisation and
// the MCP tools' input schemas go on seeing the very same plain, self-contained schemas.
const schemaNames = new WeakMap<object, string>();

/** Names `schema` in the OpenAPI document and returns it. */
export function named<T extends TSchema>(name: string, schema: T): T {
  schemaNames.set(schema, name);
  return schema;
}

/** Names each schema after its key: `nameSchemas({ Section, CreateSection })`, in the module that declares them. */
export function nameSchemas(schemas: Record<string, TSchema>): void {
  for (const [name, schema] of Object.entries(schemas)) named(name, schema);
}

export function schemaName(schema: unknown): string | undefined {
  return typeof schema === 'object' && schema !== null ? schemaNames.get(schema) : undefined;
}

/** Names `schema` after `item`'s name and `suffix` (`SectionList`), when `item` has a name. */
export function namedAfter<T extends TSchema>(item: TSchema, suffix: string, schema: T): T {
  const itemName = schemaName(item);
  return itemName === undefined ? schema : named(`${itemName}${suffix}`, schema);
}

/** A page of `item`s; named `<Item>List` when the item is named. */
export function ListEnvelope<T extends TSchema>(item: T) {
  const envelope = Type.Object(
    {
      data: Type.Array(item),
      page: Type.Object(
        {
          next_cursor: Nullable(Type.String()),
          has_more: Type.Boolean(),
          limit: Type.Integer(),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );
  return namedAfter(item, 'List', envelope);
}

export const IdParams = Type.Object({ id: Uuid() }, { additionalProperties: false });
