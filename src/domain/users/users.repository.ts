import { credentialEpochBumpSql } from '../../access/credential-epoch.ts';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import { isPostgres } from '../../db/column-types.ts';
import type { Db } from '../../db/database.ts';
import type { InvitationsTable, PeopleTable } from '../../db/tables.ts';
import { tenantRows, type RowPageQuery } from '../../db/tenant-rows.ts';
import { deletionsRepository, type SoftDeleteOptions } from '../deletions/deletions.repository.ts';
import type { RowEvent } from '../../events/outbox.ts';
import { enrolmentsRepository } from '../enrolments/enrolments.repository.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange, type NamedStatement } from '../one-statement-update.repository.ts';

export type UserRow = Selectable<PeopleTable>;

const rows = tenantRows('people');

/**
 * `roles` (a JSON array of keys) holds `key`. Keys may hold `_`, a `like` wildcard: it is escaped, so that
 * `lib_a` never matches a holder of `libxa`.
 */
export const holdsRole = (key: string, roles: RawBuilder<unknown> = sql`roles`) => sql<boolean>`${roles} like ${`%${JSON.stringify(key).replace(/[!%_]/g, '!$&')}%`} escape '!'`;

/**
 * The person `row` names (`b`, the row before a change, or the table's own row) is no active administrator, so no
 * last-administrator rule applies (the full path applies it, under the organisation's lock).
 */
const noActiveAdmin = (row: 'b' | 'people') => sql<boolean>`not (${sql.ref(`${row}.status`)} = 'active' and ${holdsRole('admin', sql.ref(`${row}.roles`))})`;

/** What a PATCH of a person may change in one statement: not their roles (their checks read the organisation's roles). */
export type OneStatementUserPatch = Partial<Pick<UserRow, 'name' | 'email' | 'status'>>;

/**
 * PostgreSQL: a person's removal as the service makes it, in one statement that removes nothing unless the
 * person is live and no active administrator: their sessions end, the credentials epoch moves, their live
 * enrolments end with their tombstones and events, then their own tombstone and `user.deleted` event.
 */
function personRemoval(organisationId: string, at: string): [RowEvent, SoftDeleteOptions] {
  const effects: NamedStatement[] = [
    ['sessions_ended', sql`delete from sessions where organisation_id = ${organisationId} and person_id in (select id from u)`],
    ['epoch_bumped', credentialEpochBumpSql(organisationId, sql<boolean>`exists(select 1 from u)`)],
    ...enrolmentsRepository.endAllInStatement(organisationId, 'person_id', sql`select id from u`, at),
  ];
  return [{ type: 'user.deleted', occurredAt: at, members: [['summary', sql`'User ' || to_json(u.name)::text || ' removed.'`]] }, { premises: [noActiveAdmin('people')], effects }];
}

/**
 * A custom role given to a new person in its one-statement create: `key` must be a role of the organisation, and
 * allow no capability outside `within` (the giver's; null: the giver may give any, as the CLI's operator).
 */
export interface RoleGrantPremise {
  key: string;
  within: string[] | null;
}

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

  /** The organisation's people (removed ones too) with any of these ids, external ids or addresses: what a bulk request names, in one read. */
  named(db: Db, organisationId: string, q: { ids: string[]; externalIds: string[]; emails: string[] }): Promise<UserRow[]> {
    if (q.ids.length + q.externalIds.length + q.emails.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('people')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where((eb) =>
        eb.or([
          ...(q.ids.length > 0 ? [eb('id', 'in', q.ids)] : []),
          ...(q.externalIds.length > 0 ? [eb('external_id', 'in', q.externalIds)] : []),
          ...(q.emails.length > 0 ? [eb('email', 'in', q.emails)] : []),
        ]),
      )
      .execute();
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

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new person, `row` as the service made
   * it, with its event as the service words it (`User "<name>" added.`). Its address or its external id taken (by
   * anyone, removed or not) makes nothing: the full path then answers the 409, saying whether a removed person
   * holds the address.
   */
  createInOneStatement(db: Db, row: UserRow, roles: readonly RoleGrantPremise[]): Promise<UserRow> {
    const premises = roles.map(({ key, within }) => {
      const given = sql`select 1 from custom_roles r where r.organisation_id = ${row.organisation_id} and r.key = ${key}`;
      if (within === null) return sql<boolean>`exists(${given})`;
      return sql<boolean>`exists(${given} and not exists(select 1 from json_array_elements_text(r.capabilities::json) c(capability) where c.capability <> all(${within}::text[])))`;
    });
    return insertInOneStatement<UserRow>(db, 'people', row, { type: 'user.created', occurredAt: row.created_at, members: [['summary', sql`'User ' || to_json(u.name)::text || ' added.'`]] }, { premises });
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a person's PATCH of name, address or
   * status, with its event as the service words it (`User "<name>" changed (<fields>).`), in one statement that
   * changes nothing unless the address is free and, for a suspension, the person is no active administrator
   * (the full path then applies the last-administrator rule under the organisation's lock). A suspension ends
   * the person's sessions, and any change of status bumps the credentials epoch (credential-epoch.ts), with it.
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, patch: OneStatementUserPatch, at: string): Promise<UserRow> {
    // In the order the service names them (changesOf).
    const changes: ColumnChange[] = [];
    if (patch.name !== undefined) changes.push(['name', sql`${patch.name}::text`]);
    if (patch.email !== undefined) changes.push(['email', sql`${patch.email}::text`]);
    if (patch.status !== undefined) changes.push(['status', sql`${patch.status}::text`]);
    const premises: RawBuilder<boolean>[] = [];
    if (patch.email !== undefined) premises.push(sql`not exists(select 1 from people other where other.organisation_id = ${organisationId} and other.email = ${patch.email} and other.id <> ${id})`);
    if (patch.status === 'suspended') premises.push(noActiveAdmin('b'));
    const statusChanged = sql<boolean>`exists(select 1 from u cross join b where u.status is distinct from b.status)`;
    const effects: NamedStatement[] = [
      ['sessions_ended', sql`delete from sessions where organisation_id = ${organisationId} and person_id = (select u.id from u cross join b where u.status = 'suspended' and b.status <> 'suspended')`],
      ['epoch_bumped', credentialEpochBumpSql(organisationId, statusChanged)],
    ];
    return updateLiveInOneStatement<UserRow>(
      db,
      'people',
      organisationId,
      id,
      changes,
      { type: 'user.updated', occurredAt: at, members: [['summary', sql`'User ' || to_json(u.name)::text || ' changed (' || ${changedColumnsSql(changes.map(([c]) => c))} || ').'`]] },
      { premises, effects: patch.status === undefined ? [] : effects },
    );
  },

  /** As a final statement (deletions.repository.ts): a person's removal (personRemoval). */
  removeInOneStatement: (db: Db, organisationId: string, id: string, at: string): Promise<void> =>
    deletionsRepository.softDeleteInOneStatement(db, 'people', 'user', organisationId, id, ...personRemoval(organisationId, at)),

  /** As an ordinary statement that answers whether it removed the person (deletions.repository.ts: softDeleteAtOnce). */
  removeAtOnce: (db: Db, organisationId: string, id: string, at: string): Promise<boolean> =>
    deletionsRepository.softDeleteAtOnce(db, 'people', 'user', organisationId, id, ...personRemoval(organisationId, at)),

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
