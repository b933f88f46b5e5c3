// The access log (docs/operating.md#logs): at `info`, one line per answered request, with what an operator looks
// a request up by: method, route, status, duration and the request id (`reqId`, which the request's logger
// carries). The route is the pattern that matched (`/api/v1/sections/:id`), never the URL, whose ids, query and
// an invitation link's token have no place in a log; a request no route matched says `route: null`. Fastify's
// own request logging ("incoming request", "request completed": two lines a request) is off (AccessLogController,
// given to Fastify in app.ts), and only that: its error lines (a response stream that failed, a serializer that
// threw) stay. At `warn` and above the hook costs a call to a logger method that does nothing.
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

export class AccessLogController extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply, metadata?: unknown): void {
    if (error) super.requestCompleted(error, request, reply, metadata as never);
  }
}

export function registerAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url ?? null, status: reply.statusCode, duration_ms: Math.round(reply.elapsedTime * 100) / 100 },
      'request',
    );
    done();
  });
}
