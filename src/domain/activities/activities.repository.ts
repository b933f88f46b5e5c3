import type { Selectable } from 'kysely';
import type { ActivitiesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type ActivityRow = Selectable<ActivitiesTable>;

export const activitiesRepository = tenantRows('activities');
