// A browser-like client for request-level page tests over app.inject(): it keeps cookies per host, reads the
// CSRF token of the last page it loaded and sends forms as a browser would (application/x-www-form-urlencoded).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface PageResponse {
  status: number;
  headers: LightMyRequestResponse['headers'];
  html: string;
  location: string | undefined;
  setCookies: string[];
}

export type Form = Record<string, string | string[]>;

export function csrfTokenIn(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
}

/** The text of the element marked data-testid (a secret shown once), if the page has it. */
export function testIdText(html: string, testId: string): string | undefined {
  return new RegExp(`data-testid="${testId}"[^>]*>([^<]*)<`).exec(html)?.[1];
}

export function encodeForm(form: Form): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

export function createPageClient(app: FastifyInstance, host: string, options: { remoteAddress?: string } = {}) {
  const cookies = new Map<string, string>();
  let lastToken: string | undefined;

  function remember(res: LightMyRequestResponse): string[] {
    const raw = res.headers['set-cookie'];
    const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    for (const line of list) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now()) || attributes.some((a) => /^\s*max-age=0/i.test(a));
      if (expired || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    return list;
  }

  async function request(method: 'GET' | 'POST', path: string, payload?: string, headers: Record<string, string> = {}): Promise<PageResponse> {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await app.inject({
      method,
      url: path,
      headers: { host, ...(cookie ? { cookie } : {}), ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      ...(payload !== undefined ? { payload } : {}),
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    });
    const setCookies = remember(res);
    const html = res.body;
    const token = csrfTokenIn(html);
    if (token) lastToken = token;
    return { status: res.statusCode, headers: res.headers, html, location: res.headers.location as string | undefined, setCookies };
  }

  return {
    cookies,
    get: (path: string, headers?: Record<string, string>) => request('GET', path, undefined, headers),
    /** Sends a form with the CSRF token of the last page loaded (unless `csrf` says otherwise). */
    post: (path: string, form: Form = {}, opts: { csrf?: string | null } = {}) => {
      const token = opts.csrf === undefined ? lastToken : opts.csrf;
      return request('POST', path, encodeForm(token === null || token === undefined ? form : { ...form, _csrf: token }));
    },
    async signIn(email: string, password: string): Promise<PageResponse> {
      await request('GET', '/login');
      return this.post('/login', { email, password });
    },
    /** Loads a page and follows one redirect, as a browser does after a form. */
    async follow(res: PageResponse): Promise<PageResponse> {
      if (!res.location) throw new Error(`no redirect: ${res.status}`);
      return request('GET', res.location);
    },
  };
}

export type PageClient = ReturnType<typeof createPageClient>;
