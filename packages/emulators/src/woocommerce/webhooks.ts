/**
 * Webhook delivery as WooCommerce core does it (includes/class-wc-webhook.php, wc-webhook-functions.php):
 *
 *  - Ping, once when a webhook is created (and again on any later save while the first ping has not
 *    succeeded, or when the delivery URL changes): POST `webhook_id=<id>` form-urlencoded, only a User-Agent,
 *    no X-WC-Webhook-* header, no signature. Only a 200 counts; the result never touches the failure count.
 *  - Deliveries run in the background after the request that caused them (Action Scheduler), one at a time;
 *    a delivery still waiting for the same webhook and resource is not queued twice. The body is built when
 *    the delivery runs, so it shows the resource as it is then.
 *  - Body: `trim(wp_json_encode($payload))`. Headers: Content-Type, X-WC-Webhook-Source (home URL with a
 *    trailing slash), -Topic, -Resource, -Event, -Signature (base64 HMAC-SHA256 of the body with the
 *    secret), -ID, -Delivery-ID (a new hash for every delivery), User-Agent `WooCommerce/x Hookshot
 *    (WordPress/y)`. No redirects are followed, no retry is made.
 *  - 200..302 resets the failure count. Anything else (or no answer) counts a failure; core disables the
 *    webhook on the failure that follows five recorded ones (`$failures > 5`), i.e. the 6th in a row.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../relais.js';
import { toSeconds, type ShopState, type Webhook } from './model.js';
import { phpJsonEncode, wpSpecialcharsDecode } from './php.js';

export interface DeliveryRecord {
  shopId: string;
  webhookId: number;
  kind: 'ping' | 'event';
  /** `order.updated` etc.; null for a ping. */
  topic: string | null;
  resourceId: number | null;
  /** X-WC-Webhook-Delivery-ID; null for a ping. */
  deliveryId: string | null;
  url: string;
  /** HTTP status of the answer, or null when none came (refused, reset, timed out). */
  status: number | null;
  error: string | null;
  /** Whether core counts it a success (200..302 for events, exactly 200 for a ping). */
  ok: boolean;
  /** Webhook status after this attempt was recorded. */
  webhookStatusAfter: Webhook['status'];
  durationMs: number;
  at: Date;
}

export interface PingResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

export interface DelivererOptions {
  userAgent: string;
  timeoutMs: number;
  /** The consecutive failed delivery that disables a webhook (core: 6, from `$failures > 5`). */
  disableAfterFailures: number;
  now(): Date;
  logger: Logger;
  /** Payload of `<resource>.<event>` for the resource id, built when the delivery runs. */
  buildPayload(shop: ShopState, webhook: Webhook, resourceId: number): unknown;
  homeUrl(shop: ShopState): string;
}

interface Job {
  shop: ShopState;
  webhookId: number;
  resourceId: number;
  started: boolean;
}

