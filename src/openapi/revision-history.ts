// The dated revisions of API v1 and what changed in each, from the one list of changes (`apiChanges` in
// operations/revisions.ts): `GET /api/v1/revisions` answers it as JSON and the revisions page renders it.
import type { Operation } from '../operations/operation.ts';
import type { Revisions } from '../operations/revisions.ts';

export interface RevisionEntry {
  revision: string;
  current: boolean;
  /** What changed on this date; the first revision changed nothing, it began v1. */
  changes: { description: string; operations: { id: string; method: string; path: string; tag: string }[] }[];
}

export interface RevisionHistory {
  current: string;
  /** Newest first. */
  data: RevisionEntry[];
}

export function revisionHistory(revisions: Revisions, operations: readonly Operation[]): RevisionHistory {
  const byId = new Map(operations.map((op) => [op.id, op]));
  const data = [...revisions.list].reverse().map((revision) => ({
    revision,
    current: revision === revisions.current,
    changes: revisions.changes
      .filter((c) => c.revision === revision)
      .map((c) => ({
        description: c.description,
        operations: c.operations.flatMap((id) => {
          const op = byId.get(id);
          return op ? [{ id, method: op.method, path: op.path, tag: op.tag }] : [];
        }),
      })),
  }));
  return { current: revisions.current, data };
}
