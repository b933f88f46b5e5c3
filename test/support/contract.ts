// Contract checks: every response the suite receives must be one the OpenAPI document promises —
// a documented status of its operation, a body valid against that status's schema, and for errors a
// problem document whose request_id equals the Request-Id header and whose code is one its operation lists
// (operations/operation-errors.ts), so the reference and the error pages cannot miss a code a test ever met.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { buildOpenApiDocument } from '../../src/openapi/openapi.ts';
import type { Operation } from '../../src/operations/operation.ts';
import { errorCodesOf } from '../../src/operations/operation-errors.ts';
import { API_PREFIX } from '../../src/http/registry.ts';
import { apiChanges, createRevisions } from '../../src/operations/revisions.ts';
import { ProblemSchema } from '../../src/operations/schemas.ts';
import { standalone } from './openapi-schemas.ts';

type Json = Record<string, any>;

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsPlugin as unknown as (a: Ajv2020) => void)(ajv);
const { $id: _ignored, ...problemSchema } = ProblemSchema as Json;
const validateProblem = ajv.compile(problemSchema);

// A path the router does not take to any operation (`/enrolment_methods/%2e%2e`) is its not-found answer, even
// where the path looks like an operation's.
const routerLevelCodes = new Set(['tenancy.unknown_organisation', 'request.too_large', 'request.route_not_found']);

interface Route {
  path: string;
  method: string;
  regex: RegExp;
  operation: Json;
  validators: Map<string, ValidateFunction | null>;
  codes: Set<string>;
}

export function createContractChecker(operations: Operation[]) {
  const doc = buildOpenApiDocument(operations, { serverUrl: 'http://contract.test', revisions: createRevisions(apiChanges) }) as Json;
  const routes: Route[] = [];
  const codesOf = new Map(operations.map((op) => [op.id, new Set<string>(errorCodesOf(op))]));
  for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const regex = new RegExp('^' + API_PREFIX + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') + '$');
    for (const [method, operation] of Object.entries(item)) {
      routes.push({ path: p, method: method.toUpperCase(), regex, operation, validators: new Map(), codes: codesOf.get(operation.operationId) ?? new Set() });
    }
  }

  // Like the router: static segments win over parameters (`/courses/deletions` before `/courses/{id}`).
  const specificity = (p: string) => [(p.match(/\{/g) ?? []).length, -p.replace(/\{[^}]+\}/g, '').length];
  routes.sort((a, b) => {
    const [pa, la] = specificity(a.path);
    const [pb, lb] = specificity(b.path);
    return pa - pb || la - lb;
  });

  return function check(method: string, url: string, status: number, headers: Record<string, unknown>, body: string): string[] {
    const problems: string[] = [];
    const requestId = headers['request-id'];
    if (typeof requestId !== 'string' || requestId === '') problems.push('no Request-Id header');
    const contentType = String(headers['content-type'] ?? '');
    if (status >= 400) {
      if (!contentType.startsWith('application/problem+json')) problems.push(`error ${status} is not application/problem+json (${contentType})`);
      const parsed = JSON.parse(body);
      if (!validateProblem(parsed)) problems.push(`problem document invalid: ${ajv.errorsText(validateProblem.errors)}`);
      if (parsed.request_id !== requestId) problems.push('request_id differs from the Request-Id header');
      if (parsed.status !== status) problems.push(`problem status ${parsed.status} differs from HTTP ${status}`);
    }
    const pathOnly = url.split('?')[0];
    const route = routes.find((r) => r.method === method && r.regex.test(pathOnly));
    if (!route) return problems; // not an API operation (health, docs) or an unknown route
    // Answered before any operation is identified (by the router or the host lookup): documented globally.
    if (status >= 400 && routerLevelCodes.has((JSON.parse(body) as Json).code)) return problems;
    const response = route.operation.responses[String(status)];
    if (!response) {
      problems.push(`${method} ${pathOnly}: status ${status} is not documented (documented: ${Object.keys(route.operation.responses).join(', ')})`);
      return problems;
    }
    if (status >= 400) {
      const { code } = JSON.parse(body) as Json;
      if (!route.codes.has(code)) problems.push(`${method} ${pathOnly}: code ${code} is not one ${route.operation.operationId} lists (operations/operation-errors.ts)`);
    }
    if (status < 400) {
      const schema = response.content?.['application/json']?.schema;
      if (response.content?.['application/octet-stream']) return problems;
      if (!schema) {
        if (body !== '') problems.push(`${status} should have no body`);
      } else {
        let validate = route.validators.get(String(status));
        if (validate === undefined) {
          validate = ajv.compile(standalone(doc, schema));
          route.validators.set(String(status), validate);
        }
        if (validate && !validate(JSON.parse(body))) problems.push(`${method} ${pathOnly} ${status} body invalid: ${ajv.errorsText(validate.errors)}`);
      }
    }
    return problems;
  };
}
