// What an activity type adds to the shared activity: its settings keys, the rows it keeps of its own (a
// wiki for a wiki activity) and how its settings read back. The activity service is given one entry per
// type that has any (src/services.ts); a type without an entry takes no settings.
import type { Static } from 'typebox';
import type { RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ActivitySettings } from './activities.schemas.ts';
import type { ActivityRow } from './activities.repository.ts';
import type { NamedStatement } from '../one-statement-update.repository.ts';

export type ActivitySettingsValue = Static<typeof ActivitySettings>;

export interface ActivityType {
  /** The settings keys this type takes; any other key is a 422 at its pointer. */
  settingKeys: readonly (keyof ActivitySettingsValue)[];
  /**
   * Writes the type's own rows for a new activity, in the activity's transaction, and answers its settings as
   * settingsOf will show them (so that the new activity is answered without reading them back).
   */
  create?(db: Db, organisationId: string, activity: ActivityRow, settings: ActivitySettingsValue): Promise<ActivitySettingsValue>;
  /**
   * PostgreSQL: what `create` writes, as named CTEs of the statement that makes the activity (`u`) in one round trip
   * (one-statement-update.repository.ts), and the settings as `create` answers them. A type with `create` but
   * without this takes the full path.
   */
  createInOneStatement?(settings: ActivitySettingsValue): { effects: NamedStatement[]; settings: ActivitySettingsValue };
  /** The settings shown on activities of this type, by activity id. */
  settingsOf?(db: Db, organisationId: string, activityIds: string[]): Promise<Map<string, ActivitySettingsValue>>;
  /**
   * PostgreSQL: what settingsOf shows for the activity `activityId` (an SQL expression), as JSON text or null, for a
   * statement that changes the activity and answers it at once (a PATCH in one statement). Given with settingsOf.
   */
  settingsJsonSql?(organisationId: string, activityId: RawBuilder<unknown>): RawBuilder<string | null>;
}

export type ActivityTypes = Readonly<Record<string, ActivityType>>;
