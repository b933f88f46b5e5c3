// Builds the Fastify application from its plugins and the operation list. No listen: main.ts and the
// tests decide how to serve it.
import { withoutInvitationToken } from './pages/invitation.page.ts';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { Database, Db } from './db/database.ts';
import { ApiError } from './errors/api-error.ts';
import { registerBodyParser } from './http/body-parser.ts';
import { createClientErrorHandler } from './http/client-errors.ts';
import { registerDocsRoutes } from './openapi/docs-routes.ts';
import { sendProblem } from './errors/problems.ts';
import { installProblemHandlers, toApiError } from './http/error-handler.ts';
import { registerOperations } from './http/registry.ts';
import { createTenancyCache } from './http/tenancy-cache.ts';
import { newRequestId } from './http/request-id.ts';
import { AccessLogController, registerAccessLog } from './http/access-log.ts';
import { createIdempotency } from './http/idempotency.ts';
import { apiChanges, createRevisions, type Revisions } from './operations/revisions.ts';
import { registerRateLimits } from './http/rate-limits.ts';
import { databaseLoginThrottle, redisLoginThrottle } from './auth/login-throttle.ts';
import { registerPages } from './pages/pages.ts';
import { registerViews } from './pages/views.ts';
import { createAuthorizationServers } from './auth/oauth/authorization-servers.ts';
import { registerOAuthRoutes } from './auth/oauth/oauth-routes.ts';
import { registerMcpRoutes } from './mcp/mcp-routes.ts';
import { readDeploymentSecret } from './db/deployment-secrets.ts';
import { validatorCompiler } from './operations/validation.ts';
import { operations as allOperations } from './all-operations.ts';
import type { Operation } from './operations/operation.ts';
import type { Services } from './services.ts';
import { servicesFor } from './runtime.ts';
import { registerHttpMetrics } from './metrics/http-metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    services: Services;
  }
}

export interface AppOptions {
  config: Config;
  database: Database;
  clock: Clock;
  /** Tests may add operations of their own (e.g. to exercise a revision transform). */
  operations?: Operation[];
  /** Tests may declare revisions of their own; by default, the API's. */
  revisions?: Revisions;
  logger?: boolean;
  /** Routes added before the app is sealed: the benchmark's bare baseline routes (bench/server.ts). */
  extraRoutes?: (app: FastifyInstance) => void;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database, clock } = options;
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]'],
            // Fastify's request fields, with an invitation link's token (a credential until used) masked.
            serializers: { req: (req: FastifyRequest) => ({ method: req.method, url: withoutInvitationToken(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort }) },
          },
    // One access line per request (registerAccessLog), not Fastify's "incoming request" and "request completed".
    logController: new AccessLogController(),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // The id is ours, never the client's: it is quoted to support and must be unique.
    genReqId: newRequestId,
    requestIdHeader: false,
    // docs/operating.md#starting-losing-the-database-stopping — at shutdown the listener closes first (see src/http/listener.ts); a request that
    // still arrives on an open connection is served, never answered with Fastify's plain 503.
    return503OnClosing: false,
    clientErrorHandler: createClientErrorHandler(config.errorsUrl),
    // External ids (up to 255 characters, more once percent-encoded) are path segments.
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: (error, request, reply) => sendProblem(reply, toApiError(error, request), config.errorsUrl),
  });

  const revisions = options.revisions ?? createRevisions(apiChanges);
  const services = await servicesFor(config, database, clock, { revisions, onBackgroundError: (err) => app.log.warn({ err }, 'background write failed') });
  app.decorate('db', database.db);
  app.decorate('services', services);
  app.setValidatorCompiler(validatorCompiler);
  installProblemHandlers(app, config.errorsUrl);
  registerBodyParser(app);

  // A callback, not an `async` hook: every request, the bare route's too, would pay a promise and a microtask.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id);
    done();
  });
  if (options.logger !== false) registerAccessLog(app);
  if (config.metricsPort !== undefined) registerHttpMetrics(app);

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await sql`select 1`.execute(database.db);
      return { status: 'ok', database: database.dialect };
    } catch {
      return sendProblem(reply, new ApiError('health.database_unreachable'), config.errorsUrl);
    }
  });

  const operations = [...allOperations, ...(options.operations ?? [])];
  await registerViews(app);
  registerDocsRoutes(app, { operations, config, revisions });
  const idempotency = createIdempotency({ database, clock });
  // One Redis connection for what processes share through it: rate-limit counters, the sign-in lockout.
  // Imported only with REDIS_URL: a deployment without Redis never loads its client.
  const redis = config.redisUrl ? (await import('./redis.ts')).connectRedis(config.redisUrl, (err) => app.log.warn({ error: err.message }, 'redis connection failed')) : undefined;
  if (redis) app.addHook('onClose', async () => void (await redis.quit()));
  const limits = await registerRateLimits(app, { perMinute: config.rateLimitPerMinute, concurrency: config.concurrencyLimit, redis });
  const authorizationServers = createAuthorizationServers({
    db: database.db,
    clock,
    people: services.people,
    clients: services.oauthClientStore,
    publicOrigin: config,
    cookieKey: await readDeploymentSecret(database.db, 'oauth_cookie_key'),
    signingJwk: JSON.parse(await readDeploymentSecret(database.db, 'oauth_signing_jwk')) as Record<string, unknown>,
    // The organisation read afresh: a provider is kept across requests, its plan may have changed since.
    selfRegistrationAllowed: async (org) => (await services.organisations.findById(org.id))?.plan !== 'no-api' && (await services.mcpSettings.get(org.id)).allowSelfRegistration,
    fetchMetadataDocument: services.clientIdMetadataFetch,
    errorsUrl: config.errorsUrl,
    renderError: (error) => app.view('oauth/error', { title: 'The sign-in request cannot go on', error }),
  });
  await registerOAuthRoutes(app, { services, servers: authorizationServers, publicOrigin: config });
  await registerPages(app, {
    config,
    services,
    authorizationServers,
    throttle: redis ? redisLoginThrottle({ redis, clock }) : databaseLoginThrottle({ db: database.db, clock }),
    csrfKey: await readDeploymentSecret(database.db, 'csrf_hmac_key'),
  });
  // PostgreSQL: a request's organisation is read with its first statement, not before it (one round trip
  // fewer); SQLite reads it in process for next to nothing, and sends no statement along with another.
  const tenancyCache = database.dialect === 'postgres' ? createTenancyCache(services.organisations) : undefined;
  const pipeline = registerOperations(app, operations, { services, idempotency, limits, revisions, tenancyCache, finalStatements: database.dialect === 'postgres' });
  await registerMcpRoutes(app, { config, services, clock, operations, revisions, limits, pipeline, tenancyCache });
  options.extraRoutes?.(app);
  // Idempotency records live 24 hours, sessions 12 at most; expired ones are ignored at once and purged here.
  const purge = setInterval(() => {
    idempotency.purgeExpired().catch((err) => app.log.warn({ err }, 'idempotency purge failed'));
    services.sessions.purgeExpired().catch((err) => app.log.warn({ err }, 'session purge failed'));
  }, 10 * 60_000);
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));
  // An SMTP pool's idle connections would otherwise keep the process alive after close.
  app.addHook('onClose', async () => services.mail.close());
  await app.ready();
  return app;
}
