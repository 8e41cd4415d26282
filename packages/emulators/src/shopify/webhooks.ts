/**
 * Webhook deliveries as Shopify makes them: a POST of the raw JSON body signed with the app's client
 * secret (X-Shopify-Hmac-Sha256 = base64 HMAC-SHA256 of the exact bytes), with the topic, shop, API
 * version, a webhook id per delivery attempt, an event id shared by every delivery of one change (dedupe
 * on it) and the time the change happened. A delivery fails unless a 2xx arrives within the timeout.
 *
 * Like Shopify, deliveries of different events run concurrently and can arrive out of order.
 * Retries are off by default (Shopify retries 8 times over 4 hours); pass `retryDelaysMs` to get some.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../relais.js';
import type { ShopEvent, StoredWebhookSubscription } from './model.js';
import { graphqlTopic, restTopic } from './topics.js';

export interface WebhookDeliveryResult {
  url: string;
  topic: string;
  /** HTTP status of the receiver's answer; null when it never answered (refused, reset, timed out). */
  status: number | null;
  ok: boolean;
  webhookId: string;
  eventId: string;
  attempt: number;
  durationMs: number;
  error?: string;
  /** The first 2 KB of the receiver's answer, for debugging. */
  responseBody?: string;
}

export interface WebhookDeliveryRecord extends WebhookDeliveryResult {
  domain: string;
  triggeredAt: string;
  at: string;
  body: string;
}

export interface WebhookSettings {
  /** Shopify gives up on a delivery after 5 s. */
  timeoutMs: number;
  /** Delay before each retry of a failed delivery; empty means no retry. */
  retryDelaysMs: number[];
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { timeoutMs: 5000, retryDelaysMs: [] };

export interface WebhookShop {
  domain: string;
  clientSecret: string;
}

export interface SendInput {
  shop: WebhookShop;
  topic: string;
  body: string;
  url: string;
  eventId: string;
  triggeredAt: number;
  attempt: number;
  subscriptionName?: string | null;
  /** Sign with another secret (a wrong one, to test a receiver's refusal). */
  clientSecret?: string;
  /** Replace headers; null removes one (to test a receiver's refusal of incomplete deliveries). */
  headers?: Record<string, string | null>;
}

export function signWebhookBody(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

export class WebhookDispatcher {
  private readonly log: WebhookDeliveryRecord[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly aborter = new AbortController();

  constructor(
    private readonly apiVersion: string,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger | undefined,
  ) {}

  deliveries(): WebhookDeliveryRecord[] {
    return this.log.map((record) => ({ ...record }));
  }

  /** Resolves once every delivery started so far, retries included, has finished. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0 || this.timers.size > 0) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Fans each event out to the shop's subscriptions for its topic, in the background. */
  publish(shop: WebhookShop, subscriptions: Iterable<StoredWebhookSubscription>, events: ShopEvent[]): void {
    const list = [...subscriptions];
    for (const event of events) {
      const topic = graphqlTopic(event.topic);
      const eventId = randomUUID();
      for (const subscription of list.filter((s) => s.topic === topic)) {
        const body = JSON.stringify(selectFields(event.payload, subscription.includeFields));
        // In the background on purpose: settled() waits for it through track(), and it never rejects
        // (send() never throws).
        void this.track(
          this.deliverWithRetries({
            shop,
            topic: restTopic(event.topic),
            body,
            url: subscription.uri,
            eventId,
            triggeredAt: event.triggeredAt,
            attempt: 1,
            subscriptionName: subscription.name,
          }),
        );
      }
    }
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
    return promise;
  }

  private async deliverWithRetries(input: SendInput): Promise<void> {
    const result = await this.send(input);
    const delay = this.settings.retryDelaysMs[input.attempt - 1];
    if (result.ok || delay === undefined || this.aborter.signal.aborted) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      // Tracked for settled(); never rejects, since send() never throws.
      void this.track(this.deliverWithRetries({ ...input, attempt: input.attempt + 1 }));
    }, delay);
    this.timers.add(timer);
  }

  /** One POST, signed; never throws. */
  send(input: SendInput): Promise<WebhookDeliveryResult> {
    return this.track(this.post(input));
  }

  private async post(input: SendInput): Promise<WebhookDeliveryResult> {
    const webhookId = randomUUID();
    const secret = input.clientSecret ?? input.shop.clientSecret;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'Shopify-Captain-Hook',
      'X-Shopify-Topic': input.topic,
      'X-Shopify-Hmac-Sha256': signWebhookBody(secret, input.body),
      'X-Shopify-Shop-Domain': input.shop.domain,
      'X-Shopify-API-Version': this.apiVersion,
      'X-Shopify-Webhook-Id': webhookId,
      'X-Shopify-Event-Id': input.eventId,
      'X-Shopify-Triggered-At': new Date(input.triggeredAt).toISOString(),
    };
    if (input.subscriptionName) headers['X-Shopify-Name'] = input.subscriptionName;
    for (const [name, value] of Object.entries(input.headers ?? {})) {
      const existing = Object.keys(headers).find((key) => key.toLowerCase() === name.toLowerCase());
      if (existing) delete headers[existing];
      if (value !== null) headers[name] = value;
    }
    const started = performance.now();
    const outcome = await postJson(input.url, input.body, headers, this.settings.timeoutMs, this.aborter.signal);
    const result: WebhookDeliveryResult = {
      url: input.url,
      topic: input.topic,
      status: outcome.status,
      ok: outcome.status !== null && outcome.status >= 200 && outcome.status < 300,
      webhookId,
      eventId: input.eventId,
      attempt: input.attempt,
      durationMs: Math.round(performance.now() - started),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      ...(outcome.body === undefined ? {} : { responseBody: outcome.body }),
    };
    this.log.push({
      ...result,
      domain: input.shop.domain,
      triggeredAt: headers['X-Shopify-Triggered-At'] ?? '',
      at: new Date().toISOString(),
      body: input.body,
    });
    this.logger?.debug(
      {
        shop: input.shop.domain,
        topic: input.topic,
        url: input.url,
        status: result.status,
        eventId: input.eventId,
        attempt: input.attempt,
      },
      result.ok ? 'shopify emulator: webhook delivered' : 'shopify emulator: webhook delivery failed',
    );
    return result;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.aborter.abort();
    await Promise.allSettled([...this.inFlight]);
  }
}

/** `includeFields` keeps only the named top-level fields of the body, as Shopify does. */
function selectFields(payload: unknown, includeFields: string[]): unknown {
  if (includeFields.length === 0 || typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return payload;
  const source = payload as Record<string, unknown>;
  return Object.fromEntries(includeFields.filter((field) => field in source).map((field) => [field, source[field]]));
}

/**
 * POSTs with node:http on a fresh connection (no keep-alive pool), so a receiver closes cleanly in tests.
 * Never rejects: a refused connection, a reset or a timeout is `status: null` with the reason.
 */
export function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal = new AbortController().signal,
): Promise<{ status: number | null; error?: string; body?: string }> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ status: null, error: `invalid url ${url}` });
      return;
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = Buffer.from(body);
    let settled = false;
    const finish = (value: { status: number | null; error?: string; body?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const req = send(
      target,
      { method: 'POST', agent: false, headers: { ...headers, 'Content-Length': String(payload.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < 2048) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () =>
          finish({ status: res.statusCode ?? null, body: Buffer.concat(chunks).toString('utf8').slice(0, 2048) }),
        );
        res.on('error', (error) => finish({ status: res.statusCode ?? null, error: error.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => req.destroy(new Error('emulator closed'));
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error) => finish({ status: null, error: error.message }));
    req.end(payload);
  });
}
