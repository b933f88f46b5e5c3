// Platform templates belong to the deployment, not to an organisation: no organisation filter applies here.
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { PlatformEmailTemplatesTable } from '../../db/tables.ts';
import { versionRows } from '../email-templates/versions.repository.ts';

export type PlatformEmailTemplateRow = Selectable<PlatformEmailTemplatesTable>;

export const platformEmailTemplatesRepository = {
  find(db: Db, messageKey: string, language: string): Promise<PlatformEmailTemplateRow | undefined> {
    return db.selectFrom('platform_email_templates').selectAll().where('message_key', '=', messageKey).where('language', '=', language).executeTakeFirst();
  },

  async insert(db: Db, row: PlatformEmailTemplatesTable): Promise<void> {
    await db.insertInto('platform_email_templates').values(row).execute();
  },
};

export const platformEmailTemplateVersions = versionRows('platform_email_template_versions');
