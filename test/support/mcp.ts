// MCP test support: the official SDK client (a client nobody here wrote) against the app listening on loopback,
// through loopbackFetch so that `*.localhost` organisation addresses resolve.
import { Client, StreamableHTTPClientTransport, type OAuthClientProvider } from '@modelcontextprotocol/client';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import type { TestContext } from './harness.ts';
import { loopbackFetch } from './oauth.ts';

export interface McpClientOptions {
  /** A bearer credential (API key or access token); leave out with `authProvider`. */
  credential?: string;
  /** `legacy`: the 2025 initialize handshake (2025-11-25); `modern`: revision 2026-07-28. */
  era?: 'legacy' | 'modern';
  /** Answers the server's elicitations (declares the elicitation capability). */
  onElicit?: (message: string) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
  authProvider?: OAuthClientProvider;
}

export const mcpUrl = (t: TestContext, org: Organisation) => new URL(`${t.originOf(org.address)}/mcp`);

export function mcpTransport(t: TestContext, org: Organisation, options: McpClientOptions = {}) {
  return new StreamableHTTPClientTransport(mcpUrl(t, org), {
    fetch: loopbackFetch as never,
    ...(options.credential ? { requestInit: { headers: { authorization: `Bearer ${options.credential}` } } } : {}),
    ...(options.authProvider ? { authProvider: options.authProvider } : {}),
  });
}

export async function connectMcp(t: TestContext, org: Organisation, options: McpClientOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'atrium-tests', version: '1.0.0' },
    {
      ...(options.onElicit ? { capabilities: { elicitation: { form: {} } } } : {}),
      versionNegotiation: options.era === 'legacy' ? { mode: 'legacy' } : { mode: { pin: '2026-07-28' } },
    },
  );
  if (options.onElicit) {
    const answer = options.onElicit;
    client.setRequestHandler('elicitation/create', async (request) => answer(request.params.message) as never);
  }
  await client.connect(mcpTransport(t, org, options));
  return client;
}

/** One JSON-RPC POST to /mcp as a client would send it, for what the SDK client never sends (bad input). */
export async function postMcp(t: TestContext, org: Organisation, body: string, headers: Record<string, string> = {}) {
  const res = await loopbackFetch(mcpUrl(t, org), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await res.text();
  // A 2025-era answer may come as one server-sent event.
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  let json: any;
  try {
    json = JSON.parse(data);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
