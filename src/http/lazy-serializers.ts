// Fastify compiles every route's response serializer (fast-json-stringify) at start. This factory, Fastify's
// own (@fastify/fast-json-stringify-compiler) with the same options, compiles each when its route first answers
// instead, so a process pays for the routes it serves, not for all of them at start (docs/operating.md#memory).
// The serializer is the same one, so every answer is byte for byte what it was.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;

export const lazySerializers: Factory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ReturnType<typeof compile> | undefined;
    return (data) => (serialize ??= compile(route))(data);
  };
};
