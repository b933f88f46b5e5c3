// The one implementation of list semantics every resource shares: limit/cursor paging in a stable order,
// `updated_since` (changes after a time, in order of change) and `include_deleted`. Services call it with
// their repository's page query; nothing about paging is written per resource. Repositories see only
// RowPageQuery (db/tenant-rows.ts).
import { createHash } from 'node:crypto';
import type { CursorCodec, Page } from './pagination.ts';
import { DEFAULT_LIMIT } from './pagination.ts';
import type { Db } from '../db/database.ts';
import type { RowPageQuery } from '../db/tenant-rows.ts';

export interface ListParams {
  limit?: number;
  cursor?: string;
  include_deleted?: boolean;
  updated_since?: string;
}

export interface ListSpec<R, T> {
  list: string;
  organisationId: string;
  params: ListParams;
  /** Equality filters besides the shared parameters (e.g. `course_id`). */
  filters?: Record<string, string | undefined>;
  fetch(query: RowPageQuery): Promise<R[]>;
  map(row: R): T;
  /** The sort key values of a row, for the next cursor; by default (id) or (updated_at, id). */
  position?(row: R): string[];
}

const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 16);

const defaultPosition = (order: 'id' | 'updated', row: { id: string; updated_at?: string }) => (order === 'id' ? [row.id] : [row.updated_at!, row.id]);

type ListBinding = Pick<ListSpec<unknown, unknown>, 'list' | 'organisationId' | 'params' | 'filters'>;

/** What a cursor of this list is bound to: the list, the organisation, and a digest of the filters. */
function bindingOf(spec: ListBinding) {
  const where: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.filters ?? {})) if (v !== undefined) where[k] = v;
  const includeDeleted = spec.params.include_deleted ?? false;
  // The cursor is only valid for the same filters: a changed filter would skip or repeat rows.
  const expected = { l: spec.list, o: spec.organisationId, f: digest([where, includeDeleted, spec.params.updated_since ?? null]) };
  return { where, includeDeleted, expected };
}

/** The cursor a page of this list ending at `position` hands out (listPage's own; benchmarks start deep walks with it). */
export function cursorAt(cursors: CursorCodec, spec: ListBinding, position: string[]): string {
  return cursors.encode({ ...bindingOf(spec).expected, k: position });
}

export async function listPage<R extends { id: string; updated_at?: string }, T>(cursors: CursorCodec, spec: ListSpec<R, T>): Promise<Page<T>> {
  const limit = spec.params.limit ?? DEFAULT_LIMIT;
  const { where, includeDeleted, expected } = bindingOf(spec);
  const order = spec.params.updated_since === undefined ? 'id' : 'updated';
  const after = spec.params.cursor === undefined ? undefined : cursors.decode(spec.params.cursor, expected);
  const updatedSince = spec.params.updated_since === undefined ? undefined : new Date(spec.params.updated_since).toISOString();
  const rows = await spec.fetch({ order, after, updatedSince, includeDeleted, where, limit });
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(spec.map),
    page: {
      next_cursor: hasMore ? cursors.encode({ ...expected, k: spec.position ? spec.position(last) : defaultPosition(order, last) }) : null,
      has_more: hasMore,
      limit,
    },
  };
}

/**
 * A resource's list as its service offers it, when the repository's page query does the paging: what the
 * declaration's handler calls with the request's parameters. `filters` picks the equality filters out of them,
 * named by the column each compares.
 */
export function resourceList<R extends { id: string; updated_at?: string }, T, P extends ListParams = ListParams>(
  cursors: CursorCodec,
  spec: Pick<ListSpec<R, T>, 'list' | 'map'> & {
    page(db: Db, organisationId: string, query: RowPageQuery): Promise<R[]>;
    filters?(params: P): Record<string, string | undefined>;
    /** The sort key values of a row, where the repository pages in an order of its own. */
    position?(row: R, params: P): string[];
  },
): (db: Db, organisationId: string, params: P) => Promise<Page<T>> {
  return (db, organisationId, params) =>
    listPage(cursors, {
      list: spec.list,
      organisationId,
      params,
      filters: spec.filters?.(params),
      fetch: (q) => spec.page(db, organisationId, q),
      map: spec.map,
      position: spec.position && ((row) => spec.position!(row, params)),
    });
}
