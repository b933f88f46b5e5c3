// The error pages every problem document's `docs_url` points at: `/docs/errors/<code>` (what happened, the
// usual causes, how to fix the request, whether to retry, the category's status and retry guidance, an example
// problem document, and the operations that can answer with the code, linked to the reference) and
// `/docs/errors` (the catalogue by area, with a table of contents and a search that needs no JavaScript).
// They answer on any host name, like the health checks, since ERRORS_URL may name any of them.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { errorCatalog, type ErrorCode } from '../errors/error-catalog.ts';
import { errorExplanations } from '../errors/error-explanations.ts';
import { exampleProblem } from './openapi-examples.ts';
import type { Operation } from '../operations/operation.ts';
import { bulkResultCodesOf, errorCodesOf } from '../operations/operation-errors.ts';
import { errorCategories } from '../errors/error-categories.ts';
import { markdownCode, referenceAnchor } from './html.ts';
import { REFERENCE_PATH } from './reference.ts';

export const ERRORS_PATH = '/docs/errors';

// The pages carry no script at all, and take styles and images only from this origin.
const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const areaOf = (code: string) => code.split('.')[0];

const areaLabel = (area: string) => area.charAt(0).toUpperCase() + area.slice(1).replace(/_/g, ' ');

interface OperationLink {
  id: string;
  method: string;
  path: string;
  summary: string;
  href: string;
}

const linkTo = (op: Operation): OperationLink => ({ id: op.id, method: op.method, path: `/api/v1${op.path}`, summary: op.summary, href: `${REFERENCE_PATH}#${referenceAnchor(op)}` });

/** Which operations answer with `code`: all, all but a few, or a list; and the bulk endpoints that report it in results. */
function operationsAnswering(code: ErrorCode, operations: readonly Operation[]) {
  const answering = operations.filter((op) => errorCodesOf(op).includes(code));
  const others = operations.filter((op) => !answering.includes(op));
  const inResults = operations.filter((op) => bulkResultCodesOf(op, operations).includes(code)).map(linkTo);
  if (answering.length > 0 && others.length === 0) return { scope: 'every' as const, list: [], inResults };
  // Most operations: name the few that never do, rather than a hundred that may.
  if (answering.length > operations.length / 2) return { scope: 'all-but' as const, list: others.map(linkTo), inResults };
  return { scope: 'listed' as const, list: answering.map(linkTo), inResults };
}

function send(reply: FastifyReply, html: string): FastifyReply {
  return reply.header('Content-Security-Policy', PAGE_CSP).header('X-Content-Type-Options', 'nosniff').type('text/html; charset=utf-8').send(html);
}

export function registerErrorPages(app: FastifyInstance, opts: { operations: readonly Operation[]; config: Config }): void {
  const codes = Object.keys(errorCatalog) as ErrorCode[];
  const areas = [...new Set(codes.map(areaOf))].map((area) => ({ id: `area-${area}`, label: areaLabel(area), codes: codes.filter((c) => areaOf(c) === area) }));
  const row = (code: ErrorCode) => ({ code, ...errorCatalog[code], href: `${ERRORS_PATH}/${code}` });

  app.get<{ Querystring: { q?: string } }>(ERRORS_PATH, async (request, reply) => {
    const q = typeof request.query.q === 'string' ? request.query.q.trim().toLowerCase() : '';
    // Search without JavaScript: the code, its title and its explanation, as plain text.
    const matches = (code: ErrorCode) => {
      const e = errorExplanations[code];
      return [code, errorCatalog[code].title, e.happened, e.fix, ...e.causes].join(' ').toLowerCase().includes(q);
    };
    const shown = areas.map((a) => ({ ...a, rows: a.codes.filter((c) => q === '' || matches(c)).map(row) })).filter((a) => a.rows.length > 0);
    const html = await reply.viewAsync('docs/errors', {
      title: q ? `Error codes matching “${q}”` : 'Error codes',
      query: q,
      areas: shown,
      allAreas: areas,
      total: shown.reduce((n, a) => n + a.rows.length, 0),
      categories: Object.entries(errorCategories).map(([name, c]) => ({ name, ...c })),
      referenceHref: REFERENCE_PATH,
    });
    return send(reply, html);
  });

  app.get<{ Params: { code: string } }>(`${ERRORS_PATH}/:code`, async (request, reply) => {
    const code = request.params.code;
    if (!Object.hasOwn(errorCatalog, code)) throw new ApiError('request.route_not_found', `There is no error code ${code}; ${ERRORS_PATH} lists them all.`);
    const c = code as ErrorCode;
    const entry = errorCatalog[c];
    const area = areaOf(c);
    const html = await reply.viewAsync('docs/error', {
      title: c,
      code: c,
      entry,
      category: errorCategories[entry.category],
      explanation: errorExplanations[c],
      example: JSON.stringify(exampleProblem(c, opts.config.errorsUrl), null, 2),
      answering: operationsAnswering(c, opts.operations),
      area: { id: `area-${area}`, label: areaLabel(area) },
      indexHref: ERRORS_PATH,
      referenceHref: REFERENCE_PATH,
      md: markdownCode,
    });
    return send(reply, html);
  });
}
