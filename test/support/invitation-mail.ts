// Reading an invitation link out of a mail the test SMTP server received.
import assert from 'node:assert/strict';
import type { TestSmtpServer } from './smtp-server.ts';

/** The invitation link of the last mail to `address`, decoded from its quoted-printable body. */
export function invitationLinkIn(smtp: TestSmtpServer, address: string): string {
  const mail = smtp.received.filter((m) => m.to.includes(address)).at(-1);
  assert.ok(mail, `no mail to ${address}`);
  const body = mail.raw.replace(/=\r\n/g, '').replace(/=3D/g, '=');
  const link = /https?:\/\/\S+\/invitations\/[A-Za-z0-9_-]+/.exec(body)?.[0];
  assert.ok(link, 'the mail holds the link');
  return link;
}
