// Activities of a course (shared by every activity type: wiki now, lesson next), and the wiki activity type:
// one wiki per wiki activity, its subwikis, its pages and every version of every page.
import { sql, type Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createChangesIndex, createResourceTable, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await createResourceTable(db, 'activities', (table) =>
    table
      .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
      .addColumn('section_id', t.uuid, (c) => c.references('sections.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('activities_course').on('activities').columns(['organisation_id', 'course_id']).execute();
  await createChangesIndex(db, 'activities');

  await createTenantTable(db, 'wikis')
    .addColumn('activity_id', t.uuid, (c) => c.notNull().unique().references('activities.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  // `owner_key` ('common', 'user:<id>', 'group:<id>') makes "one subwiki per owner" a plain unique key:
  // a unique key over nullable user/group columns would let duplicates with NULLs through on both engines.
  await createTenantTable(db, 'subwikis')
    .addColumn('wiki_id', t.uuid, (c) => c.notNull().references('wikis.id'))
    .addColumn('owner_key', 'text', (c) => c.notNull())
    .addColumn('user_id', t.uuid, (c) => c.references('people.id'))
    .addColumn('group_id', t.uuid)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('subwikis_wiki_owner_unique', ['wiki_id', 'owner_key'])
    .execute();

  await createResourceTable(db, 'wiki_pages', (table) =>
    table
      .addColumn('activity_id', t.uuid, (c) => c.notNull().references('activities.id'))
      .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
      .addColumn('wiki_id', t.uuid, (c) => c.notNull().references('wikis.id'))
      .addColumn('subwiki_id', t.uuid, (c) => c.notNull().references('subwikis.id'))
      .addColumn('subwiki_user_id', t.uuid)
      .addColumn('subwiki_group_id', t.uuid)
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('updated_by', t.uuid, (c) => c.notNull().references('people.id')),
  ).execute();
  await createChangesIndex(db, 'wiki_pages');
  // Wiki links name pages by title, so a title is unique among the live pages of a subwiki.
  await db.schema
    .createIndex('wiki_pages_live_title_unique')
    .on('wiki_pages')
    .columns(['subwiki_id', 'title'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  // Versions are written once and never changed (spec: Other lifecycles — the old versions are kept).
  await createTenantTable(db, 'wiki_page_versions')
    .addColumn('wiki_page_id', t.uuid, (c) => c.notNull().references('wiki_pages.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('restored_from', 'integer')
    .addColumn('created_by', t.uuid, (c) => c.notNull().references('people.id'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('wiki_page_versions_page_version_unique', ['wiki_page_id', 'version'])
    .execute();
}
