// The per-organisation credentials epoch (src/access/credential-epoch.ts): a counter every change that affects
// authentication bumps in its own transaction, read with the organisation on every request, so that each
// process's cache of verified credentials is discarded the moment it moves.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('organisations')
    .addColumn('credentials_epoch', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}
