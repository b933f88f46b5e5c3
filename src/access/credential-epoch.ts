// The credentials epoch: how every server process may cache verified credentials in memory and still refuse a
// revoked key, a removed person, a changed role or a deleted OAuth client on the very next request.
//
// Each organisation row carries `credentials_epoch`, a counter. The request's one tenancy read
// (organisations.findByAddress) returns it with the organisation, so every request sees the current value,
// whichever process made the change. An authenticator caches what it verified together with the epoch it read
// before verifying, and discards the entry as soon as the organisation's epoch differs.
//
// The rule for every change that affects authentication — revoking or deleting a credential, removing a
// person, changing a person's roles or platform-administrator flag, deleting an OAuth client or revoking its
// tokens, changing the organisation's plan or its MCP settings (src/mcp/mcp-settings.service.ts): call
//
//     await bumpCredentialEpoch(tx, organisationId);
//
// with the same transaction as the change, so that the change and the bump commit together (a bump before
// the commit could let another process re-cache the old state under the new epoch; a bump after it could be
// lost). Creating a credential needs no bump: nothing cached can refer to it.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.ts';
import { preparedQuery } from '../db/prepared.ts';

// Deferrable: nobody reads its result, so on PostgreSQL it travels with the transaction's next statement or its
// COMMIT (db/prepared.ts); it still commits with the change, or not at all.
const bump = preparedQuery(
  (db: Db, organisationId: string) =>
    db
      .updateTable('organisations')
      .set((eb) => ({ credentials_epoch: eb('credentials_epoch', '+', 1) }))
      .where('id', '=', organisationId),
  { deferrable: true },
);

/**
 * The same bump inside a one-statement write (PostgreSQL: a CTE of src/domain/one-statement-update.repository.ts's
 * statements), made only `when` the change it goes with happened.
 */
export const credentialEpochBumpSql = (organisationId: string, when: RawBuilder<boolean>): RawBuilder<unknown> =>
  sql`update organisations set credentials_epoch = credentials_epoch + 1 where id = ${organisationId} and ${when}`;

/** Invalidates every process's cached credentials of the organisation once the caller's transaction commits. */
export async function bumpCredentialEpoch(db: Db, organisationId: string): Promise<void> {
  await bump(db, organisationId);
}

interface Entry<T> {
  organisationId: string;
  epoch: number;
  value: T;
}

/**
 * A process-local cache of verified credentials, keyed by the presented token (so that a hit needs no hashing
 * or checksum), valid only for the organisation and epoch it was built at. What else can end a credential
 * without a change (an expiry time) the caller still checks on every hit.
 */
export function createCredentialCache<T>(options: { max?: number } = {}) {
  const max = options.max ?? 10_000;
  const entries = new Map<string, Entry<T>>();
  return {
    get(token: string, organisationId: string, epoch: number): T | undefined {
      const entry = entries.get(token);
      if (entry === undefined) return undefined;
      if (entry.organisationId === organisationId && entry.epoch === epoch) return entry.value;
      entries.delete(token);
      return undefined;
    },
    /** `epoch` must be the one read (with the organisation) before the credential was verified, never a later one. */
    set(token: string, organisationId: string, epoch: number, value: T): void {
      // Simple and bounded: a full cache starts over rather than tracking recency on every hit.
      if (entries.size >= max) entries.clear();
      entries.set(token, { organisationId, epoch, value });
    },
  };
}
