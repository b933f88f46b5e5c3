// Section sort keys are fractional-index strings (`a0`, `a0V`, `Zz`…) whose order is the order of their bytes.
// PostgreSQL compares text with the database's collation, which on a linguistic one (en_US) is not byte order,
// so the column is given the "C" collation, as lesson pages have it. SQLite already compares bytes.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`alter table sections alter column sort_key type text collate "C"`.execute(db);
}
