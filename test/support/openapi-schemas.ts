// The OpenAPI document names each body's schema in `components/schemas` and `$ref`s it. A schema taken out of
// the document is compiled with those components carried along, so that its references (and theirs) resolve.
type Json = Record<string, any>;

const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;

/** `schema`, as found in `doc`, ready to compile on its own. */
export function standalone(doc: Json, schema: Json): Json {
  return { ...schema, components: { schemas: doc.components.schemas } };
}

/** The component a `{ $ref }` names, or the schema itself when it is written out. */
export function resolved(doc: Json, schema: Json): Json {
  const name = typeof schema.$ref === 'string' ? COMPONENT_REF.exec(schema.$ref)?.[1] : undefined;
  return name === undefined ? schema : doc.components.schemas[name];
}
