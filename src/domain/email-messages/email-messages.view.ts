// Rows as the API shows them (the schemas in email-messages.schemas.ts are the allow-list).
import type { Static } from 'typebox';
import type { EmailMessage, Recipient } from './email-messages.schemas.ts';
import type { EmailMessageRow } from './email-messages.repository.ts';
import { quotedForSummary } from '../../events/summary-text.ts';

export type EmailMessageView = Static<typeof EmailMessage>;
export type RecipientView = Static<typeof Recipient>;

// Quoted as the statements that make an event in SQL quote it (email-messages.repository.ts).
export const describeSubject = quotedForSummary;

export function toEmailMessageView(r: EmailMessageRow): EmailMessageView {
  return {
    id: r.id,
    external_id: r.external_id,
    subject: r.subject,
    body: JSON.parse(r.body),
    audience: JSON.parse(r.audience),
    send_at: r.send_at,
    status: r.status,
    sent_at: r.sent_at,
    recipient_counts: r.recipients_total === null ? null : { total: r.recipients_total, sent: r.recipients_sent, failed: r.recipients_failed },
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
  };
}

export function toRecipientView(r: RecipientView): RecipientView {
  return { id: r.id, person_id: r.person_id, address: r.address, outcome: r.outcome, error: r.error, sent_at: r.sent_at };
}
