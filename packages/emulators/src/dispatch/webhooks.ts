/**
 * Outgoing delivery webhooks: one POST per status change to the organisation's webhook URL, in the wire
 * profile's dialect (spec section 6 shows none of it):
 *   body: profile.webhookBody(...), with the state under the profile's name; with the default profile
 *         {event: "shipment.status_changed", shipment_id, external_order_id, status, occurred_at};
 *   signature: header profile.signatureHeader = profile.sign(raw body, webhookSecret); with the default
 *         profile X-Dispatch-Signature: "sha256=" + hex HMAC-SHA256. Sent only when the organisation has a secret. A non-2xx answer or a network failure is retried on
 * the EMULATOR clock (1 s, 2 s, 4 s, 8 s: five attempts in all), so a manual-clock test drives retries
 * with advance() instead of sleeping. The URL and secret are read at each attempt, so fixing a broken
 * receiver URL lets the remaining retries succeed, and removing it stops them.
 *
 * Each attempt uses its own connection (agent: false): nothing is pooled that could outlive close().
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { defaultWireProfile, type Logger, type WireProfile } from '../relais.js';
import type { EmulatorClock } from './clock.js';
import { wireState, type ShipmentState } from './names.js';
import type { WebhookDelivery } from './types.js';

export const WEBHOOK_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000] as const;
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;
const ATTEMPT_TIMEOUT_MS = 5000;

export interface WebhookTarget {
  url?: string;
  secret?: string;
}

/** A status change, in the emulator's own names (the sender writes it in the profile's dialect). */
export interface StatusChangedEvent {
  shipmentId: string;
  externalOrderId: string;
  status: ShipmentState;
  occurredAt: string;
}

/** The signature header's value for a body: the profile's (default: "sha256=" + hex HMAC-SHA256). */
export function signWebhookBody(secret: string, rawBody: string, profile: WireProfile = defaultWireProfile()): string {
  return profile.sign(rawBody, secret);
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
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(rawBody)),
        },
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
    private readonly profile: WireProfile = defaultWireProfile(),
  ) {}

  /** Sends at once (not waiting for the clock); retries are scheduled on the clock. */
  notifyStatusChanged(orgId: string, event: StatusChangedEvent): void {
    if (!this.targetOf(orgId)?.url) return;
    const { status, ...ids } = event;
    this.track(
      this.attempt(
        orgId,
        this.profile.webhookBody({ ...ids, state: wireState(this.profile, status) }),
        event.shipmentId,
        1,
      ),
    );
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

  private async attempt(
    orgId: string,
    body: Record<string, unknown>,
    shipmentId: string,
    attempt: number,
  ): Promise<void> {
    const target = this.targetOf(orgId);
    if (!target?.url || this.stop.signal.aborted) return;
    const rawBody = JSON.stringify(body);
    const headers: Record<string, string> = { 'user-agent': 'relais-dispatch-emulator' };
    if (target.secret) headers[this.profile.signatureHeader.toLowerCase()] = this.profile.sign(rawBody, target.secret);
    const record: WebhookDelivery = {
      orgId,
      url: target.url,
      body,
      attempt,
      at: new Date(this.clock.now()).toISOString(),
    };
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
      { org: orgId, shipment: shipmentId, status: record.status, attempt, delivered },
      'dispatch emulator webhook attempt',
    );
    const retryDelay = WEBHOOK_RETRY_DELAYS_MS[attempt - 1];
    if (!delivered && retryDelay !== undefined && !this.stop.signal.aborted) {
      this.clock.schedule(retryDelay, () => this.attempt(orgId, body, shipmentId, attempt + 1));
    }
  }
}
