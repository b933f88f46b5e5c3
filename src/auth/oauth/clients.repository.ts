import type { Db } from '../../db/database.ts';
import type { OAuthClientsTable } from '../../db/auth-tables.ts';

export type OAuthClientRow = OAuthClientsTable;

export const oauthClientsRepository = {
  insert(db: Db, row: OAuthClientRow) {
    return db.insertInto('oauth_clients').values(row).execute();
  },

  findByClientId(db: Db, organisationId: string, clientId: string): Promise<OAuthClientRow | undefined> {
    // A client_id arrives from anyone; PostgreSQL refuses NUL in text outright, and no client has one.
    if (clientId.includes('\u0000')) return Promise.resolve(undefined);
    return db.selectFrom('oauth_clients').selectAll().where('organisation_id', '=', organisationId).where('client_id', '=', clientId).executeTakeFirst();
  },

  findById(db: Db, organisationId: string, id: string): Promise<OAuthClientRow | undefined> {
    return db.selectFrom('oauth_clients').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  list(db: Db, organisationId: string): Promise<OAuthClientRow[]> {
    return db.selectFrom('oauth_clients').selectAll().where('organisation_id', '=', organisationId).orderBy('created_at', 'desc').execute();
  },

  setSecretHash(db: Db, organisationId: string, id: string, secretHash: string, at: string) {
    return db.updateTable('oauth_clients').set({ secret_hash: secretHash, updated_at: at }).where('organisation_id', '=', organisationId).where('id', '=', id).execute();
  },

  delete(db: Db, organisationId: string, clientId: string) {
    return db.deleteFrom('oauth_clients').where('organisation_id', '=', organisationId).where('client_id', '=', clientId).executeTakeFirst();
  },
};
