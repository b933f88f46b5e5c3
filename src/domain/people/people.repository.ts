import type { Db } from '../../db/database.ts';
import type { PeopleTable } from '../../db/tables.ts';

export const peopleRepository = {
  insert(db: Db, row: PeopleTable) {
    return db.insertInto('people').values(row).execute();
  },
  findByEmail(db: Db, organisationId: string, email: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('email', '=', email).executeTakeFirst();
  },
  findById(db: Db, organisationId: string, id: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },
  /** The organisation's first person (ids are UUIDv7, so the earliest created), e.g. to author demo content. */
  earliest(db: Db, organisationId: string) {
    return db.selectFrom('people').selectAll().where('organisation_id', '=', organisationId).orderBy('id').limit(1).executeTakeFirst();
  },
};
