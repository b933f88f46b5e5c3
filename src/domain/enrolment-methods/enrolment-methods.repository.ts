import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnrolmentMethodsTable, EnrolmentsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type EnrolmentMethodRow = Selectable<EnrolmentMethodsTable>;

export const enrolmentMethodsRepository = {
  ...tenantRows('enrolment_methods'),

  async activeEnrolments(db: Db, organisationId: string, methodId: string): Promise<number> {
    const row = await db
      .selectFrom('enrolments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organisation_id', '=', organisationId)
      .where('enrolment_method_id', '=', methodId)
      .where('status', '!=', 'ended')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async endEnrolments(db: Db, organisationId: string, methodId: string, at: string): Promise<number> {
    const result = await db
      .updateTable('enrolments')
      .set({ status: 'ended', ended_at: at })
      .where('organisation_id', '=', organisationId)
      .where('enrolment_method_id', '=', methodId)
      .where('status', '!=', 'ended')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  async insertEnrolment(db: Db, row: EnrolmentsTable): Promise<void> {
    await db.insertInto('enrolments').values(row).execute();
  },
};
