// Escaping and small markup helpers for the documentation pages.
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Our own prose with `backticks` as code: escaped first, so only this markup is added. */
export const markdownCode = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The reference's anchor for an operation: `#tag/<tag slug>/<operationId>` (reference.js sets the slug). */
export const referenceAnchor = (op: { tag: string; id: string }): string => `tag/${op.tag.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}/${op.id}`;

/** The pages' Content-Security-Policy: everything from this origin, no inline script. Styles may be inline:
 * the reference renderer sets them on its elements. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
