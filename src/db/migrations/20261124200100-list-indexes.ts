// Every list pages by (organisation, id) unless asked for changes since a time: an index in that order lets
// a page be read as a range, where without it the whole organisation's rows were read and sorted for each
// page (test/query-plans.test.ts finds such lists; bench/README.md shows the plans at a million rows). Lists
// filtered by a column (course_id, …) page by (organisation, that column, id): the older two-column indexes
// become three-column ones, which serve everything the old ones did.
import type { Kysely } from 'kysely';
import { createPagedByIdIndex } from '../migration-tables.ts';

const pagedById = ['categories', 'courses', 'enrolment_methods', 'webhook_subscriptions', 'activities', 'wiki_pages', 'email_messages'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of pagedById) await createPagedByIdIndex(db, table);
  for (const table of ['enrolment_methods', 'activities']) {
    await db.schema.createIndex(`${table}_course_id`).on(table).columns(['organisation_id', 'course_id', 'id']).execute();
    await db.schema.dropIndex(`${table}_course`).execute();
  }
}
