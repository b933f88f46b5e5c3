// Reads and soft deletes shared by every tenant table with (organisation_id, id, deleted_at). Each area's
// repository builds on these so that the organisation filter (ARCHITECTURE rule 6) is written once.
import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { preparedQuery } from './prepared.ts';
import { deferredWrite, type FailureTranslation } from './deferred-writes.ts';
import type { Tables } from './tables.ts';
import { andThen, type MaybeAsync } from '../maybe-async.ts';

/** What a repository's page query receives (from listPage, src/operations/listing.ts). `after` is the last row's sort key values. */
export interface RowPageQuery {
  order: 'id' | 'updated';
  after?: string[];
  updatedSince?: string;
  includeDeleted: boolean;
  where: Record<string, string>;
  limit: number;
}

export type TenantTableName = {
  [K in keyof Tables]: Tables[K] extends { organisation_id: string; id: string; deleted_at: string | null; updated_at: string } ? K : never;
}[keyof Tables];

export function tenantRows<T extends TenantTableName>(table: T) {
  type Row = Selectable<Tables[T]>;
  // Kysely cannot narrow column names through a generic table; the casts stay inside this file.
  const from = (db: Db) => (db as Db).selectFrom(table as TenantTableName).selectAll() as any;
  const byId = preparedQuery((db: Db, organisationId: string, id: string) => from(db).where('organisation_id', '=', organisationId).where('id', '=', id));
  return {
    /** At once where the database answers at once (src/maybe-async.ts): every resource's read by id starts here. */
    findById(db: Db, organisationId: string, id: string): MaybeAsync<Row | undefined> {
      return andThen(byId.now(db, organisationId, id), (rows) => rows[0] as Row | undefined);
    },
    async findByExternalId(db: Db, organisationId: string, externalId: string): Promise<Row | undefined> {
      return from(db).where('organisation_id', '=', organisationId).where('external_id', '=', externalId).executeTakeFirst();
    },
    /**
     * Keyset page: by id (UUIDv7, so creation order), or by (updated_at, id) for changes since a time.
     * Fetches one row more than asked, so the caller knows whether another page follows. `refine` adds a
     * condition that is not an equality.
     */
    async page(db: Db, organisationId: string, q: RowPageQuery, refine?: (query: any) => any): Promise<Row[]> {
      let query = from(db).where('organisation_id', '=', organisationId);
      // A filter that is not an equality (users by role, inside a JSON array).
      if (refine) query = refine(query);
      for (const [column, value] of Object.entries(q.where)) query = query.where(column, '=', value);
      if (!q.includeDeleted) query = query.where('deleted_at', 'is', null);
      if (q.order === 'id') {
        if (q.after) query = query.where('id', '>', q.after[0]);
        return query.orderBy('id').limit(q.limit + 1).execute();
      }
      if (q.updatedSince) query = query.where('updated_at', '>', q.updatedSince);
      if (q.after) query = query.where((eb: any) => eb(eb.refTuple('updated_at', 'id'), '>', eb.tuple(q.after![0], q.after![1])));
      return query.orderBy('updated_at').orderBy('id').limit(q.limit + 1).execute();
    },
    /**
     * With `onFailure` (what a failure means: a unique key taken), a deferred write (deferred-writes.ts): on
     * PostgreSQL it rides with the transaction's next statement; without, it runs at once, for a caller that
     * catches its failure itself.
     */
    async insert(db: Db, row: Tables[T], onFailure?: FailureTranslation): Promise<void> {
      const insert = (db as any).insertInto(table).values(row);
      if (onFailure) await deferredWrite(db, insert, onFailure);
      else await insert.execute();
    },
    /** A deferred write (deferred-writes.ts): the caller has read the row and knows what it becomes. */
    async update(db: Db, organisationId: string, id: string, patch: Partial<Tables[T]>): Promise<void> {
      await deferredWrite(db, (db as any).updateTable(table).set(patch).where('organisation_id', '=', organisationId).where('id', '=', id));
    },
  };
}
