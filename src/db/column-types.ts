// Column types that the two engines spell differently; migrations use these so there is one set of
// migrations for both (see tables.ts for how values look when read back).
import { PostgresAdapter, type Kysely } from 'kysely';

export interface ColumnTypes {
  uuid: 'uuid' | 'text';
  timestamp: 'timestamptz' | 'text';
  bool: 'boolean' | 'integer';
}

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export function columnTypes(db: Kysely<any>): ColumnTypes {
  return isPostgres(db)
    ? { uuid: 'uuid', timestamp: 'timestamptz', bool: 'boolean' }
    : { uuid: 'text', timestamp: 'text', bool: 'integer' };
}
