// An organisation's mail log, for its administrators: what the mail-log transport (src/mail/mail-log.ts) wrote
// when no SMTP server is configured, paged like every list.
import type { Db } from '../../db/database.ts';
import type { CursorCodec, Page } from '../../operations/pagination.ts';
import { mailLogRepository } from '../../mail/mail-log.ts';
import { listPage } from '../../operations/listing.ts';

export interface MailLogEntry {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string | null;
  html: string | null;
  created_at: string;
}

export function createMailLogReader(deps: { cursors: CursorCodec }) {
  return {
    list(db: Db, organisationId: string, params: { limit?: number; cursor?: string } = {}): Promise<Page<MailLogEntry>> {
      return listPage(deps.cursors, {
        list: 'mail_log',
        organisationId,
        params,
        fetch: (q) => mailLogRepository.page(db, organisationId, q),
        map: (r) => ({ id: r.id, from: r.from_address, to: r.to_address, subject: r.subject, text: r.text_body, html: r.html_body, created_at: r.created_at }),
      });
    },
  };
}

export type MailLogReader = ReturnType<typeof createMailLogReader>;
