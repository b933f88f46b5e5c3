// Pages of a lesson activity: content pages, question pages and the structural pages that delimit branches
// and clusters, ordered within their lesson by a fractional sort key.
import { sql, type Kysely } from 'kysely';
import { columnTypes, isPostgres } from '../column-types.ts';
import { createChangesIndex, createResourceTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  // Fractional keys are ordered by byte value ('Z' < 'a'); a PostgreSQL database with a linguistic default
  // collation would order them otherwise, so the column says so. SQLite compares text bytewise already.
  const sortKey = isPostgres(db) ? sql`text collate "C"` : 'text';
  await createResourceTable(db, 'lesson_pages', (table) =>
    table
      .addColumn('lesson_id', t.uuid, (c) => c.notNull().references('activities.id'))
      .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('page_type', 'text', (c) => c.notNull())
      .addColumn('contents', 'text')
      .addColumn('answers', 'text', (c) => c.notNull())
      .addColumn('sort_key', sortKey, (c) => c.notNull()),
  ).execute();
  // Lists read a lesson's pages in order; a new page is appended after the greatest key of its lesson.
  await db.schema.createIndex('lesson_pages_order').on('lesson_pages').columns(['organisation_id', 'lesson_id', 'sort_key', 'id']).execute();
  await createChangesIndex(db, 'lesson_pages');
}
