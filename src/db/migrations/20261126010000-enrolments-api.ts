// Enrolments become a resource of the API (`/enrolments`): each carries its own role, status, dates, external
// id and change times, and is soft-deleted like every other resource. The rows the demo seed or operation 7
// wrote before keep their meaning: an `ended` enrolment becomes a deleted one (deleted_at = ended_at), and the
// role is the one its method gave.
import { sql, type Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createChangesIndex, createPagedByIdIndex } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  for (const [column, type] of [
    ['external_id', 'text'],
    ['role', 'text'],
    ['starts_at', t.timestamp],
    ['ends_at', t.timestamp],
    ['updated_at', t.timestamp],
    ['deleted_at', t.timestamp],
  ] as const) {
    await db.schema.alterTable('enrolments').addColumn(column, type).execute();
  }
  await sql`update enrolments set role = (select m.role from enrolment_methods m where m.id = enrolments.enrolment_method_id), updated_at = coalesce(ended_at, created_at)`.execute(db);
  await sql`update enrolments set deleted_at = ended_at, status = 'active' where status = 'ended'`.execute(db);
  // Operation 7 counted by (method, status); the live-pair index below answers its question now.
  await db.schema.dropIndex('enrolments_method').execute();
  await db.schema.alterTable('enrolments').dropColumn('ended_at').execute();

  await db.schema.createIndex('enrolments_org_external_unique').on('enrolments').columns(['organisation_id', 'external_id']).unique().execute();
  // One live enrolment per person and method (docs/api-guide.md#enrolments-and-roster-sync: 409 enrolment.exists); the database keeps it under races.
  await db.schema
    .createIndex('enrolments_live_person_method_unique')
    .on('enrolments')
    .columns(['enrolment_method_id', 'person_id'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  // The list's orders and filters (test/query-plans.test.ts), and the ends of a course's or a person's enrolments.
  await createPagedByIdIndex(db, 'enrolments');
  await createChangesIndex(db, 'enrolments');
  await db.schema.createIndex('enrolments_course_id').on('enrolments').columns(['organisation_id', 'course_id', 'id']).execute();
  await db.schema.createIndex('enrolments_person_id').on('enrolments').columns(['organisation_id', 'person_id', 'id']).execute();
}
