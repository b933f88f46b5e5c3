// Enrolment methods of a course (each provided by an enrolment-method extension) and the enrolments made
// through them.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createChangesIndex, createResourceTable, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await createResourceTable(db, 'enrolment_methods', (table) =>
    table
      .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('enrolment_methods_course').on('enrolment_methods').columns(['organisation_id', 'course_id']).execute();
  await createChangesIndex(db, 'enrolment_methods');

  await createTenantTable(db, 'enrolments')
    .addColumn('enrolment_method_id', t.uuid, (c) => c.notNull().references('enrolment_methods.id'))
    .addColumn('course_id', t.uuid, (c) => c.notNull().references('courses.id'))
    .addColumn('person_id', t.uuid, (c) => c.notNull().references('people.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('ended_at', t.timestamp)
    .execute();
  await db.schema.createIndex('enrolments_method').on('enrolments').columns(['enrolment_method_id', 'status']).execute();
}
