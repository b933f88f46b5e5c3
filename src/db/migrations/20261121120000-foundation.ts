// Organisations, people, API keys, and the course structure (categories, courses, sections).
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('organisations')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('address', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('people')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('is_platform_admin', t.bool, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('people_org_email_unique', ['organisation_id', 'email'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
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

  await db.schema
    .createTable('categories')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('external_id', 'text')
    .addColumn('parent_id', t.uuid, (c) => c.references('categories.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('deleted_at', t.timestamp)
    .addUniqueConstraint('categories_org_external_unique', ['organisation_id', 'external_id'])
    .execute();

  await db.schema
    .createTable('courses')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('external_id', 'text')
    .addColumn('category_id', t.uuid, (c) => c.references('categories.id'))
    .addColumn('fullname', 'text', (c) => c.notNull())
    .addColumn('shortname', 'text', (c) => c.notNull())
    .addColumn('visible', t.bool, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('deleted_at', t.timestamp)
    .addUniqueConstraint('courses_org_external_unique', ['organisation_id', 'external_id'])
    .execute();

  await db.schema
    .createTable('sections')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('external_id', 'text')
    .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
    .addColumn('parent_section_id', t.uuid, (c) => c.references('sections.id'))
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('summary', 'text')
    .addColumn('visible', t.bool, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('deleted_at', t.timestamp)
    .addUniqueConstraint('sections_org_external_unique', ['organisation_id', 'external_id'])
    .execute();
  await db.schema.createIndex('sections_course').on('sections').columns(['course_id', 'sort_key']).execute();
  await db.schema.createIndex('sections_org_id').on('sections').columns(['organisation_id', 'id']).execute();
}
