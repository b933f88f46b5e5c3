// Organisations, people, API keys, and the course structure (categories, courses, sections).
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { changeTimes, createPagedByIdIndex, createResourceTable, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('organisations')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('address', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .$call(changeTimes(db))
    .execute();

  await createTenantTable(db, 'people')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('is_platform_admin', t.bool, (c) => c.notNull())
    .$call(changeTimes(db))
    .addUniqueConstraint('people_org_email_unique', ['organisation_id', 'email'])
    .execute();

  await createTenantTable(db, 'api_keys')
    .addColumn('person_id', t.uuid, (c) => c.notNull().references('people.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('service_version', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    .addColumn('last_used_at', t.timestamp)
    .execute();
  await db.schema.createIndex('api_keys_org').on('api_keys').columns(['organisation_id', 'created_at']).execute();

  await createResourceTable(db, 'categories', (table) =>
    table.addColumn('parent_id', t.uuid, (c) => c.references('categories.id')).addColumn('name', 'text', (c) => c.notNull()),
  ).execute();

  await createResourceTable(db, 'courses', (table) =>
    table
      .addColumn('category_id', t.uuid, (c) => c.references('categories.id'))
      .addColumn('fullname', 'text', (c) => c.notNull())
      .addColumn('shortname', 'text', (c) => c.notNull())
      .addColumn('visible', t.bool, (c) => c.notNull()),
  ).execute();

  await createResourceTable(db, 'sections', (table) =>
    table
      .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
      .addColumn('parent_section_id', t.uuid, (c) => c.references('sections.id'))
      .addColumn('sort_key', 'text', (c) => c.notNull())
      .addColumn('title', 'text')
      .addColumn('summary', 'text')
      .addColumn('visible', t.bool, (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('sections_course').on('sections').columns(['course_id', 'sort_key']).execute();
  await createPagedByIdIndex(db, 'sections');
}
