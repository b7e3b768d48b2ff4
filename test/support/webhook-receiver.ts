// Test support: a webhook receiver on 127.0.0.1 that verifies every delivery with the standardwebhooks package, not our code.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedEvent {
  readonly webhookId: string;
  readonly event: { id: string; type: string; created_at: string; data: { object: any; changes: Record<string, { old: unknown; new: unknown }> } };
  readonly body: string;
}

export interface Receiver {
  /** Where to point an endpoint; the same port across stop() and start(). */
  readonly url: string;
  /** Verified deliveries answered 2xx, in the order they came (duplicates included). */
  readonly received: ReceivedEvent[];
  /** Deliveries that failed verification: must stay empty. */
  readonly rejected: string[];
  /** Every request that arrived, whatever was answered. */
  requests: number;
  /** The status answered while failing; null: answer 204 after verifying. */
  failWith: number | null;
  /** How long each answer is held back: a slow receiver. */
  delayMs: number;
  setSecret(secret: string): void;
  /** Closes the port: deliveries meet a refused connection. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Waits until `check` holds of what was received, or fails after `ms` saying what did arrive. */
  waitFor(what: string, check: (received: readonly ReceivedEvent[]) => boolean, ms?: number): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  let webhook: Webhook | null = null;
  let server: Server | null = null;
  let port = 0;
  const receiver: Receiver = {
    url: '',
    received: [],
    rejected: [],
    requests: 0,
    failWith: null,
    delayMs: 0,
    setSecret(secret) {
      webhook = new Webhook(secret);
    },
    async start() {
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', async () => {
          if (receiver.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, receiver.delayMs));
          receiver.requests++;
          const body = Buffer.concat(chunks).toString('utf8');
          if (receiver.failWith !== null) {
            response.writeHead(receiver.failWith, { 'content-type': 'text/plain' }).end('receiver is failing on purpose');
            return;
          }
          try {
            if (webhook === null) throw new Error('no secret set');
            const event = webhook.verify(body, request.headers as Record<string, string>) as ReceivedEvent['event'];
            receiver.received.push({ webhookId: String(request.headers['webhook-id']), event, body });
            response.writeHead(204).end();
          } catch (error) {
            receiver.rejected.push(`${(error as Error).message}: ${body}`);
            response.writeHead(400).end('bad signature');
          }
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      port = (server!.address() as AddressInfo).port;
      (receiver as { url: string }).url = `http://127.0.0.1:${port}${path}`;
    },
    async stop() {
      const closing = server;
      server = null;
      if (closing === null) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async waitFor(what, check, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        if (check(receiver.received)) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`${what}: not received within ${ms} ms; received: ${receiver.received.map((r) => `${r.event.type} ${r.event.id}`).join(', ')}; rejected: ${receiver.rejected.join(' | ')}`);
    },
  };
  await receiver.start();
  return receiver;
}
