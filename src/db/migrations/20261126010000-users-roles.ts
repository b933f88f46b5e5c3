// Users, custom roles, invitations and the organisation's settings (docs/api-guide.md#users-roles-and-the-organisation): the people table
// gains what the /users API shows (external id, status, last sign-in); organisations a timezone and a default
// language; custom roles and one-time invitation links get tables of their own.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { changeTimes, createChangesIndex, createPagedByIdIndex, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  // One column per statement: SQLite adds one at a time.
  await db.schema.alterTable('people').addColumn('external_id', 'text').execute();
  await db.schema.alterTable('people').addColumn('status', 'text', (c) => c.notNull().defaultTo('active')).execute();
  await db.schema.alterTable('people').addColumn('last_sign_in_at', t.timestamp).execute();
  await db.schema.createIndex('people_org_external_unique').unique().on('people').columns(['organisation_id', 'external_id']).execute();
  // GET /users pages by (organisation, id), by (organisation, updated_at, id) for changes since a time, and by
  // (organisation, filter, id) when filtered by status or e-mail address (test/query-plans.test.ts).
  await createPagedByIdIndex(db, 'people');
  await createChangesIndex(db, 'people');
  await db.schema.createIndex('people_status').on('people').columns(['organisation_id', 'status', 'id']).execute();
  await db.schema.createIndex('people_email_id').on('people').columns(['organisation_id', 'email', 'id']).execute();

  await db.schema.alterTable('organisations').addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC')).execute();
  await db.schema.alterTable('organisations').addColumn('default_language', 'text', (c) => c.notNull().defaultTo('en')).execute();

  await createTenantTable(db, 'custom_roles')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // JSON array of capability names.
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .$call(changeTimes(db))
    .addUniqueConstraint('custom_roles_org_key_unique', ['organisation_id', 'key'])
    .execute();

  await createTenantTable(db, 'invitations')
    .addColumn('person_id', t.uuid, (c) => c.notNull().references('people.id'))
    // SHA-256 of the link's token, hex: the token itself is only in the mail.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('used_at', t.timestamp)
    .execute();
}
