// Standard Webhooks signatures (spec: Events 3-4), with the `standardwebhooks` library. While a secret is being
// rotated, a delivery carries two `v1` signatures — old and new — and a receiver with either secret accepts it.
import { Webhook } from 'standardwebhooks';

export function signatureHeaders(messageId: string, timestamp: Date, body: string, secrets: string[]): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
