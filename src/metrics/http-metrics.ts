// Counts every HTTP response of the app and times it, by operation: the OpenAPI operationId of a REST
// operation, else the route's pattern (pages, OAuth, MCP, docs), else "unmatched". Registered only when the
// process serves metrics, so a process without METRICS_PORT pays nothing per request. A tool called over MCP
// runs inside its /mcp request (src/mcp/tool-call.ts), so it counts under `/mcp`.
import type { FastifyInstance } from 'fastify';
import { httpRequestDuration, httpRequests } from './instruments.ts';

export function registerHttpMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions;
    const operation = route.config.operation?.id ?? route.url ?? 'unmatched';
    httpRequests.inc({ operation, method: request.method, status: reply.statusCode });
    httpRequestDuration.observe({ operation }, reply.elapsedTime / 1000);
    done();
  });
}
