// How a tool call reaches the REST pipeline as the caller (CONTRACT: MCP — "a call runs exactly like the REST
// request"). The call is dispatched as the operation's own REST request inside this process, carrying the
// caller's own credential. An OAuth token issued for `{origin}/mcp` is refused by the REST API (wrong audience),
// so the dispatched request wraps the credential with a secret made at random when the process starts:
//
//   Authorization: Bearer atr_mcp_<process secret>.<the caller's API key or access token>
//
// This authenticator, one more beside API keys and access tokens in the REST authentication hook, accepts that
// form only with this process's secret (compared in constant time), and then authenticates the inner credential
// exactly as /mcp does: an API key as an API key, an access token for the resource `{origin}/mcp`. The secret
// never leaves the process (requests made with app.inject() never touch a socket) and never reaches a log
// (the logger redacts Authorization).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Actor, Authenticator } from '../auth/actor.ts';
import type { AccessTokenAuthenticator } from '../auth/oauth/access-tokens.ts';
import { ApiError } from '../http/api-error.ts';

const PREFIX = 'atr_mcp_';

export function createDispatchCredentials(deps: { apiKeys: Authenticator; accessTokens: AccessTokenAuthenticator }) {
  const secret = randomBytes(32).toString('base64url');
  const secretDigest = createHash('sha256').update(secret).digest();

  /** The credential a caller of /mcp presented, as /mcp accepts it: API keys, and access tokens for `{origin}/mcp`. */
  function authenticateForMcp(token: string, organisationId: string, credentialsEpoch: number): Promise<Actor> {
    if (deps.apiKeys.accepts(token)) return deps.apiKeys.authenticate(token, organisationId, credentialsEpoch);
    if (deps.accessTokens.authenticator.accepts(token)) return deps.accessTokens.authenticate(token, organisationId, credentialsEpoch, 'mcp');
    return Promise.reject(new ApiError('auth.invalid_credential', 'The Authorization header is not a bearer credential this service issued.'));
  }

  const authenticator: Authenticator = {
    accepts: (token) => token.startsWith(PREFIX),
    async authenticate(token, organisationId, credentialsEpoch) {
      const rest = token.slice(PREFIX.length);
      const dot = rest.indexOf('.');
      const presented = createHash('sha256').update(dot === -1 ? '' : rest.slice(0, dot)).digest();
      // Hashing first gives equal lengths, so the comparison takes the same time whatever was sent.
      if (dot === -1 || !timingSafeEqual(presented, secretDigest)) throw new ApiError('auth.invalid_credential', 'The Authorization header is not a bearer credential this service issued.');
      return authenticateForMcp(rest.slice(dot + 1), organisationId, credentialsEpoch);
    },
  };

  return {
    authenticateForMcp,
    authenticator,
    /** The Authorization value of the REST request a tool call of this caller makes. */
    authorizationFor: (token: string) => `Bearer ${PREFIX}${secret}.${token}`,
  };
}

export type DispatchCredentials = ReturnType<typeof createDispatchCredentials>;
