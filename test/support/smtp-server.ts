// A real SMTP server for tests (ARCHITECTURE rule 8: outbound mail goes to a local server the test starts),
// on 127.0.0.1 at an ephemeral port. It keeps every mail it accepted, and refuses the recipients a test names
// (`550` at RCPT TO), so that a delivery failure is a real server's answer.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  /** Envelope recipients (RCPT TO) this mail was accepted for. */
  to: string[];
  subject: string;
  raw: string;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`: give it to the app as SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** Addresses refused at RCPT TO with `550 5.1.1 No such user here`. */
  reject: Set<string>;
  close(): Promise<void>;
}

/** RFC 2047 encoded words (`=?UTF-8?Q?Week_2_=E2=80=93?=`) → text, for reading headers back. */
function decodeHeader(value: string): string {
  const bytes = (text: string) => Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g, (_m, encoding: string, text: string) => (encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : bytes(text)).toString('utf8'));
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const reject = new Set<string>();
  const server = new SMTPServer({
    // Plain SMTP on loopback: no TLS to set up, no credentials to check.
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!reject.has(address.address)) return callback();
      const err = Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 });
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = decodeHeader(/^Subject: (.*(?:\r\n[ \t].*)*)/im.exec(raw)?.[1].replace(/\r\n[ \t]/g, ' ') ?? '');
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject,
          raw,
        });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    reject,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
