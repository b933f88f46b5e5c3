// CORS for the endpoints browser-based clients call from any origin (docs/authentication.md): the two OAuth
// metadata documents, /oauth/token, /oauth/register, /oauth/revoke (oidc-provider answers the token and
// revocation ones itself) and /mcp. `*`, never Access-Control-Allow-Credentials: a browser then sends no cookie
// with such a request, so a page elsewhere can never act with someone's session. The sign-in, consent and admin
// pages answer no CORS request: no header, and a preflight there is an unknown route like any other.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface CrossOriginPolicy {
  /** Access-Control-Allow-Methods of a preflight. */
  methods: string;
  /** Access-Control-Allow-Headers when the preflight names none. */
  headers: string;
  /** The response headers a page may read. */
  expose: string;
}

export function allowAnyOrigin(reply: FastifyReply, policy: CrossOriginPolicy): void {
  reply.header('Access-Control-Allow-Origin', '*');
  reply.header('Access-Control-Expose-Headers', policy.expose);
}

/** The handler of `OPTIONS` on such an endpoint: 204 with what the browser asked to send allowed. */
export function preflightHandler(policy: CrossOriginPolicy) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    allowAnyOrigin(reply, policy);
    reply.header('Access-Control-Allow-Methods', policy.methods);
    reply.header('Access-Control-Allow-Headers', request.headers['access-control-request-headers'] ?? policy.headers);
    reply.header('Access-Control-Max-Age', '86400');
    return reply.code(204).send();
  };
}
