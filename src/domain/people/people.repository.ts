import type { Db } from '../../db/database.ts';
import type { PeopleTable } from '../../db/tables.ts';

// Reads answer the people of the organisation who have not been removed, except `findByEmailEvenRemoved`:
// a removed person keeps their e-mail address (it stays unique within the organisation).
export const peopleRepository = {
  insert(db: Db, row: PeopleTable) {
    return db.insertInto('people').values(row).execute();
  },
  findByEmail(db: Db, organisationId: string, email: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('email', '=', email).where('deleted_at', 'is', null).executeTakeFirst();
  },
  findByEmailEvenRemoved(db: Db, organisationId: string, email: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('email', '=', email).executeTakeFirst();
  },
  findById(db: Db, organisationId: string, id: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  },
  /** The organisation's people, for choosing one (an OAuth client's service person). */
  list(db: Db, organisationId: string) {
    return db.selectFrom('people').select(['id', 'email', 'name']).where('organisation_id', '=', organisationId).where('deleted_at', 'is', null).orderBy('email').execute();
  },
  /** The organisation's first person (ids are UUIDv7, so the earliest created), e.g. to author demo content. */
  earliest(db: Db, organisationId: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('deleted_at', 'is', null).orderBy('id').limit(1).executeTakeFirst();
  },
  recordSignIn(db: Db, id: string, at: string) {
    return db.updateTable('people').set({ last_sign_in_at: at }).where('id', '=', id).execute();
  },
  update(db: Db, organisationId: string, id: string, patch: Partial<Pick<PeopleTable, 'password_hash' | 'deleted_at' | 'updated_at'>>) {
    return db.updateTable('people').set(patch).where('organisation_id', '=', organisationId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  },
};
