import Type from 'typebox';
import { nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';

// The spec does not show the storage target record; this is what an administrator choosing storage needs.
export const StorageTarget = Type.Object(
  {
    id: Type.String({ description: 'A UUID, or `deployment` for the deployment’s own storage.' }),
    kind: Type.Union([Type.Literal('deployment'), Type.Literal('directory')]),
    name: Type.String(),
    directory: Nullable(Type.String({ description: 'Below the operator’s STORAGE_TARGETS_ROOT; null for the deployment storage.' })),
    is_default: Type.Boolean({ description: 'New files are written here.' }),
    created_at: Nullable(Timestamp()),
    updated_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'Where files are stored.' },
);

export const StorageTargetList = Type.Object(
  {
    data: Type.Array(StorageTarget),
    page: Type.Object({ next_cursor: Type.Null(), has_more: Type.Boolean(), limit: Type.Integer() }, { additionalProperties: false }),
  },
  { additionalProperties: false, description: 'Every target, the deployment storage first; an organisation has at most 50, so one page holds them all.' },
);

export const CreateStorageTarget = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
    directory: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$',
      description: 'Relative path below the operator’s STORAGE_TARGETS_ROOT (letters, digits, `.`, `_`, `-`, `/`).',
    }),
  },
  { additionalProperties: false },
);

export const EmptyBody = Type.Object({}, { additionalProperties: false, description: 'An empty JSON object.' });
export const Ok = Type.Object({ ok: Type.Boolean() }, { additionalProperties: false });

export const File = Type.Object(
  {
    id: Uuid(),
    filename: Type.String(),
    content_type: Type.String(),
    size: Type.Integer({ description: 'Bytes.' }),
    sha256: Type.String({ description: 'Hex SHA-256 of the content.' }),
    storage_target_id: Type.String({ description: 'The target the file was written to (`deployment` or a target id); files stay there.' }),
    created_at: Timestamp(),
  },
  { additionalProperties: false, description: 'A stored file.' },
);

export const UploadFile = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^/\\\\\\u0000]+$' }),
    content_type: Type.Optional(Type.String({ minLength: 3, maxLength: 255, pattern: '^[\\w.+-]+/[\\w.+-]+$', default: 'application/octet-stream' })),
    content_base64: Type.String({ maxLength: 14_000_000, contentEncoding: 'base64', pattern: '^[A-Za-z0-9+/]*={0,2}$' }),
  },
  { additionalProperties: false, description: 'The file’s bytes in base64 (the request body limit applies).' },
);

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ StorageTarget, StorageTargetList, CreateStorageTarget, EmptyBody, Ok, File, UploadFile });
