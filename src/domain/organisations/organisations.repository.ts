import type { Db } from '../../db/database.ts';
import type { OrganisationsTable } from '../../db/tables.ts';

export type Organisation = OrganisationsTable;

export const organisationsRepository = {
  findByAddress(db: Db, address: string): Promise<Organisation | undefined> {
    return db.selectFrom('organisations').selectAll().where('address', '=', address).executeTakeFirst();
  },
  findById(db: Db, id: string): Promise<Organisation | undefined> {
    return db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
  },
  insert(db: Db, row: Organisation) {
    return db.insertInto('organisations').values(row).execute();
  },
  update(db: Db, id: string, patch: Partial<Pick<Organisation, 'name' | 'plan' | 'updated_at'>>) {
    return db.updateTable('organisations').set(patch).where('id', '=', id).execute();
  },
  count(db: Db) {
    return db.selectFrom('organisations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  },
};
