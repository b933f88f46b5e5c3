import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { CustomRolesTable } from '../../db/tables.ts';
import { holdsRole } from '../users/users.repository.ts';

export type CustomRoleRow = Selectable<CustomRolesTable>;

export const rolesRepository = {
  list(db: Db, organisationId: string): Promise<CustomRoleRow[]> {
    return db.selectFrom('custom_roles').selectAll().where('organisation_id', '=', organisationId).orderBy('key').execute();
  },
  findByKey(db: Db, organisationId: string, key: string): Promise<CustomRoleRow | undefined> {
    return db.selectFrom('custom_roles').selectAll().where('organisation_id', '=', organisationId).where('key', '=', key).executeTakeFirst();
  },
  findByKeys(db: Db, organisationId: string, keys: string[]): Promise<Array<Pick<CustomRoleRow, 'key' | 'capabilities'>>> {
    if (keys.length === 0) return Promise.resolve([]);
    return db.selectFrom('custom_roles').select(['key', 'capabilities']).where('organisation_id', '=', organisationId).where('key', 'in', keys).execute();
  },
  insert(db: Db, row: CustomRoleRow) {
    return db.insertInto('custom_roles').values(row).execute();
  },
  update(db: Db, organisationId: string, key: string, patch: Partial<Pick<CustomRoleRow, 'name' | 'capabilities' | 'updated_at'>>) {
    return db.updateTable('custom_roles').set(patch).where('organisation_id', '=', organisationId).where('key', '=', key).execute();
  },
  delete(db: Db, organisationId: string, key: string) {
    return db.deleteFrom('custom_roles').where('organisation_id', '=', organisationId).where('key', '=', key).execute();
  },
  /** Whether any live person of the organisation holds the role. */
  async isHeld(db: Db, organisationId: string, key: string): Promise<boolean> {
    const row = await db
      .selectFrom('people')
      .select('id')
      .where('organisation_id', '=', organisationId)
      .where('deleted_at', 'is', null)
      .where(holdsRole(key))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  },
};
