// Mail over SMTP with nodemailer: a small pool of connections to the server SMTP_URL names.
import nodemailer, { type NodemailerError } from 'nodemailer';
import { MailDeliveryError, MailUnavailable, type Mailer } from './mail.ts';

const MAX_DETAIL = 1000;

/** The server's own answer where there is one (`550 5.1.1 No such user`), else what went wrong. */
function describe(err: unknown): string {
  const e = err as NodemailerError;
  const text = (e?.response || e?.message || String(err)).trim();
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 3)}...` : text;
}

export function createSmtpMailer(url: string, from: string): Mailer {
  const transporter = nodemailer.createTransport(
    {
      url,
      pool: true,
      maxConnections: 2,
      // A mail whose connection dropped is failed, never handed over a second time: the server may already
      // have accepted it, and a campaign must not reach anyone twice.
      maxRequeues: 0,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
      // Message content comes from API callers: never let it name files or URLs for nodemailer to fetch.
      disableFileAccess: true,
      disableUrlAccess: true,
    },
    { from },
  );
  return {
    kind: 'smtp',
    from,
    async send(mail) {
      try {
        await transporter.sendMail({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      } catch (err) {
        throw new MailDeliveryError(describe(err), (err as NodemailerError).permanent === true);
      }
    },
    async verify() {
      try {
        await transporter.verify();
      } catch (err) {
        throw new MailUnavailable(`The SMTP server cannot be used: ${describe(err)}`);
      }
    },
    close() {
      transporter.close();
    },
  };
}
