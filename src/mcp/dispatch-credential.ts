// How a tool call reaches the REST pipeline as the caller (docs/mcp.md#tools — "a call runs exactly like the REST
// request"). The call is dispatched as the operation's own REST request inside this process (rest-dispatch.ts).
// /mcp has already done, for this very request, what the REST pipeline's first two steps do: read the
// organisation (with its plan and credentials epoch, fresh) and authenticate the caller's credential (an API
// key, or an access token for the resource `{origin}/mcp`, which the REST API itself refuses as the wrong
// audience). Doing both again would read the same row twice and verify the same credential twice, so /mcp
// hands them over: while the call runs, it is registered here under a handle, and the dispatched request
// carries
//
//   Authorization: Bearer atr_mcp_<process secret>.<handle>
//
// The secret is made at random when the process starts and compared in constant time; the handle names a call
// in flight and is forgotten when the call ends. The pipeline's tenancy step takes the organisation of such a
// request from here (when the request is for that organisation's address), and its authentication step takes
// the actor; every later step (scope, capability, entitlement, limits, revision, idempotency, transaction,
// events) runs as for any request. The secret never leaves the process (requests made with app.inject() never
// touch a socket) and never reaches a log (the logger redacts Authorization); a guessed or stale value is a 401.
import { randomBytes } from 'node:crypto';
import { sameText } from '../crypto/same-text.ts';
import type { FastifyRequest } from 'fastify';
import type { Actor, Authenticator } from '../access/actor.ts';
import type { AccessTokenAuthenticator } from '../auth/oauth/access-tokens.ts';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import { ApiError } from '../errors/api-error.ts';
import { DISPATCH_TOKEN_PREFIX } from '../http/dispatch-token.ts';
export { DISPATCH_TOKEN_PREFIX };

/** What the Authorization of a dispatched tool call starts with after `Bearer ` (the audit log tells MCP calls by it). */
const PREFIX = DISPATCH_TOKEN_PREFIX;
const HEADER_PREFIX = `Bearer ${PREFIX}`;

interface CallInFlight {
  organisation: Organisation;
  actor: Actor;
}

const notIssued = () => new ApiError('auth.invalid_credential', 'The Authorization header is not a bearer credential this service issued.');

export function createDispatchCredentials(deps: { apiKeys: Authenticator; accessTokens: AccessTokenAuthenticator }) {
  const secret = randomBytes(32).toString('base64url');
  const inFlight = new Map<string, CallInFlight>();
  let lastHandle = 0;

  /** The credential a caller of /mcp presented, as /mcp accepts it: API keys, and access tokens for `{origin}/mcp`. */
  function authenticateForMcp(token: string, organisationId: string, credentialsEpoch: number): Promise<Actor> {
    if (deps.apiKeys.accepts(token)) return deps.apiKeys.authenticate(token, organisationId, credentialsEpoch);
    if (deps.accessTokens.authenticator.accepts(token)) return deps.accessTokens.authenticate(token, organisationId, credentialsEpoch, 'mcp');
    return Promise.reject(notIssued());
  }

  /** The call a dispatched request's token names, when it carries this process's secret and the call is still running. */
  function callOf(token: string): CallInFlight | undefined {
    const end = PREFIX.length + secret.length;
    if (!token.startsWith(PREFIX) || token.charCodeAt(end) !== 0x2e /* . */) return undefined;
    if (!sameText(token.slice(PREFIX.length, end), secret)) return undefined;
    return inFlight.get(token.slice(end + 1));
  }

  // The pipeline's HandedOverTenancy (http/pipeline.ts), matched by shape: http stays below mcp.
  const tenancy = {
    organisationOf(request: FastifyRequest): Organisation | undefined {
      const header = request.headers.authorization;
      if (header === undefined || !header.startsWith(HEADER_PREFIX)) return undefined;
      const call = callOf(header.slice('Bearer '.length));
      return call !== undefined && call.organisation.address === request.hostname.toLowerCase() ? call.organisation : undefined;
    },
  };

  const authenticator: Authenticator = {
    accepts: (token) => token.startsWith(PREFIX),
    async authenticate(token, organisationId) {
      const call = callOf(token);
      if (call === undefined || call.organisation.id !== organisationId) throw notIssued();
      return call.actor;
    },
  };

  /**
   * Runs `dispatch` with the Authorization value of the REST request that carries this call: the organisation
   * and the actor /mcp established, valid until `dispatch` settles.
   */
  async function dispatching<T>(organisation: Organisation, actor: Actor, dispatch: (authorization: string) => Promise<T>): Promise<T> {
    const handle = (++lastHandle).toString(36);
    inFlight.set(handle, { organisation, actor });
    try {
      return await dispatch(`${HEADER_PREFIX}${secret}.${handle}`);
    } finally {
      inFlight.delete(handle);
    }
  }

  return { authenticateForMcp, authenticator, tenancy, dispatching };
}

export type DispatchCredentials = ReturnType<typeof createDispatchCredentials>;
