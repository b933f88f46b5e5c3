import { credentialEpochBumpSql } from '../../access/credential-epoch.ts';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { CustomRolesTable } from '../../db/tables.ts';
import { runFinalStatement } from '../../db/final-statement.ts';
import { deferredWrite, type FailureTranslation } from '../../db/deferred-writes.ts';
import { eventOfChangedRow } from '../../events/outbox.ts';
import { holdsRole } from '../users/users.repository.ts';
import { changedColumnsSql, updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';

export type CustomRoleRow = Selectable<CustomRolesTable>;

/** Whether a live person of the organisation holds the role `key` (a role held cannot be deleted). */
const heldByAnyone = (organisationId: string, key: string) =>
  sql<boolean>`exists(select 1 from people where organisation_id = ${organisationId} and deleted_at is null and ${holdsRole(key)})`;

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
  /** A deferred write: its failure surfaces as `onFailure` says (deferred-writes.ts). */
  insert(db: Db, row: CustomRoleRow, onFailure: FailureTranslation) {
    return deferredWrite(db, db.insertInto('custom_roles').values(row), onFailure);
  },
  // Deferred (db/deferred-writes.ts): the service read the role first, and nobody reads what these return.
  update(db: Db, organisationId: string, key: string, patch: Partial<Pick<CustomRoleRow, 'name' | 'capabilities' | 'updated_at'>>) {
    return deferredWrite(db, db.updateTable('custom_roles').set(patch).where('organisation_id', '=', organisationId).where('key', '=', key));
  },
  delete(db: Db, organisationId: string, key: string) {
    return deferredWrite(db, db.deleteFrom('custom_roles').where('organisation_id', '=', organisationId).where('key', '=', key));
  },
  /** The role, and whether a live person of the organisation holds it, in one read (a delete's two questions). */
  findByKeyNotingHolders(db: Db, organisationId: string, key: string): Promise<(CustomRoleRow & { held: boolean }) | undefined> {
    return db
      .selectFrom('custom_roles')
      .selectAll()
      .select(heldByAnyone(organisationId, key).as('held'))
      .where('organisation_id', '=', organisationId)
      .where('key', '=', key)
      .executeTakeFirst();
  },
  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a custom role's PATCH and its event
   * (`Role "<name>" changed (<fields>).`). Capabilities change only as a set (a new order alone is no change),
   * and their change bumps the credentials epoch with it, since every holder's cached credentials carry them.
   */
  updateInOneStatement(db: Db, organisationId: string, key: string, patch: { name?: string; capabilities?: string[] }, at: string): Promise<CustomRoleRow> {
    const changes: ColumnChange[] = [];
    if (patch.name !== undefined) changes.push(['name', sql`${patch.name}::text`]);
    if (patch.capabilities !== undefined) {
      const asked = JSON.stringify(patch.capabilities);
      changes.push(['capabilities', sql`${asked}::text`, sql<boolean>`not (b.capabilities::jsonb @> ${asked}::jsonb and b.capabilities::jsonb <@ ${asked}::jsonb)`]);
    }
    return updateLiveInOneStatement<CustomRoleRow>(
      db,
      'custom_roles',
      organisationId,
      key,
      changes,
      { type: 'role.updated', occurredAt: at, members: [['key', sql`u.key`], ['summary', sql`'Role ' || to_json(u.name)::text || ' changed (' || ${changedColumnsSql(changes.map(([c]) => c))} || ').'`]] },
      {
        identity: 'key',
        softDeleted: false,
        effects: [['epoch_bumped', credentialEpochBumpSql(organisationId, sql<boolean>`exists(select 1 from u cross join b where u.capabilities is distinct from b.capabilities)`)]],
      },
    );
  },

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): a custom role's delete and its event, in one
   * statement that deletes nothing, and fails, when no such role is there or a live person still holds it (the
   * full path then answers 404 or 409 role.in_use).
   */
  async deleteInOneStatement(db: Db, organisationId: string, key: string, at: string): Promise<void> {
    const query = sql`with u as (
        delete from custom_roles where organisation_id = ${organisationId} and key = ${key}
          and not ${heldByAnyone(organisationId, key)}
        returning *
      ), e as (${eventOfChangedRow(organisationId, { type: 'role.deleted', occurredAt: at, members: [['key', sql`u.key`], ['summary', sql`'Role ' || to_json(u.name)::text || ' deleted.'`]] })})
      select atrium_require(exists(select 1 from u), 'custom_roles row deleted') as held`.compile(db);
    await runFinalStatement(db, query);
  },
};
