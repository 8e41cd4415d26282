/**
 * Shop webhooks: verify, parse, de-duplicate, enqueue, answer. Nothing else happens here (thin edge):
 * the worker does the work.
 *
 * The answer tells the platform what to do next:
 *   200  durably enqueued (or a duplicate of something already enqueued, or a WooCommerce ping)
 *   400  missing headers, a body that is not JSON, or JSON nested deeper than MAX_JSON_DEPTH: a retry would not help
 *   401  bad signature (Shopify requires exactly 401), or a signed body that belongs to another shop
 *   404  unknown shop
 *   413  body over the bound
 *   503  Redis unreachable: never 200 for something not stored; the platform retries later
 * Shopify retries for 4 hours; de-duplication keys live 48 hours, longer than that window and longer
 * than BullMQ keeps completed jobs.
 */
import { Router, type Request, type Response } from 'express';
import type { ShopRegistry } from '../../config/shops.js';
import type { RelaisQueues, ShopEventJob } from '../../jobs/queues.js';
import { stableJobId } from '../../jobs/queues.js';
import type { Logger } from '../../log.js';
import { ownerOfShopifyPayload } from '../../stores/shopify/owner.js';
import { verifyShopifyWebhook } from '../../stores/shopify/verify.js';
import { verifyWooWebhook } from '../../stores/woocommerce/verify.js';
import type { Redis } from 'ioredis';
import { VERIFICATION_STATUS } from '../verification.js';

export const SHOPIFY_ORDER_TOPICS = new Set(['orders/create', 'orders/paid', 'orders/updated', 'orders/cancelled']);
export const SHOPIFY_COMPLIANCE_TOPICS = new Set(['customers/data_request', 'customers/redact', 'shop/redact']);
const WOO_ORDER_TOPICS = new Set(['order.created', 'order.updated', 'order.deleted', 'order.restored']);

/** How long a delivery is remembered for de-duplication: well past Shopify's 4-hour retry window. */
export const DEDUPE_TTL_SECONDS = 48 * 3600;
/**
 * Deepest JSON accepted. A real order is about 6 levels deep; a body of thousands of nested arrays parses,
 * but then overflows the stack when the job is serialised, which answered 503 (retry) for input that can
 * never succeed.
 */
export const MAX_JSON_DEPTH = 64;
const MALFORMED_BODY = { error: 'malformed_body', message: `the body is not JSON, or is nested deeper than ${String(MAX_JSON_DEPTH)} levels` };
/** Past this, Redis is treated as unreachable and the platform is told to retry. */
const ENQUEUE_TIMEOUT_MS = 2_000;

export interface WebhookDeps {
  shops: ShopRegistry;
  queues: RelaisQueues;
  /** The producer connection (enableOfflineQueue: false, so a dead Redis fails fast). */
  redis: Redis;
  prefix: string;
  logger: Logger;
  now(): Date;
  /** Told of each event durably enqueued (not duplicates): the web process counts received orders with it (metrics). */
  onEnqueued?(job: ShopEventJob): void;
}

class RedisUnavailable extends Error {}

