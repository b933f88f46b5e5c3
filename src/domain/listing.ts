// The one implementation of list semantics every resource shares: limit/cursor paging in a stable order,
// `updated_since` (changes after a time, in order of change) and `include_deleted`. Services call it with
// their repository's page query; nothing about paging is written per resource.
import { createHash } from 'node:crypto';
import type { CursorCodec, Page } from '../http/pagination.ts';
import { DEFAULT_LIMIT } from '../http/pagination.ts';
import type { Db } from '../db/database.ts';
import { deletionsRepository, type Tombstone } from './deletions/deletions.repository.ts';

export interface ListParams {
  limit?: number;
  cursor?: string;
  include_deleted?: boolean;
  updated_since?: string;
}

/** What a repository's page query receives. `after` is the last row's sort key values. */
export interface RowPageQuery {
  order: 'id' | 'updated';
  after?: string[];
  updatedSince?: string;
  includeDeleted: boolean;
  where: Record<string, string>;
  limit: number;
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

export interface DeletionParams {
  limit?: number;
  cursor?: string;
  since?: string;
}

/** `GET /<resource>/deletions?since=`: tombstones in order of deletion, with the same paging as every list. */
export function listDeletions(cursors: CursorCodec, db: Db, organisationId: string, resourceType: string, params: DeletionParams): Promise<Page<Tombstone>> {
  return listPage(cursors, {
    list: `${resourceType}/deletions`,
    organisationId,
    params: { limit: params.limit, cursor: params.cursor, updated_since: params.since },
    fetch: (q) => deletionsRepository.page(db, organisationId, resourceType, { since: q.updatedSince, after: q.after, limit: q.limit }),
    map: ({ id, external_id, deleted_at }) => ({ id, external_id, deleted_at }),
    position: (row) => [row.deleted_at, row.tombstone_id],
  });
}
