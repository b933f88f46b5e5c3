// Dated revisions of API v1 (spec: Versioning; docs/conventions.md#revisions). An incompatible change is declared once,
// as a RevisionChange: the operations it touches and how to turn the newer shape into the older one (and an
// older request into the newer one). Handlers only ever see and produce the current shape; callers on an
// earlier revision get requests upgraded and responses downgraded, change by change, in date order, and an
// OpenAPI document of their revision.
import type { TSchema } from 'typebox';

export const FIRST_REVISION = '2026-11-01';

export interface RevisionChange {
  /** The revision that introduced the change (YYYY-MM-DD). */
  revision: string;
  description: string;
  /** Operation ids the change applies to. */
  operations: string[];
  /** An older request body → the newer shape. */
  upgradeRequest?(body: any): any;
  /** A newer success response body → the older shape. */
  downgradeResponse?(body: any): any;
  /** The newer response schema → the older one, for the OpenAPI document of earlier revisions. */
  downgradeResponseSchema?(schema: TSchema): TSchema;
  /** The newer request schema → the older one. */
  downgradeRequestSchema?(schema: TSchema): TSchema;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MEMO_SIZE = 1_000;

export function isValidDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value);
}

export function createRevisions(changes: RevisionChange[] = []) {
  const sorted = [...changes].sort((a, b) => a.revision.localeCompare(b.revision));
  const list = [...new Set([FIRST_REVISION, ...sorted.map((c) => c.revision)])].sort();
  const current = list[list.length - 1];
  const resolved = new Map<string, string | undefined>();

  return {
    list,
    current,
    /** Every change, oldest first. */
    changes: sorted as readonly RevisionChange[],
    /** The newest revision on or before `date`; undefined when malformed or before the first revision. */
    resolve(date: string): string | undefined {
      if (!DATE.test(date)) return undefined;
      // Clients send the same few dates on every request; each well-formed one is remembered (ten characters;
      // a full memo starts over), so a request pays for checking a date only the first time.
      const known = resolved.get(date);
      if (known !== undefined || resolved.has(date)) return known;
      let applied: string | undefined;
      if (isValidDate(date)) for (const r of list) if (r <= date) applied = r;
      if (resolved.size >= MEMO_SIZE) resolved.clear();
      resolved.set(date, applied);
      return applied;
    },
    /** Changes made after `revision` that touch the operation, oldest first. */
    changesSince(revision: string, operationId: string): RevisionChange[] {
      return sorted.filter((c) => c.revision > revision && c.operations.includes(operationId));
    },
  };
}

export type Revisions = ReturnType<typeof createRevisions>;

/** The changes of API v1. Add one here for each incompatible change, with its transforms and a test. */
export const apiChanges: RevisionChange[] = [];
