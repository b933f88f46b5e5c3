import Type from 'typebox';
import { nameSchemas, Nullable, Timestamp } from '../../operations/schemas.ts';
import { extensionKinds, type ExtensionKind } from './extensions.catalog.ts';

export const Extension = Type.Object(
  {
    id: Type.String({ description: 'Stable identifier, e.g. `enrol_self`.' }),
    kind: Type.Unsafe<ExtensionKind>({ type: 'string', enum: [...extensionKinds] }),
    name: Type.String({ description: 'The name resources use, e.g. an enrolment method’s `type`.' }),
    title: Type.String(),
    description: Type.String(),
    enabled: Type.Boolean(),
    updated_at: Nullable(Timestamp('When it was last switched; null if never.')),
  },
  { additionalProperties: false, description: 'A compiled-in extension and whether this organisation has it switched on.' },
);

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Extension });
