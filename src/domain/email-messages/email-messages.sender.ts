// Really sending scheduled email messages, from the worker (src/jobs). Each pass:
// 1. claims one due message in a transaction (PostgreSQL: FOR UPDATE SKIP LOCKED, so several workers never
//    take the same one): status `sending`, a claim token and a lease; on the first claim the audience is
//    resolved into recipient rows, all `pending`;
// 2. sends once per recipient: the recipient is marked attempted (a conditional update only one worker can win)
//    before the mail goes to the transport, and its outcome is recorded as soon as it is known, with the
//    message's counts, renewing the lease;
// 3. marks the message `sent` and writes `email_message.sent` in one transaction.
// A worker that dies mid-way stops renewing its lease; the next claim takes the message over, fails the
// recipients whose outcome is unknown (attempted, not recorded) and sends to those never attempted. No one
// gets the mail twice.
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { newId } from '../../ids.ts';
import { MailDeliveryError, type Mailer, type OutgoingMail } from '../../mail/mail.ts';
import { deliveryRepository } from './email-message-delivery.repository.ts';
import { emailMessagesRepository, recipientId, type EmailMessageRow, type RecipientRow, type StoredAudience } from './email-messages.repository.ts';
import { describeSubject } from './email-messages.view.ts';

/** How long a claim holds without being renewed (each recorded outcome renews it). */
export const CLAIM_LEASE_MS = 5 * 60_000;
const RECIPIENT_BATCH = 100;
/** A pass ends after this many messages, so that shutdown and other jobs are not kept waiting. */
const MESSAGES_PER_PASS = 50;

export const IN_DOUBT_ERROR = 'Sending was interrupted before its outcome was recorded; it may or may not have been delivered, and is not sent again.';

export interface SendPass {
  /** Messages this pass finished sending. */
  sent: string[];
}

type Claim = { row: EmailMessageRow; token: string };

function contentOf(row: EmailMessageRow): Pick<OutgoingMail, 'subject' | 'text' | 'html'> {
  const body = JSON.parse(row.body) as { format: 'html' | 'markdown' | 'plain'; content: string };
  return body.format === 'html' ? { subject: row.subject, html: body.content } : { subject: row.subject, text: body.content };
}

export function createEmailMessageSender(deps: { db: Db; clock: Clock; events: EventRecorder; mail: Mailer }) {
  const { db, clock, events } = deps;
  const stamp = () => nowIso(clock);
  const leaseEnd = () => new Date(clock.now().getTime() + CLAIM_LEASE_MS).toISOString();

  /** The next due message, claimed; undefined when none is due; null when another worker won the race. */
  function claimNext(now: string): Promise<Claim | undefined | null> {
    return db.transaction().execute(async (tx) => {
      const row = await deliveryRepository.lockNextDue(tx, now);
      if (!row) return undefined;
      const token = newId();
      if (row.status === 'scheduled') {
        const members = await emailMessagesRepository.audience(tx, row.organisation_id, JSON.parse(row.audience) as StoredAudience);
        const claimed = await deliveryRepository.claim(tx, row, {
          status: 'sending',
          claim_token: token,
          lease_until: leaseEnd(),
          recipients_total: members.length,
          recipients_sent: 0,
          recipients_failed: 0,
          updated_at: stamp(),
        });
        if (!claimed) return null;
        const recipients: RecipientRow[] = members.map((m) => ({
          id: recipientId(row.id, m.person_id),
          organisation_id: row.organisation_id,
          email_message_id: row.id,
          person_id: m.person_id,
          address: m.address,
          name: m.name,
          outcome: 'pending',
          error: null,
          attempted_at: null,
          sent_at: null,
        }));
        await deliveryRepository.insertRecipients(tx, recipients);
      } else {
        // A claim that lapsed: its worker stopped. Take it over.
        if (!(await deliveryRepository.claim(tx, row, { claim_token: token, lease_until: leaseEnd() }))) return null;
        await deliveryRepository.countFailed(tx, row, await deliveryRepository.failInDoubt(tx, row, IN_DOUBT_ERROR));
      }
      return { row: { ...row, status: 'sending' as const }, token };
    });
  }

  /** Sends to every recipient not yet attempted; 'paused' at shutdown, 'lost' if the claim passed to another worker. */
  async function deliver({ row, token }: Claim, signal: AbortSignal | undefined): Promise<'sent' | 'paused' | 'lost'> {
    const content = contentOf(row);
    for (let batch = await deliveryRepository.pending(db, row, RECIPIENT_BATCH); batch.length > 0; batch = await deliveryRepository.pending(db, row, RECIPIENT_BATCH)) {
      for (const recipient of batch) {
        if (signal?.aborted) {
          // Give the claim up now rather than let it lapse, so another worker (or the next start) resumes at once.
          await deliveryRepository.renewClaim(db, row, token, stamp());
          return 'paused';
        }
        if (!(await deliveryRepository.markAttempt(db, recipient, stamp()))) continue;
        let error: string | null = null;
        try {
          await deps.mail.send({ organisationId: row.organisation_id, to: { name: recipient.name, address: recipient.address }, ...content });
        } catch (err) {
          // Anything else (the mail log's database failing) is not the recipient's outcome: the pass fails, and
          // the recipient is settled as in doubt when the message is taken over.
          if (!(err instanceof MailDeliveryError)) throw err;
          error = err.detail;
        }
        const stillOurs = await db.transaction().execute(async (tx) => {
          await deliveryRepository.recordOutcome(tx, recipient, error === null ? 'sent' : 'failed', error, stamp());
          return deliveryRepository.renewClaim(tx, row, token, leaseEnd());
        });
        if (!stillOurs) return 'lost';
      }
    }
    const finished = await db.transaction().execute(async (tx) => {
      const done = await deliveryRepository.finish(tx, row, token, stamp());
      if (done) {
        const failed = done.recipients_failed > 0 ? `, ${done.recipients_failed} failed` : '';
        await events.record(tx, row.organisation_id, 'email_message.sent', {
          id: row.id,
          summary: `Email message ${describeSubject(row.subject)} sent to ${done.recipients_sent} of ${done.recipients_total ?? 0} recipient(s)${failed}.`,
        });
      }
      return done;
    });
    return finished ? 'sent' : 'lost';
  }

  return {
    /**
     * One pass: sends every message due at `now` (scheduled, `send_at` ≤ now), and resumes any whose worker
     * stopped. When the SMTP server cannot be reached, nothing is claimed (MailUnavailable is thrown) and the
     * messages stay scheduled for the next pass.
     */
    async runDueMessages(now: Date = clock.now(), signal?: AbortSignal): Promise<SendPass> {
      const pass: SendPass = { sent: [] };
      const at = now.toISOString();
      if (!(await deliveryRepository.anyDue(db, at))) return pass;
      await deps.mail.verify();
      for (let i = 0; i < MESSAGES_PER_PASS && !signal?.aborted; i++) {
        const claim = await claimNext(at);
        if (claim === undefined) break;
        if (claim === null) continue;
        if ((await deliver(claim, signal)) === 'sent') pass.sent.push(claim.row.id);
      }
      return pass;
    },
  };
}