export class WebhookDeliverer {
  private readonly queue: Job[] = [];
  private running = false;
  private closed = false;
  private readonly records: DeliveryRecord[] = [];
  private readonly inFlight = new Set<AbortController>();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: DelivererOptions) {}

  deliveries(): readonly DeliveryRecord[] {
    return this.records;
  }

  /**
   * `WC_Webhook::process()` for one resource: only active webhooks whose topic matches are queued, and a
   * delivery already waiting for the same webhook and resource is enough (Action Scheduler's uniqueness).
   */
  enqueue(shop: ShopState, topic: string, resourceId: number): void {
    if (this.closed) return;
    for (const webhook of shop.webhooks.values()) {
      if (webhook.topic !== topic || webhook.status !== 'active') continue;
      const waiting = this.queue.some(
        (job) => !job.started && job.shop === shop && job.webhookId === webhook.id && job.resourceId === resourceId,
      );
      if (waiting) continue;
      this.queue.push({ shop, webhookId: webhook.id, resourceId, started: false });
    }
    this.kick();
  }

  /** Resolves once every queued delivery has been attempted. */
  settled(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async ping(shop: ShopState, webhook: Webhook): Promise<PingResult> {
    const started = Date.now();
    const body = `webhook_id=${webhook.id}`;
    const outcome = await this.post(
      webhook.deliveryUrl,
      {
        'User-Agent': this.options.userAgent,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body,
    );
    const ok = outcome.status === 200;
    if (ok) {
      webhook.pendingDelivery = false;
      this.saveWebhook(webhook);
    }
    this.records.push({
      shopId: shop.settings.id,
      webhookId: webhook.id,
      kind: 'ping',
      topic: null,
      resourceId: null,
      deliveryId: null,
      url: webhook.deliveryUrl,
      status: outcome.status,
      error: outcome.error,
      ok,
      webhookStatusAfter: webhook.status,
      durationMs: Date.now() - started,
      at: new Date(),
    });
    this.options.logger.debug(
      { shop: shop.settings.id, webhookId: webhook.id, status: outcome.status, ok },
      'woo emulator: webhook ping',
    );
    const error = ok
      ? null
      : outcome.error !== null
        ? `Error: Delivery URL cannot be reached: ${outcome.error}`
        : `Error: Delivery URL returned response code: ${outcome.status ?? 0}`;
    return { ok, status: outcome.status, error };
  }

  /**
   * `WC_Webhook_Data_Store::update()` after a change: a save pings when the webhook is active and either its
   * delivery URL changed or its first ping never succeeded.
   */
  async afterSave(shop: ShopState, webhook: Webhook, deliveryUrlChanged: boolean): Promise<PingResult | undefined> {
    this.saveWebhook(webhook);
    if (webhook.status === 'active' && (deliveryUrlChanged || webhook.pendingDelivery)) return this.ping(shop, webhook);
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    for (const controller of this.inFlight) controller.abort();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private kick(): void {
    if (this.running || this.closed) return;
    this.running = true;
    // Deliver after the current request has answered, as the background queue would.
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (!this.closed) {
        const job = this.queue[0];
        if (!job) break;
        job.started = true;
        try {
          await this.deliver(job);
        } catch (error) {
          this.options.logger.error({ err: error }, 'woo emulator: webhook delivery crashed');
        }
        this.queue.shift();
      }
    } finally {
      this.running = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async deliver(job: Job): Promise<void> {
    const webhook = job.shop.webhooks.get(job.webhookId);
    if (!webhook) return;
    const started = Date.now();
    const [resource = '', event = ''] = webhook.topic.split('.');
    const payload =
      event === 'deleted' ? { id: job.resourceId } : this.options.buildPayload(job.shop, webhook, job.resourceId);
    const body = phpJsonEncode(payload).trim();
    const deliveryId = randomBytes(16).toString('hex');
    const signature = createHmac('sha256', wpSpecialcharsDecode(webhook.secret)).update(body, 'utf8').digest('base64');
    const outcome = await this.post(
      webhook.deliveryUrl,
      {
        'User-Agent': this.options.userAgent,
        'Content-Type': 'application/json',
        'X-WC-Webhook-Source': `${this.options.homeUrl(job.shop)}/`,
        'X-WC-Webhook-Topic': webhook.topic,
        'X-WC-Webhook-Resource': resource,
        'X-WC-Webhook-Event': event,
        'X-WC-Webhook-Signature': signature,
        'X-WC-Webhook-ID': String(webhook.id),
        'X-WC-Webhook-Delivery-ID': deliveryId,
      },
      body,
    );
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 303;
    if (ok) webhook.failureCount = 0;
    else this.failedDelivery(webhook);
    this.records.push({
      shopId: job.shop.settings.id,
      webhookId: webhook.id,
      kind: 'event',
      topic: webhook.topic,
      resourceId: job.resourceId,
      deliveryId,
      url: webhook.deliveryUrl,
      status: outcome.status,
      error: outcome.error,
      ok,
      webhookStatusAfter: webhook.status,
      durationMs: Date.now() - started,
      at: new Date(),
    });
    this.options.logger.debug(
      {
        shop: job.shop.settings.id,
        webhookId: webhook.id,
        topic: webhook.topic,
        resourceId: job.resourceId,
        status: outcome.status,
        ok,
        webhookStatus: webhook.status,
      },
      'woo emulator: webhook delivery',
    );
    await this.afterSave(job.shop, webhook, false);
  }

  private failedDelivery(webhook: Webhook): void {
    if (webhook.failureCount >= this.options.disableAfterFailures - 1) {
      webhook.status = 'disabled';
      this.options.logger.info(
        { webhookId: webhook.id },
        'woo emulator: webhook disabled after consecutive delivery failures',
      );
    } else {
      webhook.failureCount += 1;
    }
  }

  private saveWebhook(webhook: Webhook): void {
    webhook.dateModified = toSeconds(this.options.now());
  }

  private post(
    url: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number | null; error: string | null }> {
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        resolve({ status: null, error: 'A valid URL was not provided.' });
        return;
      }
      if (this.closed) {
        resolve({ status: null, error: 'emulator closed' });
        return;
      }
      const controller = new AbortController();
      this.inFlight.add(controller);
      const payload = Buffer.from(body, 'utf8');
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      let settled = false;
      const finish = (status: number | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(controller);
        resolve({ status, error });
      };
      const req = send(
        target,
        {
          method: 'POST',
          agent: false,
          signal: controller.signal,
          headers: { ...headers, 'Content-Length': String(payload.length), Accept: '*/*', Connection: 'close' },
        },
        (res: IncomingMessage) => {
          res.on('data', () => undefined);
          res.on('end', () => finish(res.statusCode ?? null, null));
          res.on('error', (error) => finish(res.statusCode ?? null, error.message));
        },
      );
      const timer = setTimeout(() => {
        finish(null, `cURL error 28: Operation timed out after ${this.options.timeoutMs} milliseconds`);
        req.destroy();
      }, this.options.timeoutMs);
      req.on('error', (error) => finish(null, `cURL error 7: ${error.message}`));
      req.end(payload);
    });
  }
}
