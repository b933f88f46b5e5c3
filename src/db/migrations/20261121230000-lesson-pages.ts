// Pages of a lesson activity: content pages, question pages and the structural pages that delimit branches
// and clusters, ordered within their lesson by a fractional sort key.
import { sql, type Kysely } from 'kysely';
import { columnTypes, isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  // Fractional keys are ordered by byte value ('Z' < 'a'); a PostgreSQL database with a linguistic default
  // collation would order them otherwise, so the column says so. SQLite compares text bytewise already.
  const sortKey = isPostgres(db) ? sql`text collate "C"` : 'text';
  await db.schema
    .createTable('lesson_pages')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('external_id', 'text')
    .addColumn('lesson_id', t.uuid, (c) => c.notNull().references('activities.id'))
    .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('page_type', 'text', (c) => c.notNull())
    .addColumn('contents', 'text')
    .addColumn('answers', 'text', (c) => c.notNull())
    .addColumn('sort_key', sortKey, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('deleted_at', t.timestamp)
    .addUniqueConstraint('lesson_pages_org_external_unique', ['organisation_id', 'external_id'])
    .execute();
  // Lists read a lesson's pages in order; a new page is appended after the greatest key of its lesson.
  await db.schema.createIndex('lesson_pages_order').on('lesson_pages').columns(['organisation_id', 'lesson_id', 'sort_key', 'id']).execute();
  await db.schema.createIndex('lesson_pages_updated').on('lesson_pages').columns(['organisation_id', 'updated_at', 'id']).execute();
}
