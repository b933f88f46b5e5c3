// `GET /<resource>/deletions?since=` for every syncable resource (operations/resource-operations.ts): tombstones in
// order of deletion, with the same paging as every list.
import type { Db } from '../../db/database.ts';
import type { CursorCodec, Page } from '../../operations/pagination.ts';
import { listPage } from '../../operations/listing.ts';
import { deletionsRepository, type Tombstone } from './deletions.repository.ts';

export interface DeletionParams {
  limit?: number;
  cursor?: string;
  since?: string;
}

export function createDeletionService(deps: { cursors: CursorCodec }) {
  return {
    list(db: Db, organisationId: string, resourceType: string, params: DeletionParams): Promise<Page<Tombstone>> {
      return listPage(deps.cursors, {
        list: `${resourceType}/deletions`,
        organisationId,
        params: { limit: params.limit, cursor: params.cursor, updated_since: params.since },
        fetch: (q) => deletionsRepository.page(db, organisationId, resourceType, { since: q.updatedSince, after: q.after, limit: q.limit }),
        map: ({ id, external_id, deleted_at }) => ({ id, external_id, deleted_at }),
        position: (row) => [row.deleted_at, row.tombstone_id],
      });
    },
  };
}