export function webhookRoutes(deps: WebhookDeps): Router {
  const router = Router();

  router.post('/webhooks/shopify', async (req: Request, res: Response) => {
    const domain = header(req, 'x-shopify-shop-domain');
    if (!domain) return void res.status(VERIFICATION_STATUS.missing_headers).json({ error: 'missing_headers', missing: ['X-Shopify-Shop-Domain'] });
    const shop = deps.shops.byShopifyDomain(domain);
    if (!shop) return void res.status(VERIFICATION_STATUS.unknown_shop).json({ error: 'unknown_shop', message: `no shop ${domain} in the Relais registry` });
    const rawBody = rawBodyOf(req);
    const verification = verifyShopifyWebhook({ rawBody, headers: req.headers, secret: shop.shopify.webhookSecret.reveal() });
    if (!verification.ok) {
      deps.logger.warn({ shop: shop.id, reason: verification.reason }, 'rejected a Shopify webhook');
      return void res.status(VERIFICATION_STATUS[verification.reason]).json({ error: verification.reason, missing: verification.missing });
    }
    const { topic } = verification;
    if (!SHOPIFY_ORDER_TOPICS.has(topic) && !SHOPIFY_COMPLIANCE_TOPICS.has(topic)) {
      return void res.status(200).json({ status: 'ignored', topic });
    }
    const payload = parseJson(rawBody);
    if (payload === undefined) return void res.status(VERIFICATION_STATUS.malformed_body).json(MALFORMED_BODY);
    // The shop header is not signed and shops of one app share its secret: the signed body must not name
    // another shop (the worker confirms what the body cannot tell through the shop's Admin API).
    const owner = ownerOfShopifyPayload(shop.shopify.domain, payload);
    if (owner.kind === 'other_shop') {
      deps.logger.warn({ shop: shop.id, topic, found: owner.found }, 'rejected a Shopify webhook: its body belongs to another shop');
      return void res.status(VERIFICATION_STATUS.shop_mismatch).json({ error: 'shop_mismatch', message: `the body belongs to ${owner.found}, not ${shop.shopify.domain}` });
    }
    const eventKey = `${topic}|${verification.eventId ?? verification.webhookId}`;
    await enqueue(deps, res, { shopId: shop.id, platform: 'shopify', topic, receivedAt: deps.now().toISOString(), payload }, eventKey);
  });

  router.post('/webhooks/woocommerce/:shopId', async (req: Request, res: Response) => {
    const shop = deps.shops.get(String(req.params.shopId));
    if (!shop || shop.platform !== 'woocommerce') {
      return void res.status(VERIFICATION_STATUS.unknown_shop).json({ error: 'unknown_shop', message: `no WooCommerce shop "${String(req.params.shopId)}" in the Relais registry` });
    }
    const rawBody = rawBodyOf(req);
    const verification = verifyWooWebhook({
      rawBody, headers: req.headers, secret: shop.woocommerce.webhookSecret.reveal(), contentType: header(req, 'content-type'),
    });
    if (!verification.ok) {
      deps.logger.warn({ shop: shop.id, reason: verification.reason }, 'rejected a WooCommerce webhook');
      return void res.status(VERIFICATION_STATUS[verification.reason]).json({ error: verification.reason, missing: verification.missing });
    }
    // WooCommerce pings a new webhook once, unsigned: answer 200 or it will not activate it.
    if (verification.kind === 'ping') return void res.status(200).json({ status: 'pong', webhookId: verification.webhookId });
    if (!WOO_ORDER_TOPICS.has(verification.topic)) return void res.status(200).json({ status: 'ignored', topic: verification.topic });
    const payload = parseJson(rawBody);
    if (payload === undefined || typeof payload !== 'object' || payload === null) {
      return void res.status(VERIFICATION_STATUS.malformed_body).json({ ...MALFORMED_BODY, message: `the body is not a JSON object, or is nested deeper than ${String(MAX_JSON_DEPTH)} levels` });
    }
    // WooCommerce's delivery id changes on every delivery; the order's modification date does not.
    // date_modified has one-second precision: two saves in the same second (Relais's own write-back, then
    // the merchant cancelling) differ by their status, so it is part of the key.
    const p = payload as { id?: unknown; date_modified_gmt?: unknown; date_modified?: unknown; status?: unknown };
    const eventKey = `${verification.topic}|${String(p.id)}|${String(p.date_modified_gmt ?? p.date_modified ?? '')}|${String(p.status ?? '')}`;
    await enqueue(deps, res, { shopId: shop.id, platform: 'woocommerce', topic: verification.topic, receivedAt: deps.now().toISOString(), payload }, eventKey);
  });

  return router;
}

async function enqueue(deps: WebhookDeps, res: Response, job: ShopEventJob, eventKey: string): Promise<void> {
  const seenKey = `${deps.prefix}:seen:${job.shopId}:${eventKey}`;
  try {
    const outcome = await withTimeout(async () => {
      if (await deps.redis.exists(seenKey)) return 'duplicate' as const;
      // Same job id for the same event: concurrent duplicates collapse into one job.
      await deps.queues.shopEvents.add(job.topic, job, { jobId: stableJobId('evt', job.shopId, eventKey) });
      // The event is stored: answer without waiting for the marker. Were it lost, a repeat of the event
      // would still collapse into the same job (same job id) while BullMQ keeps it.
      deps.redis.set(seenKey, '1', 'EX', DEDUPE_TTL_SECONDS).catch((error: unknown) => {
        deps.logger.warn({ shop: job.shopId, topic: job.topic, err: (error as Error).message }, 'could not store the de-duplication marker');
      });
      return 'enqueued' as const;
    });
    if (outcome === 'enqueued') deps.onEnqueued?.(job);
    res.status(200).json({ status: outcome });
  } catch (error) {
    deps.logger.error({ shop: job.shopId, topic: job.topic, err: (error as Error).message }, 'could not enqueue a webhook: answering 503');
    res.status(503).set('Retry-After', '30').json({ error: 'unavailable', message: 'Relais cannot store the event right now; retry later' });
  }
}

async function withTimeout<T>(work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailable('Redis did not answer in time')), ENQUEUE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function rawBodyOf(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** The body's JSON, or undefined when it is not JSON or nests deeper than MAX_JSON_DEPTH. */
export function parseJson(raw: Buffer): unknown {
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether brackets outside strings nest deeper than `max` (checked on the bytes, before parsing). */
export function jsonDepthExceeds(raw: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}
