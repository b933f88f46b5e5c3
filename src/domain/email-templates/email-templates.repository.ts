import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EmailTemplatesTable } from '../../db/tables.ts';
import type { TemplateScope } from './template-scope.ts';
import { versionRows } from './versions.repository.ts';

export type EmailTemplateRow = Selectable<EmailTemplatesTable>;

export const emailTemplatesRepository = {
  /** The organisation's template of a message at exactly this scope and language, if it has one. */
  find(db: Db, organisationId: string, messageKey: string, scope: TemplateScope): Promise<EmailTemplateRow | undefined> {
    return db
      .selectFrom('email_templates')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('message_key', '=', messageKey)
      .where('scope_level', '=', scope.level)
      .where('scope_id', scope.scope_id === null ? 'is' : '=', scope.scope_id)
      .where('language', '=', scope.language)
      .executeTakeFirst();
  },

  async insert(db: Db, row: EmailTemplatesTable): Promise<void> {
    await db.insertInto('email_templates').values(row).execute();
  },
};

export const emailTemplateVersions = versionRows('email_template_versions');
