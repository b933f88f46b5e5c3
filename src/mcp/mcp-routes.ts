// /mcp on every organisation's address (spec: What the service does 5-6; docs/mcp.md, docs/authentication.md#oauth-2), and the
// RFC 9728 protected-resource documents an MCP client discovers the authorization server from. Streamable HTTP,
// served by the official SDK's createMcpHandler: revision 2026-07-28 (stateless) and, for older clients,
// 2025-06-18 and 2025-11-25 (initialize accepted, no session kept), so any request may land on any process.
//
// Before the SDK sees a request: the organisation (404), its plan (412 commerce.plan_entitlement), whether its
// administrator left MCP on (404 mcp.disabled) — refused before the credential, so a client does not take a
// person through sign-in to a server that will refuse them — then the credential (401 with the
// resource_metadata challenge), the rate limits, and the JSON-RPC framing (no batches). Answers here are
// problem documents; JSON-RPC errors are the SDK's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { readDeploymentSecret } from '../db/deployment-secrets.ts';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import { scopes as allScopes } from '../access/capabilities.ts';
import { resourcesOf } from '../auth/oauth/resources.ts';
import { ApiError } from '../errors/api-error.ts';
import { allowAnyOrigin, preflightHandler, type CrossOriginPolicy } from '../http/cross-origin.ts';
import type { Operation, OperationServices } from '../operations/operation.ts';
import type { Revisions } from '../operations/revisions.ts';
import { publicOrigin } from '../public-origin.ts';
import { createConfirmations } from './confirmations.ts';
import type { McpCall } from './tool-server.ts';
import { createToolCaller } from './tool-call.ts';
import type { OperationPipeline } from '../http/registry.ts';
import { buildTools } from './tools.ts';
import type { Limit } from '../http/rate-limits.ts';
import { loadOnce } from '../load-once.ts';
import { andThen, attempt, type MaybeAsync } from '../maybe-async.ts';
import type { Actor } from '../access/actor.ts';
import type { McpSettings } from './mcp-settings.service.ts';
import { isDatabaseUnavailable } from '../db/availability.ts';
import { sendRider, withRider, type Rider } from '../db/riders.ts';
import type { Exchange } from '../http/pipeline.ts';
import { turnedStale, type TenancyCache } from '../http/tenancy-cache.ts';
import { buffered, endWhenClientGoes, isEventStream, webRequestOf, writeWebResponse } from './web-exchange.ts';
import { createCallRegistry } from './call-registry.ts';

