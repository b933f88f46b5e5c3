import type { Db } from '../db/database.ts';
import type { ApiKeysTable } from '../db/tables.ts';
import { preparedQuery } from '../db/prepared.ts';

export interface KeyWithHolder {
  id: string;
  organisation_id: string;
  person_id: string;
  mode: 'live' | 'test';
  key_hash: string;
  scopes: string;
  service_version: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  roles: string;
  is_platform_admin: boolean | number;
  holder_removed_at: string | null;
  holder_status: 'active' | 'suspended';
}

const keyWithHolder = preparedQuery((db: Db, keyHash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('people as p', 'p.id', 'k.person_id')
    .select([
      'k.id',
      'k.organisation_id',
      'k.person_id',
      'k.mode',
      'k.key_hash',
      'k.scopes',
      'k.service_version',
      'k.expires_at',
      'k.revoked_at',
      'k.last_used_at',
      'p.roles',
      'p.is_platform_admin',
      'p.deleted_at as holder_removed_at',
      'p.status as holder_status',
    ])
    .where('k.key_hash', '=', keyHash),
);

export const apiKeysRepository = {
  insert(db: Db, row: ApiKeysTable) {
    return db.insertInto('api_keys').values(row).execute();
  },

  /** The key and its person in one read: this runs on every authenticated request. */
  async findByHashWithHolder(db: Db, keyHash: string): Promise<KeyWithHolder | undefined> {
    return (await keyWithHolder(db, keyHash))[0];
  },

  touchLastUsed(db: Db, id: string, at: string) {
    return db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  },

  revoke(db: Db, organisationId: string, id: string, at: string) {
    return db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('organisation_id', '=', organisationId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  },

  findById(db: Db, organisationId: string, id: string) {
    return db.selectFrom('api_keys').select(['id', 'revoked_at']).where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  listForOrganisation(db: Db, organisationId: string) {
    return db
      .selectFrom('api_keys')
      .select(['id', 'person_id', 'name', 'mode', 'display_prefix', 'scopes', 'service_version', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'])
      .where('organisation_id', '=', organisationId)
      .orderBy('created_at', 'desc')
      .execute();
  },
};
