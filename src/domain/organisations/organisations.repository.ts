import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { OrganisationsTable } from '../../db/tables.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { andThen, type MaybeAsync } from '../../maybe-async.ts';

export type Organisation = OrganisationsTable;

// The tenancy read: every request of the API runs it once (organisations.findByAddress). On SQLite the requests of
// one turn share it (they read one snapshot: sqlite-adapter.ts, readInTurn), so the organisation they get is one
// object: nobody changes an Organisation once read (PostgreSQL's tenancy cache shares them too).
const byAddress = preparedQuery((db: Db, address: string) => db.selectFrom('organisations').selectAll().where('address', '=', address), { sharedInTurn: true });

// The organisation at this address is still the copy a request started from (src/http/tenancy-cache.ts), stated
// as a premise that fails the statement when it does not hold (atrium_require, PostgreSQL only). Timestamps leave
// the database at millisecond precision (postgres-database.ts), so the copy's is compared at that precision.
const stillAsCached = preparedQuery((db: Db, address: string, id: string, epoch: number, plan: string, updatedAt: string) =>
  db.selectNoFrom(
    sql<boolean>`atrium_require(exists(select 1 from organisations where address = ${address} and id = ${id} and credentials_epoch = ${epoch} and plan = ${plan} and date_trunc('milliseconds', updated_at) = ${updatedAt}::timestamptz), 'tenancy')`.as('held'),
  ),
);

export const organisationsRepository = {
  /** At once where the database answers at once (src/maybe-async.ts). */
  findByAddress(db: Db, address: string): MaybeAsync<Organisation | undefined> {
    return andThen(byAddress.now(db, address), (rows) => rows[0]);
  },
  /** PostgreSQL: a statement that fails (SQLSTATE AT001) unless the organisation is still `cached` (see above). */
  stillAsCachedQuery: (db: Db, address: string, cached: Organisation) => stillAsCached.compile(db, address, cached.id, cached.credentials_epoch, cached.plan, cached.updated_at),
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