/** The caller /mcp admitted, on the organisation it was admitted on. */
interface Admitted {
  org: Organisation;
  settings: McpSettings;
  token: string;
  actor: Actor;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;
/** The revision whose exchanges are stateless and answered as JSON once their call has ended. */
const MODERN_REVISION = '2026-07-28';
const SERVER_VERSION = '1.0.0';

export interface McpRouteDeps {
  config: Config;
  services: OperationServices;
  clock: Clock;
  operations: readonly Operation[];
  revisions: Revisions;
  /** The per-credential rate limit and concurrency cap of the REST API. */
  limits: Limit[];
  /** The operation pipeline a tool call runs through (tool-call.ts). */
  pipeline: OperationPipeline;
  /** Organisations by address, checked with the request's first statement (PostgreSQL; src/http/tenancy-cache.ts). */
  tenancyCache?: TenancyCache;
}

/** Browser-based clients may call /mcp and its metadata from any origin, never with cookies. */
const crossOrigin: CrossOriginPolicy = {
  methods: 'GET, POST, DELETE, OPTIONS',
  headers: 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  expose: 'WWW-Authenticate, Mcp-Protocol-Version, Mcp-Session-Id, Request-Id',
};
const allowCrossOrigin = (reply: FastifyReply) => allowAnyOrigin(reply, crossOrigin);

/** A JSON-RPC error the SDK would answer, for what never reaches it. */
function jsonRpcError(reply: FastifyReply, code: number, message: string) {
  return reply.code(400).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export async function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  const { config, services } = deps;
  const confirmations = createConfirmations({ db: app.db, clock: deps.clock, key: await readDeploymentSecret(app.db, 'mcp_confirmation_key') });
  // The SDK and the tools are loaded and built on the first /mcp request: a process that serves none never
  // pays their memory (docs/operating.md#memory).
  let handler: { close(): Promise<void> } | undefined;
  const calls = createCallRegistry<McpCall>();
  // Once loaded, taken as it is: an await of the loaded promise would cost every request a microtask.
  let loadedServe: ((request: Request, parsedBody: unknown, authInfo: AuthInfo) => Promise<Response>) | undefined;
  const loadServe = loadOnce(async () => {
    const [{ createMcpHandler }, { createToolServerFactory }] = await Promise.all([import('@modelcontextprotocol/server'), import('./tool-server.ts')]);
    const made = createMcpHandler(
      createToolServerFactory({
        tools: buildTools(deps.operations),
        confirmations,
        callOperation: createToolCaller({ pipeline: deps.pipeline, revision: deps.revisions.current, errorsUrl: config.errorsUrl }),
        errorsUrl: config.errorsUrl,
        version: SERVER_VERSION,
        calls,
      }),
      { onerror: (err) => app.log.debug({ err }, 'MCP request refused') },
    );
    handler = made;
    loadedServe = (request, parsedBody, authInfo) => made.fetch(request, { authInfo, ...(parsedBody !== undefined ? { parsedBody } : {}) });
    return loadedServe;
  });
  app.addHook('onClose', async () => handler?.close());

  const originOf = (org: Organisation) => publicOrigin(config, org.address);
  const challengeOf = (org: Organisation) => `Bearer resource_metadata="${originOf(org)}/.well-known/oauth-protected-resource/mcp"`;

  // The steps before the SDK answer at once where nothing has to wait (SQLite, a cached credential and settings),
  // as a REST request's admission does (src/maybe-async.ts): no promise, no microtask of their own.
  function organisationOf(request: FastifyRequest): MaybeAsync<Organisation> {
    const address = request.hostname.toLowerCase();
    return andThen(services.organisations.findByAddress(address), (org) => {
      if (!org) throw new ApiError('tenancy.unknown_organisation', `No organisation is served at ${request.hostname}.`);
      deps.tenancyCache?.set(address, org);
      return org;
    });
  }

  function authenticate(request: FastifyRequest, org: Organisation): MaybeAsync<{ token: string; actor: Actor }> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new ApiError('auth.missing_credential', 'Send `Authorization: Bearer <access token for this MCP server, or API key>`.', { headers: { 'WWW-Authenticate': challengeOf(org) } });
    }
    const token = BEARER.exec(header)?.[1] ?? '';
    const challenged = (err: unknown): never => {
      if (err instanceof ApiError && err.status === 401) throw new ApiError(err.code, err.detail, { headers: { 'WWW-Authenticate': `${challengeOf(org)}, error="invalid_token"` } });
      throw err;
    };
    return attempt(() => services.mcpCredentials.authenticateForMcp(token, org.id, org.credentials_epoch), (actor) => ({ token, actor }), challenged);
  }

  /** Everything /mcp checks before the SDK, for `org`: its plan, its MCP switch, the credential. */
  function admit(request: FastifyRequest, org: Organisation): MaybeAsync<Admitted> {
    // spec: What the service does 6 — without the API entitlement every MCP connection is refused.
    if (org.plan === 'no-api') throw new ApiError('commerce.plan_entitlement', "This organisation's plan does not include the API, so its MCP server is not available.");
    return andThen(services.mcpSettings.current(org), (settings) => {
      if (!settings.enabled) throw new ApiError('mcp.disabled', "This organisation's administrator has switched its MCP server off.");
      return andThen(authenticate(request, org), ({ token, actor }) => {
        request.organisation = org;
        request.actor = actor;
        return { org, settings, token, actor };
      });
    });
  }

  /** The organisation as it is now, read by itself, and the caller admitted on it. */
  const admitFresh = (request: FastifyRequest): MaybeAsync<Admitted> => andThen(organisationOf(request), (org) => admit(request, org));

  const isStale = (rider: Rider) => turnedStale(app.db, rider);

  /**
   * The caller, admitted on the organisation this process cached for the address when it has one (PostgreSQL,
   * src/http/tenancy-cache.ts), with the rider that checks that copy; else on the organisation read now. A
   * refusal stands only for the organisation as it is now.
   */
  function admitCached(request: FastifyRequest): MaybeAsync<{ admitted: Admitted; rider?: Rider }> {
    const address = request.hostname.toLowerCase();
    const cached = deps.tenancyCache?.get(address);
    if (cached === undefined) return andThen(admitFresh(request), (admitted) => ({ admitted }));
    return admitFromCopy(request, deps.tenancyCache!.riderFor(address, cached), cached);
  }

  /** The caller admitted on the cached copy: at once where admission answers at once; a refusal stands only if the copy still holds. */
  function admitFromCopy(request: FastifyRequest, rider: Rider, cached: Organisation): MaybeAsync<{ admitted: Admitted; rider?: Rider }> {
    const refused = async (err: unknown): Promise<{ admitted: Admitted }> => {
      if (isDatabaseUnavailable(err) || !(await isStale(rider))) throw err;
      return { admitted: await admitFresh(request) };
    };
    return attempt<Admitted, { admitted: Admitted; rider?: Rider }>(() => admit(request, cached), (admitted) => ({ admitted, rider }), refused);
  }

  async function mcp(request: FastifyRequest, reply: FastifyReply) {
    allowCrossOrigin(reply);
    reply.header('Cache-Control', 'no-store');
    const admission = admitCached(request);
    const first = admission instanceof Promise ? await admission : admission;
    const rider = first.rider;
    let admitted = first.admitted;

    let message: unknown;
    if (request.method === 'POST') {
      const body = typeof request.body === 'string' ? request.body : '';
      try {
        message = JSON.parse(body);
      } catch {
        return jsonRpcError(reply, -32700, 'Parse error: the body is not JSON.');
      }
      if (Array.isArray(message)) return jsonRpcError(reply, -32600, 'Invalid Request: batches are not supported; send one JSON-RPC message per request.');
    }
    const toolsCall = (message as { method?: unknown } | undefined)?.method === 'tools/call';
    // A tools/call is counted by its operation's pipeline, after its scope and capability as a REST request is
    // (tool-call.ts), so once; everything else here.
    if (!toolsCall) {
      for (const limit of deps.limits) await limit(request, reply);
    }

    // The check of a cached organisation rides with the tool call's first statement, as a REST request's does,
    // when the answer can wait for the call's end (a 2026-07-28 exchange, stateless): until the check
    // holds nothing is sent, and a stale copy runs the call again on the organisation as it is now, whose
    // refusal (a revoked credential's 401) is this request's answer. Anything else is answered from the copy
    // only once the copy is checked.
    const modernToolCall = toolsCall && request.headers['mcp-protocol-version'] === MODERN_REVISION;
    const rides = rider !== undefined && modernToolCall;
    if (rider !== undefined && !rides && (await isStale(rider))) admitted = await admitFresh(request);
    const exchange: Exchange = { request, reply };
    const serve = loadedServe ?? (await loadServe());
    // Fired when the client goes away before the answer is written: the SDK ends what it was streaming, and the
    // exchanges' servers are closed (web-exchange.ts). A 2026-07-28 tool call's exchange is ended by its server's
    // close alone: its `Request` goes without the signal, which undici's `Request` makes costly to follow.
    const abort = new AbortController();
    const servers: McpCall['servers'] = [];
    endWhenClientGoes(reply.raw, abort, servers);
    const signal = modernToolCall ? undefined : abort.signal;
    // The calls this request opened, closed once its answer is written (a streamed one's handlers run until then).
    const opened: number[] = [];
    const answer = (caller: Admitted, checking?: Rider) => {
      const call: McpCall = {
        organisation: caller.org,
        actor: caller.actor,
        settings: caller.settings,
        requestId: request.id,
        exchange,
        servers,
        ...(checking ? { confirmTenancy: () => sendRider(app.db, checking) } : {}),
      };
      const key = calls.open(call);
      opened.push(key);
      const auth: AuthInfo = { token: caller.token, clientId: caller.actor.credentialId, scopes: [...caller.actor.scopes], extra: { call: key } };
      const sdkRequest = webRequestOf(request, signal);
      return checking ? withRider(checking, () => serve(sdkRequest, message, auth)) : serve(sdkRequest, message, auth);
    };
    try {
      let response = await answer(admitted, rides ? rider : undefined);
      // Our tools send nothing before their result, so a 2026-07-28 call is answered as JSON once it has ended;
      // were one to stream, its stream is read to its end (the call's) before the check decides.
      if (rides && isEventStream(response)) response = await buffered(response);
      // A check that rode with the call's statement has held by now, or it has not (isStale waits for it).
      if (rides && rider!.held !== true && (await isStale(rider!))) {
        await response.body?.cancel();
        response = await answer(await admitFresh(request));
      }
      // The SDK's answer goes out as it wrote it, with what Fastify holds for the reply so far.
      reply.hijack();
      await writeWebResponse(response, reply.raw, abort, reply.getHeaders());
    } finally {
      for (const key of opened) calls.close(key);
    }
  }

  /** RFC 9728: the resource `{origin}/mcp`, its authorization server `{origin}`, the scopes. */
  async function protectedResource(request: FastifyRequest, reply: FastifyReply) {
    allowCrossOrigin(reply);
    const org = await organisationOf(request);
    const origin = originOf(org);
    reply.header('Cache-Control', 'public, max-age=300');
    return {
      resource: resourcesOf(origin).mcp,
      authorization_servers: [origin],
      scopes_supported: [...allScopes],
      bearer_methods_supported: ['header'],
      resource_name: `${org.name} on Atrium (MCP)`,
    };
  }

  await app.register(async (scope) => {
    // JSON-RPC bodies stay text until the handler reads them, so a body that is not JSON gets the protocol's
    // parse error rather than the REST API's problem document.
    scope.removeAllContentTypeParsers();
    const asText = (_request: FastifyRequest, body: string | Buffer, done: (err: null, body: string | Buffer) => void) => done(null, body);
    // JSON by name as well as under the catch-all: Fastify keeps the parser it found for a content type only for
    // one registered by name, and otherwise parses the header again on every request (its ContentType: about
    // 1 µs of a tool call, bench/README.md).
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: config.bodyLimitBytes }, asText);
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: config.bodyLimitBytes }, asText);
    scope.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler: mcp });
    for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) scope.get(url, protectedResource);
    for (const url of ['/mcp', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) scope.options(url, preflightHandler(crossOrigin));
  });
}
