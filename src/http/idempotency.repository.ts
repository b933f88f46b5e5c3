import type { Db } from '../db/database.ts';
import type { IdempotencyRecordsTable } from '../db/tables.ts';

export interface IdempotencyScope {
  organisationId: string;
  credentialId: string;
  key: string;
}

export class IdempotencyRecordExists extends Error {}

export const idempotencyRepository = {
  find(db: Db, scope: IdempotencyScope, now: string) {
    return db
      .selectFrom('idempotency_records')
      .select(['fingerprint', 'response_status', 'response_body'])
      .where('organisation_id', '=', scope.organisationId)
      .where('credential_id', '=', scope.credentialId)
      .where('idempotency_key', '=', scope.key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /**
   * Inserts the record, or replaces one of the same key that has expired (a key may be used again after
   * 24 hours). A live record of the same key is left alone and the insert fails: the caller replays it.
   */
  async save(db: Db, row: IdempotencyRecordsTable): Promise<void> {
    const result = await db
      .insertInto('idempotency_records')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['organisation_id', 'credential_id', 'idempotency_key'])
          .doUpdateSet({ fingerprint: row.fingerprint, response_status: row.response_status, response_body: row.response_body, created_at: row.created_at, expires_at: row.expires_at })
          .where('idempotency_records.expires_at', '<=', row.created_at),
      )
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 1n) === 0) throw new IdempotencyRecordExists();
  },

  async purgeExpired(db: Db, now: string): Promise<number> {
    const result = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
