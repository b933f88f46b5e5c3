// The one way the service sends mail (ARCHITECTURE: e-mail). With SMTP_URL, nodemailer hands each mail to
// that server; without it, mail goes to the mail log table, which an administrator can read. Callers see one
// interface and never ask which it is.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { createMailLogMailer } from './mail-log.ts';
import type { Mailer, MailSettings, OutgoingMail } from './mail.ts';
import { mailSent } from '../metrics/instruments.ts';
import { createSmtpMailer } from './smtp.ts';

export function createMailer(settings: MailSettings, deps: { db: Db; clock: Clock }): Mailer {
  return counted(settings.smtpUrl ? createSmtpMailer(settings.smtpUrl, settings.from) : createMailLogMailer(deps, settings.from));
}

/** Every mail handed over, or refused, counts in `atrium_mail_sent_total` whichever transport took it. */
function counted(mailer: Mailer): Mailer {
  const send = mailer.send.bind(mailer);
  return Object.assign(mailer, {
    async send(mail: OutgoingMail) {
      try {
        await send(mail);
        mailSent.inc({ result: 'sent' });
      } catch (err) {
        mailSent.inc({ result: 'failed' });
        throw err;
      }
    },
  });
}
