/**
 * Shop webhooks: verify, parse, de-duplicate, enqueue, answer. Nothing else happens here (thin edge):
 * the worker does the work. Each platform's intake (StorePlatform.webhooks, src/shops/platforms/<platform>/) finds
 * the shop, verifies the signature and parses the body; this route mounts every platform's path, maps the
 * intake's receipt to a status (src/shops/platforms/verification-status.ts) and enqueues what it accepted.
 *
 * The answer tells the platform what to do next:
 *   200  durably enqueued (or a duplicate of something already enqueued, or a WooCommerce ping)
 *   400  missing headers, a body that is not JSON, or JSON nested deeper than MAX_JSON_DEPTH: a retry would not help
 *   401  bad signature (Shopify requires exactly 401), or a signed body that belongs to another shop
 *   404  unknown shop
 *   413  body over the bound
 *   503  Redis unreachable: never 200 for something not stored; the platform retries later
 * Shopify retries for 4 hours; de-duplication markers live at least 48 hours, longer than that window and
 * longer than BullMQ keeps completed jobs (src/http/seen-events.ts).
 */
import { Router, type IRouter, type Request, type Response } from 'express';
import type { ShopRegistry } from '../../shops/shops.js';
import type { RelaisQueues, ShopEventJob } from '../../orders/queues.js';
import { stableJobId } from '../../orders/queues.js';
import type { Logger } from '../../log.js';
import { storePlatforms, type StorePlatform } from '../../shops/platforms/index.js';
import type { WebhookDelivery } from '../../shops/platforms/platform.js';
import type { RedisClient } from '../../redis.js';
import { VERIFICATION_STATUS } from '../../shops/platforms/verification-status.js';
import { SeenEvents } from '../seen-events.js';
import { withinRedisDeadline } from '../redis-deadline.js';

export interface WebhookDeps {
  shops: ShopRegistry;
  queues: RelaisQueues;
  /** The producer connection (enableOfflineQueue: false, so a dead Redis fails fast). */
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  now(): Date;
  /** Told of each event durably enqueued (not duplicates): the web process counts received orders with it (metrics). */
  onEnqueued?(job: ShopEventJob): void;
}

/** Mounts every platform's webhook path on `router` (a new Router unless given; the app itself may be). */
export function webhookRoutes(deps: WebhookDeps, router: IRouter = Router()): IRouter {
  const seen = new SeenEvents(deps.redis, deps.prefix);
  for (const platform of storePlatforms()) {
    router.post(platform.webhooks.path, (req: Request, res: Response) => receive(platform, deps, seen, req, res));
  }
  return router;
}

async function receive(
  platform: StorePlatform,
  deps: WebhookDeps,
  seen: SeenEvents,
  req: Request,
  res: Response,
): Promise<void> {
  const delivery: WebhookDelivery = { rawBody: rawBodyOf(req), headers: req.headers };
  if (typeof req.params.shopId === 'string') delivery.shopId = req.params.shopId;
  const receipt = platform.webhooks.receive(delivery, deps.shops);
  switch (receipt.kind) {
    case 'rejected':
      if (receipt.warn) deps.logger.warn(receipt.warn.fields, receipt.warn.msg);
      return void res.status(VERIFICATION_STATUS[receipt.reason]).json(receipt.body);
    case 'answer':
      return void res.status(200).json(receipt.body);
    case 'event': {
      const { shop, topic, payload, eventKey } = receipt;
      return enqueue(
        deps,
        seen,
        res,
        { shopId: shop.id, platform: shop.platform, topic, receivedAt: deps.now().toISOString(), payload },
        eventKey,
      );
    }
  }
}

async function enqueue(
  deps: WebhookDeps,
  seen: SeenEvents,
  res: Response,
  job: ShopEventJob,
  eventKey: string,
): Promise<void> {
  try {
    const event = seen.event(job.shopId, eventKey);
    const outcome = await withinRedisDeadline(async () => {
      if (await event.has()) return 'duplicate' as const;
      // Same job id for the same event: concurrent duplicates collapse into one job.
      await deps.queues.shopEvents.add(job.topic, job, { jobId: stableJobId('evt', job.shopId, eventKey) });
      // The event is stored: answer without waiting for the marker. Were it lost, a repeat of the event
      // would still collapse into the same job (same job id) while BullMQ keeps it.
      event.mark().catch((error: unknown) => {
        deps.logger.warn(
          { shop: job.shopId, topic: job.topic, err: (error as Error).message },
          'could not store the de-duplication marker',
        );
      });
      return 'enqueued' as const;
    });
    if (outcome === 'enqueued') deps.onEnqueued?.(job);
    answer(res, ACK[outcome]);
  } catch (error) {
    deps.logger.error(
      { shop: job.shopId, topic: job.topic, err: (error as Error).message },
      'could not enqueue a webhook: answering 503',
    );
    res
      .status(503)
      .set('Retry-After', '30')
      .json({ error: 'unavailable', message: 'Relais cannot store the event right now; retry later' });
  }
}

/**
 * The two answers of a stored event, serialised once. Written without res.json(), whose ETag (a hash of the body) and
 * freshness check are for cacheable GETs, not for the answer to a platform's POST: this is every accepted webhook.
 */
const ACK = {
  enqueued: Buffer.from(JSON.stringify({ status: 'enqueued' })),
  duplicate: Buffer.from(JSON.stringify({ status: 'duplicate' })),
} as const;

function answer(res: Response, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

function rawBodyOf(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}
