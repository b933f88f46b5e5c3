import http from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface AtriumEvent {
  type: string;
  timestamp: string;
  data: { id?: string; summary?: string; [key: string]: unknown };
}

/**
 * A request listener that acts only on deliveries signed with `secret` (`whsec_…`, returned once when the
 * subscription is created; undefined until then, when only the verification ping is answered).
 */
export function webhookReceiver(secret: string | undefined, onEvent: (event: AtriumEvent, deliveryId: string) => void): http.RequestListener {
  const webhook = secret ? new Webhook(secret) : undefined;
  const handled = new Set<string>(); // use your database: a delivery may arrive more than once
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const payload = Buffer.concat(chunks).toString('utf8'); // verify the exact bytes, before parsing
      let event: AtriumEvent;
      try {
        if (!webhook) throw new Error('no secret yet');
        event = webhook.verify(payload, req.headers as Record<string, string>) as AtriumEvent;
      } catch {
        // The verification ping comes before you know the secret: answer it, act on nothing unverified.
        const isPing = (() => { try { return JSON.parse(payload).type === 'webhook.ping'; } catch { return false; } })();
        res.writeHead(isPing ? 204 : 400).end();
        return;
      }
      const deliveryId = String(req.headers['webhook-id']); // the same on every retry of this event
      if (!handled.has(deliveryId)) {
        handled.add(deliveryId);
        onEvent(event, deliveryId); // the data holds ids and a summary: read the resource for its state
      }
      res.writeHead(204).end(); // answer 2xx quickly; do slow work after
    });
  };
}

if (import.meta.main) {
  const receive = webhookReceiver(process.env.ATRIUM_WEBHOOK_SECRET, (event) => console.log(`${event.type}: ${event.data.summary}`));
  http.createServer(receive).listen(Number(process.env.PORT ?? 3000)); // behind your TLS proxy: webhooks go to https URLs only
}
