import type { Db } from '../../db/database.ts';

export const accessTokensRepository = {
  /** An access token (authorization code or client credentials) with its client, by the hash of its value. */
  findWithClient(db: Db, idHash: string) {
    return db
      .selectFrom('oauth_records as r')
      .leftJoin('oauth_clients as c', (join) => join.onRef('c.client_id', '=', 'r.client_id').onRef('c.organisation_id', '=', 'r.organisation_id'))
      .select(['r.model', 'r.organisation_id', 'r.client_id', 'r.account_id', 'r.expires_at', 'r.payload', 'c.id as client_row_id', 'c.service_person_id', 'c.service_version'])
      .where('r.id_hash', '=', idHash)
      .where('r.model', 'in', ['AccessToken', 'ClientCredentials'])
      .executeTakeFirst();
  },
};
