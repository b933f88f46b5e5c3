// The credentials /mcp accepts (docs/authentication.md#oauth-2): API keys, and access tokens issued for the
// resource `{origin}/mcp` (which the REST API itself refuses as the wrong audience). The actor found here is the
// one every tool call of the request runs as (tool-call.ts).
import type { Actor, Authenticator } from '../access/actor.ts';
import type { AccessTokenAuthenticator } from '../auth/oauth/access-tokens.ts';
import { ApiError } from '../errors/api-error.ts';
import type { MaybeAsync } from '../maybe-async.ts';

const notIssued = () => new ApiError('auth.invalid_credential', 'The Authorization header is not a bearer credential this service issued.');

export function createMcpCredentials(deps: { apiKeys: Authenticator; accessTokens: AccessTokenAuthenticator }) {
  /** The credential a caller of /mcp presented, checked under the organisation's credentials epoch. */
  function authenticateForMcp(token: string, organisationId: string, credentialsEpoch: number): MaybeAsync<Actor> {
    if (deps.apiKeys.accepts(token)) return deps.apiKeys.authenticate(token, organisationId, credentialsEpoch);
    if (deps.accessTokens.authenticator.accepts(token)) return deps.accessTokens.authenticate(token, organisationId, credentialsEpoch, 'mcp');
    return Promise.reject(notIssued());
  }
  return { authenticateForMcp };
}

export type McpCredentials = ReturnType<typeof createMcpCredentials>;
