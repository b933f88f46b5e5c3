// What every page request shares: the organisation (from the host, as for the API), the signed-in person
// (from the session cookie), rendering inside the layout, and the errors that become pages. Pages never query
// and never decide permissions: routes build plain view models from services.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Capability } from '../access/capabilities.ts';
import type { Flash, SessionService, SignedInPerson } from '../auth/sessions.service.ts';
import { navigationFor } from './navigation.ts';

export const SESSION_COOKIE = 'atrium_session';

declare module 'fastify' {
  interface FastifyRequest {
    signedIn?: SignedInPerson;
    /** The session cookie's token, kept for sealing and opening the flash (never logged). */
    sessionToken?: string;
  }
  interface FastifyContextConfig {
    /** Pages under /admin: the capability the page needs; null when any signed-in person may see it. */
    adminPage?: { capability: Capability | null };
  }
}

/** A refusal shown as a page: 403, 404, 412, 429 and the like. */
export class PageError extends Error {
  readonly status: number;
  readonly title: string;
  readonly headers: Record<string, string>;
  constructor(status: number, title: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.title = title;
    this.headers = headers;
  }
}

/** The value CSRF tokens are bound to: the session, or (signing in) none yet. */
export const csrfUserInfo = (request: FastifyRequest): string => request.signedIn?.sessionId ?? 'signed-out';

export interface PageModel {
  title: string;
  [key: string]: unknown;
}

export function createPageRenderer(sessions: SessionService) {
  /** Renders `view` inside the layout. A GET page shows (and so consumes) the flash left by the POST before it. */
  return async function renderPage(request: FastifyRequest, reply: FastifyReply, view: string, model: PageModel, status = 200): Promise<FastifyReply> {
    const person = request.signedIn;
    let flash: Flash | undefined;
    if (person && request.method === 'GET' && request.sessionToken) flash = await sessions.takeFlash(person.sessionId, request.sessionToken);
    const path = request.url.split('?')[0];
    const html = await reply.viewAsync(view, {
      organisationName: request.organisation?.name,
      person: person ? { name: person.name, email: person.email } : null,
      nav: person && path.startsWith('/admin') ? navigationFor(person.capabilities, path) : [],
      csrfToken: reply.generateCsrf({ userInfo: csrfUserInfo(request) }),
      flash,
      ...model,
    });
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  };
}

export type RenderPage = ReturnType<typeof createPageRenderer>;

/** Post/redirect/get: a message for the next page, then a 303 there. */
export async function redirectWithFlash(sessions: SessionService, request: FastifyRequest, reply: FastifyReply, location: string, flash: Flash): Promise<FastifyReply> {
  if (request.signedIn && request.sessionToken) await sessions.setFlash(request.signedIn.sessionId, request.sessionToken, flash);
  return reply.redirect(location, 303);
}
