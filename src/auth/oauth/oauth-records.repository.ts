// What an organisation's authorization server keeps (oidc-provider's models other than Client), found by the
// SHA-256 of a record's id: the id of a code or a token is its bearer value, so it is never stored.
import { createHash } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { OAuthRecordsTable } from '../../db/auth-tables.ts';

export const hashRecordId = (id: string): string => createHash('sha256').update(id).digest('hex');

export const oauthRecordsRepository = {
  async upsert(db: Db, row: OAuthRecordsTable): Promise<void> {
    const { model, id_hash, ...rest } = row;
    await db
      .insertInto('oauth_records')
      .values(row)
      .onConflict((oc) => oc.columns(['model', 'id_hash']).doUpdateSet(rest))
      .execute();
  },

  find(db: Db, organisationId: string, model: string, idHash: string) {
    return db
      .selectFrom('oauth_records')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where('model', '=', model)
      .where('id_hash', '=', idHash)
      .where('organisation_id', '=', organisationId)
      .executeTakeFirst();
  },

  findByUid(db: Db, organisationId: string, model: string, uid: string) {
    return db
      .selectFrom('oauth_records')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where('model', '=', model)
      .where('uid', '=', uid)
      .where('organisation_id', '=', organisationId)
      .executeTakeFirst();
  },

  async consume(db: Db, organisationId: string, model: string, idHash: string, at: string): Promise<void> {
    await db.updateTable('oauth_records').set({ consumed_at: at }).where('model', '=', model).where('id_hash', '=', idHash).where('organisation_id', '=', organisationId).execute();
  },

  async destroy(db: Db, organisationId: string, model: string, idHash: string): Promise<void> {
    await db.deleteFrom('oauth_records').where('model', '=', model).where('id_hash', '=', idHash).where('organisation_id', '=', organisationId).execute();
  },

  /** Everything a grant issued (codes, tokens) and the grant itself: revoking it is one statement. */
  async destroyGrant(db: Db, organisationId: string, grantId: string): Promise<void> {
    await db.deleteFrom('oauth_records').where('organisation_id', '=', organisationId).where('grant_id', '=', grantId).execute();
  },

  /** Everything of a client (deleting it revokes its grants and tokens at once). */
  async destroyAllOfClient(db: Db, organisationId: string, clientId: string): Promise<void> {
    await db.deleteFrom('oauth_records').where('organisation_id', '=', organisationId).where('client_id', '=', clientId).execute();
  },

  /** The newest live grant a person gave a client: consent is remembered per (person, client, scopes). */
  latestGrant(db: Db, organisationId: string, clientId: string, accountId: string, now: string) {
    return db
      .selectFrom('oauth_records')
      .select(['payload'])
      .where('organisation_id', '=', organisationId)
      .where('client_id', '=', clientId)
      .where('model', '=', 'Grant')
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('expires_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  },

  purgeExpired(db: Db, now: string) {
    return db.deleteFrom('oauth_records').where('expires_at', '<=', now).execute();
  },
};
