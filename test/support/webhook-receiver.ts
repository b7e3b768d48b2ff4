// Test support: a webhook receiver on 127.0.0.1 that verifies every delivery with the standardwebhooks package, not our code.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HANG_MS } from './eventually.ts';

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
  /** Requests that arrived and are being held unanswered now (holdAnswers). */
  readonly holding: number;
  /** Held requests the sender gave up on (closed their connection) while held: its time limit ran out on them. */
  readonly abandonedWhileHeld: number;
  /** Holds every answer back until the function returned is called: a receiver as slow as the test wants, whatever the clock. */
  holdAnswers(): () => void;
  setSecret(secret: string): void;
  /** Closes the port: deliveries meet a refused connection. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Waits until `check` holds of what was received; fails after `ms` (a hang detector, not a timing check) saying what did arrive. */
  waitFor(what: string, check: (received: readonly ReceivedEvent[]) => boolean, ms?: number): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  let webhook: Webhook | null = null;
  let server: Server | null = null;
  let port = 0;
  let gate: Promise<void> | null = null;
  const receiver: Receiver = {
    url: '',
    received: [],
    rejected: [],
    requests: 0,
    failWith: null,
    holding: 0,
    abandonedWhileHeld: 0,
    holdAnswers() {
      let release: () => void = () => undefined;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = null;
        release();
      };
    },
    setSecret(secret) {
      webhook = new Webhook(secret);
    },
    async start() {
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', async () => {
          if (gate !== null) {
            const held = receiver as { holding: number; abandonedWhileHeld: number };
            held.holding++;
            let answered = false;
            request.socket.once('close', () => {
              if (!answered) held.abandonedWhileHeld++;
            });
            await gate;
            answered = true;
            held.holding--;
          }
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
    async waitFor(what, check, ms = HANG_MS) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        if (check(receiver.received)) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`${what}: not received within ${ms} ms, taken for a hang (not a timing check); received: ${receiver.received.map((r) => `${r.event.type} ${r.event.id}`).join(', ')}; rejected: ${receiver.rejected.join(' | ')}`);
    },
  };
  await receiver.start();
  return receiver;
}
