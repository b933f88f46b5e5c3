// A thin typed client for the Atrium API: openapi-fetch over the types openapi-typescript generates from the
// served OpenAPI document (`schema.ts`). This file only sets the base URL, the bearer credential and the pinned
// revision; every call is `client.GET('/sections', …)`, `client.PATCH('/sections/{id}', …)` as openapi-fetch
// documents, with paths, parameters, bodies and answers checked by TypeScript, and refusals typed as problem
// documents (`error.code`, `error.errors`).
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';

/** An RFC 9457 problem document, as every refusal carries it. Decide on `code`; fall back on `category`. */
export type Problem = components['schemas']['Problem'];

export interface AtriumClientOptions {
  /** Your organisation's API: `https://<organisation address>/api/v1`. */
  baseUrl: string;
  /** An API key (`atr_live_…`, `atr_test_…`) or an OAuth access token. Keep it out of source control. */
  apiKey: string;
  /**
   * The revision your code was written against (`YYYY-MM-DD`), sent as `Service-Version` on every request, so
   * that the API keeps answering in the shapes these types describe. Leave it out to use the revision pinned on
   * the key when it was issued.
   */
  serviceVersion?: string;
  /** Another fetch (a test's, a proxy agent's); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export type AtriumClient = Client<paths>;

export function createAtriumClient(options: AtriumClientOptions): AtriumClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: {
      Authorization: `Bearer ${options.apiKey}`,
      ...(options.serviceVersion ? { 'Service-Version': options.serviceVersion } : {}),
    },
  });
}

/** True for a problem document: what `error` holds when a call was refused. */
export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && typeof (value as Problem).code === 'string' && typeof (value as Problem).status === 'number';
}
