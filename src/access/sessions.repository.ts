import type { Db } from '../db/database.ts';
import type { SessionsTable } from '../db/auth-tables.ts';
import { deferredWrite } from '../db/deferred-writes.ts';

export const sessionsRepository = {
  insert(db: Db, row: SessionsTable) {
    return db.insertInto('sessions').values(row).execute();
  },

  /** The session and its person in one read: this runs on every page request. Removed and suspended people have none. */
  findByTokenHash(db: Db, tokenHash: string) {
    return db
      .selectFrom('sessions as s')
      .innerJoin('people as p', 'p.id', 's.person_id')
      .select(['s.id', 's.token_hash', 's.organisation_id', 's.person_id', 's.created_at', 's.last_seen_at', 's.expires_at', 'p.email', 'p.name', 'p.roles', 'p.is_platform_admin'])
      .where('s.token_hash', '=', tokenHash)
      .where('p.deleted_at', 'is', null)
      .where('p.status', '=', 'active')
      .executeTakeFirst();
  },

  touch(db: Db, id: string, at: string) {
    return db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
  },

  delete(db: Db, id: string) {
    return db.deleteFrom('sessions').where('id', '=', id).execute();
  },

  /** A deferred write (db/deferred-writes.ts): nobody reads its result, so on PostgreSQL it rides with the transaction's next statement. */
  deleteAllOf(db: Db, personId: string) {
    return deferredWrite(db, db.deleteFrom('sessions').where('person_id', '=', personId));
  },

  deleteExpired(db: Db, now: string, idleBefore: string) {
    return db.deleteFrom('sessions').where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleBefore)])).execute();
  },

  setFlash(db: Db, id: string, flash: string | null) {
    return db.updateTable('sessions').set({ flash }).where('id', '=', id).execute();
  },

  /** Reads and clears the flash in one step, so that it is shown once even when two pages load at once. */
  async takeFlash(db: Db, id: string): Promise<string | null> {
    const row = await db.selectFrom('sessions').select('flash').where('id', '=', id).executeTakeFirst();
    if (!row?.flash) return null;
    const cleared = await db.updateTable('sessions').set({ flash: null }).where('id', '=', id).where('flash', '=', row.flash).executeTakeFirst();
    return Number(cleared.numUpdatedRows) === 1 ? row.flash : null;
  },
};
