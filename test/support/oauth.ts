// OAuth test support: oauth4webapi (a client library nobody here wrote) pointed at the running app, and a small
// cookie-keeping "browser" that follows the authorization code flow through our sign-in and consent pages at the
// request level (the same flow runs in Chromium in test/browser/oauth.browser.test.ts).
import http from 'node:http';
import * as oauth from 'oauth4webapi';
import type { TestContext } from './harness.ts';

/** fetch for `*.localhost` origins: Node's fetch does not resolve them, so connect to 127.0.0.1 with the Host header. */
export function loopbackFetch(url: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url instanceof Request ? url.url : url);
  const headers = new Headers(init.headers ?? (url instanceof Request ? url.headers : undefined));
  headers.set('host', target.host);
  const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : String(init.body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port: target.port || 80, method: init.method ?? 'GET', path: `${target.pathname}${target.search}`, headers: Object.fromEntries(headers) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          const status = response.statusCode ?? 500;
          const responseHeaders = new Headers();
          for (const [k, v] of Object.entries(response.headers)) for (const one of v === undefined ? [] : Array.isArray(v) ? v : [v]) responseHeaders.append(k, one);
          const noBody = status === 204 || status === 304;
          resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, headers: responseHeaders }));
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Options every oauth4webapi call takes here: our fetch, and plain http on loopback. */
export const clientOptions = { [oauth.customFetch]: loopbackFetch, [oauth.allowInsecureRequests]: true } as const;

/** RFC 8414 discovery, as a client with nothing but the origin does it. */
export async function discover(origin: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(origin);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...clientOptions, algorithm: 'oauth2' }));
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export async function pkce(): Promise<Pkce> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/** Follows redirects by hand with a cookie jar, at the organisation's address, as a browser would. */
export function createFlowBrowser(t: TestContext, origin: string) {
  const cookies = new Map<string, string>();
  async function request(method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
    const target = new URL(url, origin);
    const headers: Record<string, string> = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await loopbackFetch(target, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(pair.slice(0, eq));
      else cookies.set(pair.slice(0, eq), value);
    }
    return { status: res.status, location: res.headers.get('location') ?? undefined, html: await res.text(), headers: res.headers };
  }
  const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  return {
    cookies,
    request,
    /** GET `url`, then follow same-origin redirects; stops at a page (2xx/4xx) or a redirect elsewhere. */
    async go(url: string) {
      let res = await request('GET', url);
      for (let i = 0; i < 10 && res.location && new URL(res.location, origin).origin === origin; i++) res = await request('GET', res.location);
      return res;
    },
    async signIn(email: string, password: string) {
      const page = await request('GET', '/login');
      return request('POST', '/login', { email, password, _csrf: csrf(page.html) });
    },
    /** Answers the consent page shown last, and follows where that leads. */
    async decide(consentHtml: string, decision: 'allow' | 'deny') {
      const action = /<form method="post" action="([^"]+)" class="actions">/.exec(consentHtml)?.[1];
      if (!action) throw new Error('no consent form on the page');
      const res = await request('POST', action, { decision, _csrf: csrf(consentHtml) });
      return res.location ? this.go(res.location) : res;
    },
  };
}
