// What our HTTP layer does to a request before the organisation's authorization server (oidc-provider) sees it.
// These are the places where the contract asks for something the library does not do, solved around it:
// - a client secret is stored only as its SHA-256, so the secret a client presents (Basic header or body) is
//   replaced by its SHA-256 before the provider compares the two;
// - a client-credentials request without `scope` gets the client's registered scopes (the provider would issue
//   a token with none);
// - self-registration (RFC 7591) is only for public, authorization-code clients with loopback or https redirect
//   URIs, and only where the organisation allows it;
// - the provider is told the public origin (X-Forwarded-Proto/-Host), never what the client sent.
import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { isScope } from '../../access/capabilities.ts';
import { hashClientSecret } from './clients.service.ts';
import { redirectUriProblem } from './redirect-uris.ts';

/** An RFC 6749 / 7591 error, sent as JSON by the caller. */
export class OAuthRequestError extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string, description: string) {
    super(description);
    this.status = status;
    this.error = error;
  }
}

export function forwardedHeaders(headers: IncomingMessage['headers'], origin: string, clientAddress: string): IncomingMessage['headers'] {
  const url = new URL(origin);
  return { ...headers, 'x-forwarded-proto': url.protocol.slice(0, -1), 'x-forwarded-host': url.host, 'x-forwarded-for': clientAddress };
}

/** The client id of a Basic header (RFC 6749 2.3.1: form-encoded before base64), or undefined. */
function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
  if (!authorization || !/^Basic /i.test(authorization)) return undefined;
  const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

const formDecode = (value: string): string => {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
};

/** The Authorization header with the presented secret replaced by its SHA-256 (the id as the client sent it). */
export function hashBasicSecret(authorization: string | undefined): string | undefined {
  const basic = basicCredentials(authorization);
  if (!basic) return authorization;
  return `Basic ${Buffer.from(`${basic.id}:${hashClientSecret(formDecode(basic.secret))}`).toString('base64')}`;
}

/** The client a token-endpoint request names (Basic header or body). */
export function clientIdOf(authorization: string | undefined, params: URLSearchParams): string | undefined {
  const basic = basicCredentials(authorization);
  return basic ? formDecode(basic.id) : (params.get('client_id') ?? undefined);
}

/** A form body (token, revocation, introspection) as the provider should see it. */
export async function rewriteForm(body: string, authorization: string | undefined, registeredScopes: (clientId: string) => Promise<string[] | undefined>): Promise<string> {
  const params = new URLSearchParams(body);
  const secret = params.get('client_secret');
  if (secret !== null) params.set('client_secret', hashClientSecret(secret));
  if (params.get('grant_type') === 'client_credentials' && !params.has('scope')) {
    const clientId = clientIdOf(authorization, params);
    const scopes = clientId === undefined ? undefined : await registeredScopes(clientId);
    if (scopes && scopes.length > 0) params.set('scope', scopes.join(' '));
  }
  return params.toString();
}

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, item]) => key.includes('\u0000') || holdsNul(item));
}

/** A self-registration (RFC 7591) checked and narrowed to what the contract allows; the JSON the provider gets. */
export function rewriteRegistration(body: string): string {
  let metadata: Record<string, unknown>;
  try {
    metadata = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new OAuthRequestError(400, 'invalid_client_metadata', 'The registration request must be a JSON object.');
  }
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw new OAuthRequestError(400, 'invalid_client_metadata', 'The registration request must be a JSON object.');
  // docs/conventions.md#errors: text fields refuse NUL (PostgreSQL cannot store it).
  if (holdsNul(metadata)) throw new OAuthRequestError(400, 'invalid_client_metadata', 'Client metadata must not contain the NUL character.');
  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') {
    throw new OAuthRequestError(400, 'invalid_client_metadata', 'Only public clients may register themselves: token_endpoint_auth_method must be "none". An administrator registers confidential clients.');
  }
  const grants = metadata.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new OAuthRequestError(400, 'invalid_client_metadata', 'A client that registers itself may use the authorization_code grant (and its refresh tokens) only.');
  }
  const responseTypes = metadata.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code')) throw new OAuthRequestError(400, 'invalid_client_metadata', 'response_types may only be ["code"].');
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthRequestError(400, 'invalid_redirect_uri', 'redirect_uris must list at least one redirect URI.');
  for (const uri of uris) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : 'is not a string';
    if (problem) throw new OAuthRequestError(400, 'invalid_redirect_uri', `${String(uri)} ${problem}.`);
  }
  if (metadata.scope !== undefined) {
    const unknown = typeof metadata.scope === 'string' ? metadata.scope.split(' ').filter((s) => s !== '' && !isScope(s)) : ['(not a string)'];
    if (unknown.length > 0) throw new OAuthRequestError(400, 'invalid_client_metadata', `Unknown scope: ${unknown.join(' ')}.`);
  }
  return JSON.stringify({ ...metadata, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
}

/**
 * The request again, with a body of our choosing: oidc-provider reads the body from the request stream, which
 * Fastify has already read.
 */
export function replayRequest(raw: IncomingMessage, headers: IncomingMessage['headers'], body: string): IncomingMessage {
  const replay = new IncomingMessage(raw.socket as Socket);
  replay.method = raw.method;
  replay.url = raw.url;
  replay.httpVersion = raw.httpVersion;
  replay.httpVersionMajor = raw.httpVersionMajor;
  replay.httpVersionMinor = raw.httpVersionMinor;
  replay.headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  // Marks the message as whole, so that ending it never tears down the shared socket.
  replay.complete = true;
  replay.push(body);
  replay.push(null);
  return replay;
}
