// The OAuthClientProvider an MCP client application gives the official SDK: it keeps what the SDK's OAuth flow
// hands it (registration, PKCE verifier, tokens, discovery) and remembers where the SDK sent the person to sign
// in, so that a test can take a browser (Chromium, or the request-level flow browser) there.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';

type Provider = Required<Pick<OAuthClientProvider, 'clientInformation' | 'saveClientInformation' | 'tokens' | 'saveTokens' | 'redirectToAuthorization' | 'saveCodeVerifier' | 'codeVerifier' | 'saveDiscoveryState' | 'discoveryState'>> & OAuthClientProvider;

export class TestOAuthProvider implements Provider {
  readonly redirectUrl: string;
  readonly clientName: string;
  readonly clientMetadataUrl: string | undefined;
  authorizationUrl: URL | undefined;
  private client: unknown;
  private stored: unknown;
  private verifier = '';
  private discovery: unknown;

  constructor(redirectUrl: string, clientName: string, options: { clientMetadataUrl?: string } = {}) {
    this.redirectUrl = redirectUrl;
    this.clientName = clientName;
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get clientMetadata() {
    return { client_name: this.clientName, redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client as never;
  }
  saveClientInformation(info: unknown) {
    this.client = info;
  }
  tokens() {
    return this.stored as never;
  }
  saveTokens(tokens: unknown) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
  get accessToken(): string | undefined {
    return (this.stored as { access_token?: string } | undefined)?.access_token;
  }
}

/** The client application's loopback callback: records each redirect back to it. */
export async function startCallbackServer() {
  const callbacks: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://127.0.0.1');
    if (url.pathname === '/callback') callbacks.push(url);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Back in the assistant</title><h1>Back in the assistant</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    callbacks,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
