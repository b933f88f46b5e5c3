import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnrolmentMethodsTable, EnrolmentsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type EnrolmentMethodRow = Selectable<EnrolmentMethodsTable>;

export const enrolmentMethodsRepository = {
  ...tenantRows('enrolment_methods'),

  async insertEnrolment(db: Db, row: EnrolmentsTable): Promise<void> {
    await db.insertInto('enrolments').values(row).execute();
  },
};
