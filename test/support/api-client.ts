// A small client over app.inject(): sets the organisation's host and the bearer credential, and checks
// every response against the OpenAPI contract (a contract violation fails the test that made the request).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { operations as allOperations } from '../../src/all-operations.ts';
import type { Operation } from '../../src/operations/operation.ts';
import { createContractChecker } from './contract.ts';

export interface ApiRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under /api/v1 (`/sections/…`) or an absolute path (`/healthz`). */
  path: string;
  host?: string;
  key?: string;
  body?: unknown;
  /** A raw payload, sent as is (for malformed-input tests). */
  payload?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: LightMyRequestResponse['headers'];
  body: any;
  raw: string;
}

export function createApiClient(app: FastifyInstance, extraOperations: Operation[] = []) {
  const check = createContractChecker([...allOperations, ...extraOperations]);
  const violations: string[] = [];

  async function request(req: ApiRequest): Promise<ApiResponse> {
    const url = req.path.startsWith('/api/') || req.path.startsWith('/healthz') || req.path.startsWith('/readyz') || req.path.startsWith('/docs') ? req.path : `/api/v1${req.path}`;
    const headers: Record<string, string> = { host: req.host ?? 'localhost', ...req.headers };
    if (req.key) headers.authorization = `Bearer ${req.key}`;
    let payload: string | undefined = req.payload;
    if (req.body !== undefined) {
      payload = JSON.stringify(req.body);
      headers['content-type'] ??= 'application/json';
    }
    const method = req.method ?? 'GET';
    const res = await app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    const found = check(method, url, res.statusCode, res.headers, res.body);
    if (found.length > 0) {
      violations.push(...found);
      throw new Error(`Contract violation for ${method} ${url} → ${res.statusCode}:\n  ${found.join('\n  ')}\n  body: ${res.body.slice(0, 500)}`);
    }
    const isJson = String(res.headers['content-type'] ?? '').includes('json') && res.body !== '';
    return { status: res.statusCode, headers: res.headers, body: isJson ? JSON.parse(res.body) : res.body, raw: res.body };
  }

  return { request, violations };
}

export type ApiClient = ReturnType<typeof createApiClient>;
