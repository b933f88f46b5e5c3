import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { IdempotencyRecordsTable } from '../db/tables.ts';
import { preparedQuery } from '../db/prepared.ts';

export interface IdempotencyScope {
  organisationId: string;
  credentialId: string;
  key: string;
}

// Deferrable: on PostgreSQL both travel with the transaction's COMMIT instead of costing a round trip each. A
// live record of the same key fails the insert with a unique violation (there, or at once on SQLite), which
// rolls the effect back; the caller then replays the record (idempotency.ts).
const dropExpired = preparedQuery(
  (db: Db, organisationId: string, credentialId: string, key: string, now: string) =>
    db.deleteFrom('idempotency_records').where('organisation_id', '=', organisationId).where('credential_id', '=', credentialId).where('idempotency_key', '=', key).where('expires_at', '<=', now),
  { deferrable: true },
);
const insertRecord = preparedQuery(
  (db: Db, organisationId: string, credentialId: string, key: string, fingerprint: string, status: number, body: string | null, packed: Uint8Array | null, createdAt: string, expiresAt: string) =>
    db.insertInto('idempotency_records').values({
      organisation_id: organisationId,
      credential_id: credentialId,
      idempotency_key: key,
      fingerprint,
      response_status: status,
      response_body: body,
      response_body_packed: packed,
      created_at: createdAt,
      expires_at: expiresAt,
    }),
  { deferrable: true },
);

// PostgreSQL: fails (atrium_require) when the key has a live record, so that the check can ride with a keyed
// write's first statement, after its lock (idempotency.ts).
const unused = preparedQuery((db: Db, organisationId: string, credentialId: string, key: string, now: string) =>
  db.selectNoFrom(
    sql<boolean>`atrium_require(not exists(select 1 from idempotency_records where organisation_id = ${organisationId} and credential_id = ${credentialId} and idempotency_key = ${key} and expires_at > ${now}::timestamptz), 'idempotency record')`.as('unused'),
  ),
);

export const idempotencyRepository = {
  /** The statement that fails unless the key has no live record (see above). */
  unusedQuery: (db: Db, scope: IdempotencyScope, now: string) => unused.compile(db, scope.organisationId, scope.credentialId, scope.key, now),

  find(db: Db, scope: IdempotencyScope, now: string) {
    return db
      .selectFrom('idempotency_records')
      .select(['fingerprint', 'response_status', 'response_body', 'response_body_packed'])
      .where('organisation_id', '=', scope.organisationId)
      .where('credential_id', '=', scope.credentialId)
      .where('idempotency_key', '=', scope.key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /**
   * Inserts the record, replacing one of the same key that has expired (a key may be used again after 24
   * hours). A live record of the same key makes the insert fail with a unique violation: the caller replays it.
   */
  async save(db: Db, row: IdempotencyRecordsTable): Promise<void> {
    await dropExpired(db, row.organisation_id, row.credential_id, row.idempotency_key, row.created_at);
    await insertRecord(db, row.organisation_id, row.credential_id, row.idempotency_key, row.fingerprint, row.response_status, row.response_body, row.response_body_packed, row.created_at, row.expires_at);
  },

  async purgeExpired(db: Db, now: string): Promise<number> {
    const result = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
