/**
 * Outgoing delivery webhooks: one POST per status change to the organisation's webhook URL.
 *
 * Body (UNCONFIRMED shape, see wire.ts): {event, shipment_id, external_order_id, status, occurred_at}.
 * Signature: header X-Dispatch-Signature = "sha256=" + hex HMAC-SHA256(webhookSecret, raw body bytes);
 * sent only when the organisation has a secret. A non-2xx answer or a network failure is retried on
 * the EMULATOR clock (1 s, 2 s, 4 s, 8 s: five attempts in all), so a manual-clock test drives retries
 * with advance() instead of sleeping. The URL and secret are read at each attempt, so fixing a broken
 * receiver URL lets the remaining retries succeed, and removing it stops them.
 *
 * Each attempt uses its own connection (agent: false): nothing is pooled that could outlive close().
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../../log.js';
import { WEBHOOK_EVENT_STATUS_CHANGED, WEBHOOK_SIGNATURE_HEADER } from '../../dispatch/wire.js';
import type { EmulatorClock } from './clock.js';
import type { WebhookDelivery } from './types.js';

export const WEBHOOK_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000] as const;
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;
const ATTEMPT_TIMEOUT_MS = 5000;

export interface WebhookTarget {
  url?: string;
  secret?: string;
}

export interface StatusChangedEvent {
  event: typeof WEBHOOK_EVENT_STATUS_CHANGED;
  shipment_id: string;
  external_order_id: string;
  status: string;
  occurred_at: string;
}

export function signWebhookBody(secret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

function postJson(url: URL, rawBody: string, headers: Record<string, string>, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        agent: false,
        signal,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(rawBody)) },
      },
      (res) => {
        res.resume(); // drain: the status is all we need
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(rawBody);
  });
}

export class WebhookSender {
  private readonly log: WebhookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stop = new AbortController();

  constructor(
    private readonly clock: EmulatorClock,
    private readonly targetOf: (orgId: string) => WebhookTarget | undefined,
    private readonly logger: Logger,
  ) {}

  /** Sends at once (not waiting for the clock); retries are scheduled on the clock. */
  notifyStatusChanged(orgId: string, event: StatusChangedEvent): void {
    if (!this.targetOf(orgId)?.url) return;
    this.track(this.attempt(orgId, event, 1));
  }

  /** Resolves when no delivery attempt is on the wire. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  deliveries(): WebhookDelivery[] {
    return this.log.map((d) => ({ ...d }));
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.idle();
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }

  private async attempt(orgId: string, event: StatusChangedEvent, attempt: number): Promise<void> {
    const target = this.targetOf(orgId);
    if (!target?.url || this.stop.signal.aborted) return;
    const rawBody = JSON.stringify(event);
    const headers: Record<string, string> = { 'user-agent': 'relais-dispatch-emulator' };
    if (target.secret) headers[WEBHOOK_SIGNATURE_HEADER.toLowerCase()] = signWebhookBody(target.secret, rawBody);
    const record: WebhookDelivery = { orgId, url: target.url, body: event, attempt, at: new Date(this.clock.now()).toISOString() };
    try {
      record.status = await postJson(
        new URL(target.url),
        rawBody,
        headers,
        AbortSignal.any([this.stop.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
      );
    } catch (error) {
      record.error = error instanceof Error ? error.message : String(error);
    }
    this.log.push(record);
    const delivered = record.status !== undefined && record.status >= 200 && record.status < 300;
    this.logger.debug(
      { org: orgId, shipment: event.shipment_id, status: record.status, attempt, delivered },
      'dispatch emulator webhook attempt',
    );
    const retryDelay = WEBHOOK_RETRY_DELAYS_MS[attempt - 1];
    if (!delivered && retryDelay !== undefined && !this.stop.signal.aborted) {
      this.clock.schedule(retryDelay, () => this.attempt(orgId, event, attempt + 1));
    }
  }
}
