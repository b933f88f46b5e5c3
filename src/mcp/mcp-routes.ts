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

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;
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
  const loadServe = loadOnce(async () => {
    const [{ createMcpHandler }, { toNodeHandler }, { createToolServerFactory }] = await Promise.all([
      import('@modelcontextprotocol/server'),
      import('@modelcontextprotocol/node'),
      import('./tool-server.ts'),
    ]);
    const made = createMcpHandler(
      createToolServerFactory({
        tools: buildTools(deps.operations),
        confirmations,
        callOperation: createToolCaller({ pipeline: deps.pipeline, revision: deps.revisions.current, errorsUrl: config.errorsUrl }),
        errorsUrl: config.errorsUrl,
        version: SERVER_VERSION,
      }),
      { onerror: (err) => app.log.debug({ err }, 'MCP request refused') },
    );
    handler = made;
    return toNodeHandler(made, { onerror: (err) => app.log.error({ err }, 'MCP request failed') });
  });
  app.addHook('onClose', async () => handler?.close());

  const originOf = (org: Organisation) => publicOrigin(config, org.address);
  const challengeOf = (org: Organisation) => `Bearer resource_metadata="${originOf(org)}/.well-known/oauth-protected-resource/mcp"`;

  async function organisationOf(request: FastifyRequest): Promise<Organisation> {
    const org = await services.organisations.findByAddress(request.hostname.toLowerCase());
    if (!org) throw new ApiError('tenancy.unknown_organisation', `No organisation is served at ${request.hostname}.`);
    return org;
  }

  async function authenticate(request: FastifyRequest, org: Organisation) {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new ApiError('auth.missing_credential', 'Send `Authorization: Bearer <access token for this MCP server, or API key>`.', { headers: { 'WWW-Authenticate': challengeOf(org) } });
    }
    const token = BEARER.exec(header)?.[1] ?? '';
    try {
      return { token, actor: await services.mcpCredentials.authenticateForMcp(token, org.id, org.credentials_epoch) };
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw new ApiError(err.code, err.detail, { headers: { 'WWW-Authenticate': `${challengeOf(org)}, error="invalid_token"` } });
      throw err;
    }
  }

  async function mcp(request: FastifyRequest, reply: FastifyReply) {
    allowCrossOrigin(reply);
    reply.header('Cache-Control', 'no-store');
    const org = await organisationOf(request);
    // spec: What the service does 6 — without the API entitlement every MCP connection is refused.
    if (org.plan === 'no-api') throw new ApiError('commerce.plan_entitlement', "This organisation's plan does not include the API, so its MCP server is not available.");
    const settings = await services.mcpSettings.current(org);
    if (!settings.enabled) throw new ApiError('mcp.disabled', "This organisation's administrator has switched its MCP server off.");
    const { token, actor } = await authenticate(request, org);
    request.organisation = org;
    request.actor = actor;

    let message: unknown;
    if (request.method === 'POST') {
      try {
        message = JSON.parse(typeof request.body === 'string' ? request.body : '');
      } catch {
        return jsonRpcError(reply, -32700, 'Parse error: the body is not JSON.');
      }
      if (Array.isArray(message)) return jsonRpcError(reply, -32600, 'Invalid Request: batches are not supported; send one JSON-RPC message per request.');
    }
    // A tools/call is counted by its operation's pipeline, after its scope and capability as a REST request is
    // (tool-call.ts), so once; everything else here.
    if ((message as { method?: unknown } | undefined)?.method !== 'tools/call') {
      for (const limit of deps.limits) await limit(request, reply);
    }

    const call: McpCall = { organisation: org, actor, settings, requestId: request.id, exchange: { request, reply } };
    const auth: AuthInfo = { token, clientId: actor.credentialId, scopes: [...actor.scopes], extra: { call } };
    const serve = await loadServe();
    // The SDK writes the answer itself: what Fastify holds for the reply so far goes with it.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string);
    await serve(Object.assign(request.raw, { auth }), reply.raw, message);
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
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: config.bodyLimitBytes }, (_request, body, done) => done(null, body));
    scope.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler: mcp });
    for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) scope.get(url, protectedResource);
    for (const url of ['/mcp', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) scope.options(url, preflightHandler(crossOrigin));
  });
}
