import type { Db } from '../../db/database.ts';
import type { OrganisationsTable } from '../../db/tables.ts';
import { preparedQuery } from '../../db/prepared.ts';

export type Organisation = OrganisationsTable;

// The tenancy read: every request of the API runs it once (organisations.findByAddress).
const byAddress = preparedQuery((db: Db, address: string) => db.selectFrom('organisations').selectAll().where('address', '=', address));

export const organisationsRepository = {
  async findByAddress(db: Db, address: string): Promise<Organisation | undefined> {
    return (await byAddress(db, address))[0];
  },
  /** The same read, compiled, for a caller that sends it along with another statement (src/db/riders.ts). */
  findByAddressQuery: (db: Db, address: string) => byAddress.compile(db, address),
  findById(db: Db, id: string): Promise<Organisation | undefined> {
    return db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
  },
  insert(db: Db, row: Organisation) {
    return db.insertInto('organisations').values(row).execute();
  },
  update(db: Db, id: string, patch: Partial<Pick<Organisation, 'name' | 'plan' | 'timezone' | 'default_language' | 'updated_at'>>) {
    return db.updateTable('organisations').set(patch).where('id', '=', id).execute();
  },
  count(db: Db) {
    return db.selectFrom('organisations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  },
};
