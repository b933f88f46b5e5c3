// Without SMTP_URL, mail is "sent" into the mail_log table: development and small deployments still see
// exactly what would have gone out, and an organisation's administrator can read its own.
import type { Selectable } from 'kysely';
import { type Clock, nowIso } from '../clock.ts';
import type { Db } from '../db/database.ts';
import type { MailLogTable } from '../db/tables.ts';
import { newId } from '../ids.ts';
import type { Mailer } from './mail.ts';

export type MailLogRow = Selectable<MailLogTable>;

export const mailLogRepository = {
  async insert(db: Db, row: MailLogRow): Promise<void> {
    await db.insertInto('mail_log').values(row).execute();
  },

  /** An organisation's log, oldest first, keyset-paged by id (UUIDv7: the order they were written). */
  page(db: Db, organisationId: string, q: { after?: string[]; limit: number }): Promise<MailLogRow[]> {
    let query = db.selectFrom('mail_log').selectAll().where('organisation_id', '=', organisationId);
    if (q.after) query = query.where('id', '>', q.after[0]);
    return query.orderBy('id').limit(q.limit + 1).execute();
  },
};

export function createMailLogMailer(deps: { db: Db; clock: Clock }, from: string): Mailer {
  const { db, clock } = deps;
  return {
    kind: 'log',
    from,
    async send(mail) {
      await mailLogRepository.insert(db, {
        id: newId(),
        organisation_id: mail.organisationId,
        from_address: from,
        to_address: mail.to.name ? `${mail.to.name} <${mail.to.address}>` : mail.to.address,
        subject: mail.subject,
        text_body: mail.text ?? null,
        html_body: mail.html ?? null,
        created_at: nowIso(clock),
      });
    },
    async verify() {},
    close() {},
  };
}
