// What sending mail is, for everyone who sends or implements it: the mail, the transport's interface and its
// errors. The transports (smtp.ts, mail-log.ts) and the factory that picks one (mailer.ts) build on this file.
export interface OutgoingMail {
  /** The organisation the mail is sent for; null for the deployment's own mail. */
  organisationId: string | null;
  to: { name: string; address: string };
  subject: string;
  text?: string;
  html?: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'log';
  /** The From of every mail (MAIL_FROM). */
  readonly from: string;
  /** Resolves once the mail is accepted (by the SMTP server, or into the log); rejects with MailDeliveryError. */
  send(mail: OutgoingMail): Promise<void>;
  /** Rejects with MailUnavailable when no mail can be handed over now (the SMTP server cannot be reached). */
  verify(): Promise<void>;
  close(): void;
}

export interface MailSettings {
  smtpUrl: string | undefined;
  from: string;
}

/** One mail was refused or could not be handed over. `detail` is the server's answer where it gave one. */
export class MailDeliveryError extends Error {
  readonly detail: string;
  /** True when the server refused it for good (5xx), false when it might be accepted later. */
  readonly permanent: boolean;
  constructor(detail: string, permanent: boolean) {
    super(detail);
    this.name = 'MailDeliveryError';
    this.detail = detail;
    this.permanent = permanent;
  }
}

/** The transport cannot take mail at all right now; nothing was sent. */
export class MailUnavailable extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'MailUnavailable';
  }
}
