// The one way the service sends mail (ARCHITECTURE: e-mail). With SMTP_URL, nodemailer hands each mail to
// that server; without it, mail goes to the mail log table, which an administrator can read. Callers see one
// interface and never ask which it is. nodemailer is loaded with the first mail handed to SMTP, so a process
// that sends none (an API process, most of the time) never pays its memory.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { createMailLogMailer } from './mail-log.ts';
import type { Mailer, MailSettings, OutgoingMail } from './mail.ts';
import { mailSent } from '../metrics/instruments.ts';
import { loadOnce } from '../load-once.ts';

export function createMailer(settings: MailSettings, deps: { db: Db; clock: Clock }): Mailer {
  return counted(settings.smtpUrl ? smtpMailer(settings.smtpUrl, settings.from) : createMailLogMailer(deps, settings.from));
}

/** smtp.ts's mailer, made when it is first used. */
function smtpMailer(url: string, from: string): Mailer {
  let mailer: Mailer | undefined;
  const open = loadOnce(async () => (mailer = (await import('./smtp.ts')).createSmtpMailer(url, from)));
  return {
    kind: 'smtp',
    from,
    send: async (mail) => (await open()).send(mail),
    verify: async () => (await open()).verify(),
    close: () => mailer?.close(),
  };
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
