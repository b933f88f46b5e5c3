// What creating an API key takes (the admin page's form; the CLI passes the same fields to the service).
import Type from 'typebox';
import { scopes } from '../access/capabilities.ts';

export const CreateApiKey = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for: one key per integration is advised.' }),
    scopes: Type.Array(Type.Enum([...scopes]), { minItems: 1, uniqueItems: true, description: 'What the key may do, never more than its person may.' }),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  },
  { additionalProperties: false },
);
