// Builds a request that should succeed for any registered operation, from its declaration alone: path ids
// become real resources (factories' resourceFor), and body fields naming another resource (`course_id`, …)
// are pointed at a real one. Registry-driven suites use it so a new operation needs no new test code.
import { randomUUID } from 'node:crypto';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import type { Operation } from '../../src/operations/operation.ts';
import type { Factories } from './factories.ts';

const collectionOf = (op: Operation) => op.path.split('/')[1];
const referencedCollection = (field: string) => (field.endsWith('_id') ? `${field.slice(0, -3).replace(/y$/, 'ie')}s` : undefined);

/**
 * `resourceOrg` owns the resource a path names (another organisation's, for isolation tests). An upsert by
 * external id gets a fresh external id, so that it creates.
 */
export async function exampleRequest(make: Factories, op: Operation, org: Organisation, resourceOrg: Organisation = org): Promise<{ path: string; body?: unknown }> {
  await make.preconditions[op.id]?.(resourceOrg);
  let path = op.path;
  // Paths that name things by other parameters (`/email_templates/{message_key}/versions/{version_id}`,
  // `/webhook_subscriptions/{id}/deliveries/{delivery_id}`), and required query parameters: the values the
  // operation's factory made for this request. They come first, so that they can name the `{id}` too.
  const named = await make.parametersFor[op.id]?.(resourceOrg);
  if (named) {
    path = path.replace(/\{(\w+)\}/g, (placeholder, name: string) => named.path[name] ?? placeholder);
    if (named.query) path += `?${new URLSearchParams(named.query)}`;
  }
  if (path.includes('{id}')) path = path.replace('{id}', (await make.resourceFor[collectionOf(op)](resourceOrg)).id);
  if (path.includes('{external_id}')) {
    const externalId = op.method === 'PUT' && resourceOrg === org ? `new-${randomUUID()}` : (await make.resourceFor[collectionOf(op)](resourceOrg)).external_id!;
    path = path.replace('{external_id}', encodeURIComponent(externalId));
  }
  // A numbered sub-resource (`/wiki_pages/{id}/versions/{version}`): the first one, which every resource has.
  path = path.replace('{version}', '1');
  if (!op.body) return { path };
  const body = structuredClone((op.bodyExample ?? {}) as Record<string, unknown>);
  // A webhook URL must answer the verification ping: point it at the test's receiver, on a path of its own.
  if (typeof body.url === 'string' && body.url.startsWith('https://')) body.url = `${make.webhookUrl}/hooks/${randomUUID()}`;
  await pointAtRealResources(make, body, org);
  makeUnique(body);
  return { path, body };
}

/** Fields unique in an organisation (a user's `email`, a role's `key`) get a fresh value, at any depth, so that examples can run again. */
function makeUnique(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(makeUnique);
  if (value === null || typeof value !== 'object') return;
  const object = value as Record<string, unknown>;
  const fresh = randomUUID().slice(0, 8);
  if (typeof object.email === 'string') object.email = object.email.replace('@', `+${fresh}@`);
  if (typeof object.key === 'string' && /^[a-z]/.test(object.key) && Array.isArray(object.capabilities)) object.key = `${object.key}_${fresh.replace(/-/g, '')}`;
  for (const inner of Object.values(object)) makeUnique(inner);
}

/** Replaces `<x>_id` fields at any depth (a bulk request's `operations[].data.lesson_id`) with a real resource's id. */
async function pointAtRealResources(make: Factories, value: unknown, org: Organisation): Promise<void> {
  if (Array.isArray(value)) {
    for (const item of value) await pointAtRealResources(make, item, org);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const object = value as Record<string, unknown>;
  for (const [field, inner] of Object.entries(object)) {
    const collection = referencedCollection(field);
    if (typeof inner === 'string' && collection && make.resourceFor[collection]) object[field] = (await make.resourceFor[collection](org, object)).id;
    else await pointAtRealResources(make, inner, org);
  }
}

/**
 * A bulk request of `count` operations, each its example's first operation made anew (its own `ref`, external
 * id, unique fields and referenced resources), so that all of them can succeed together.
 */
export async function exampleBulkRequest(make: Factories, op: Operation, org: Organisation, count: number): Promise<{ path: string; body: unknown }> {
  const [first] = (op.bodyExample as { operations: Array<Record<string, unknown>> }).operations;
  const operations = Array.from({ length: count }, (_, i) => {
    const item = structuredClone(first);
    item.ref = `${String(item.ref)}-${i}`;
    if (typeof item.external_id === 'string') item.external_id = `${item.external_id}-${randomUUID()}`;
    return item;
  });
  await pointAtRealResources(make, operations, org);
  makeUnique(operations);
  return { path: op.path, body: { operations } };
}
