// Which subscriptions an event goes to: by its type (exact, `area.*`, `*`) and the subscription's filters.
import { eventCatalog } from '../../events/catalog.ts';

export function isValidEventPattern(pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return Object.keys(eventCatalog).some((t) => t.startsWith(pattern.slice(0, -1)));
  return Object.hasOwn(eventCatalog, pattern);
}

export function typeMatches(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

export type Filters = Record<string, string | string[]> | null;

/** Every filter key must name an identifier in the event's data with one of the listed values. */
export function filtersMatch(filters: Filters, data: Record<string, unknown>): boolean {
  if (!filters) return true;
  return Object.entries(filters).every(([key, wanted]) => {
    const value = data[key];
    return typeof value === 'string' && (Array.isArray(wanted) ? wanted.includes(value) : wanted === value);
  });
}

/** The body of a delivery (docs/webhooks.md): type, time of the event, identifiers and a short summary. */
export function deliveryBody(type: string, occurredAt: string, data: unknown): string {
  return JSON.stringify({ type, timestamp: occurredAt, data });
}
