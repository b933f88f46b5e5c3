import { sql, type Selectable } from 'kysely';
import { isPostgres } from '../../db/column-types.ts';
import type { Db } from '../../db/database.ts';
import type { InvitationsTable, PeopleTable } from '../../db/tables.ts';
import { tenantRows, type RowPageQuery } from '../../db/tenant-rows.ts';

export type UserRow = Selectable<PeopleTable>;

const rows = tenantRows('people');

/**
 * `roles` (a JSON array of keys) holds `key`. Keys may hold `_`, a `like` wildcard: it is escaped, so that
 * `lib_a` never matches a holder of `libxa`.
 */
export const holdsRole = (key: string) => sql<boolean>`roles like ${`%${JSON.stringify(key).replace(/[!%_]/g, '!$&')}%`} escape '!'`;

export const usersRepository = {
  ...rows,

  /** A page of users; `role` matches inside the JSON array of role keys. */
  page(db: Db, organisationId: string, q: RowPageQuery): Promise<UserRow[]> {
    const { role, ...where } = q.where;
    return rows.page(db, organisationId, { ...q, where }, role === undefined ? undefined : (query) => query.where(holdsRole(role)));
  },

  /** Any user with this address, removed ones included (addresses stay unique); addresses are stored in lower case. */
  findByEmail(db: Db, organisationId: string, email: string): Promise<UserRow | undefined> {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('email', '=', email).executeTakeFirst();
  },

  /**
   * The organisation's other active administrators. On PostgreSQL the organisation's row is locked first, so
   * that two requests cannot each remove one of the last two administrators (SQLite has one writer at a time).
   */
  async otherActiveAdmins(db: Db, organisationId: string, exceptId: string): Promise<number> {
    if (isPostgres(db)) await db.selectFrom('organisations').select('id').where('id', '=', organisationId).forUpdate().execute();
    const found = await db
      .selectFrom('people')
      .select('id')
      .where('organisation_id', '=', organisationId)
      .where('id', '!=', exceptId)
      .where('deleted_at', 'is', null)
      .where('status', '=', 'active')
      .where(holdsRole('admin'))
      .limit(1)
      .execute();
    return found.length;
  },

  insertInvitation(db: Db, row: InvitationsTable) {
    return db.insertInto('invitations').values(row).execute();
  },
  findInvitation(db: Db, tokenHash: string) {
    return db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  },
  /** Marks an unused invitation used; false when another request used it first. */
  async useInvitation(db: Db, id: string, at: string): Promise<boolean> {
    const result = await db.updateTable('invitations').set({ used_at: at }).where('id', '=', id).where('used_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },
};
