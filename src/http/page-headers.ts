// The security headers of every HTML answer of the service (docs/authentication.md): the sign-in, consent and
// admin pages, and the pages oidc-provider renders itself (its error page and the form_post page). One set, so
// that a page the library writes is held to what our own pages are.
import type { FastifyHelmetOptions } from '@fastify/helmet';

export function pageHelmetOptions(secure: boolean): FastifyHelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        // No inline script: the one exception, oidc-provider's form_post page, adds the SHA-256 of its script
        // to this directive itself (it reads the header already set on the response).
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        // No form-action: Chrome applies it to the redirects after a form, and signing in or consenting for
        // an OAuth client ends in a redirect to that client's own address (as form_post ends in a form to it).
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: secure,
    crossOriginEmbedderPolicy: false,
  };
}
