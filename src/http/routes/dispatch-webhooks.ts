/**
 * Delivery webhooks from the dispatch service. The spec shows neither their shape nor how they are
 * signed, so each shop gets its own URL carrying an unguessable token
 * (POST /webhooks/dispatch/<shopId>/<token>), checked here in constant time. Everything else (the signature,
 * the body's JSON within the shop routes' depth limit, where the ids sit) is the shop's delivery service's to
 * read (DeliveryService.readWebhook, src/domain/delivery.ts); this route only answers and enqueues.
 *
 * The body has the shop routes' bounds: the size (MAX_BODY_BYTES, src/http/app.ts, for all of /webhooks), the
 * server's request timeouts (src/main/web.ts) and the JSON depth (the adapter parses as the shop routes do).
 */
import { timingSafeEqual } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import type { DeliveryService, DeliveryWebhookReading } from '../../domain/delivery.js';
import { stableJobId, type RelaisQueues } from '../../orders/queues.js';
import { webhookSampleOf, type FirstContactStore, type SampleRefusal } from '../../ledger/first-contact.js';
import type { Logger } from '../../log.js';
import { malformedBody } from '../../shops/platforms/common.js';
import { withinRedisDeadline } from '../redis-deadline.js';

export interface DispatchWebhookDeps {
  shops: ShopRegistry;
  queues: RelaisQueues;
  logger: Logger;
  /** The shop's delivery service, built once per shop as it is loaded (it holds the shop's wire profile). */
  deliveryFor(shop: ShopConfig): DeliveryService;
  /** Where the webhooks the shop's profile could not verify or read are kept, to learn the profile from them. */
  samples?: Pick<FirstContactStore, 'keepWebhookSample'>;
  now?: () => Date;
}

export function dispatchWebhookRoutes(deps: DispatchWebhookDeps): Router {
  const router = Router();
  router.post('/webhooks/dispatch/:shopId/:token', async (req: Request, res: Response) => {
    const shop = deps.shops.get(String(req.params.shopId));
    // Unknown shop and wrong token answer the same, so the URL space cannot be probed.
    if (!shop || !safeEqual(String(req.params.token), shop.dispatch.webhookToken.reveal())) {
      return void res.status(404).json({ error: 'not_found' });
    }
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const reading = deps.deliveryFor(shop).readWebhook({ rawBody, header: (name) => req.get(name) });
    const refusal = refusalOf(reading);
    if (refusal) await keepSample(deps, shop.id, refusal, rawBody, req);
    if (reading.kind === 'unsigned' || reading.kind === 'bad_signature') {
      deps.logger.warn(
        { shop: shop.id, header: reading.header, present: reading.kind === 'bad_signature' },
        reading.kind === 'unsigned'
          ? `delivery webhook without the ${reading.header} header rejected`
          : 'delivery webhook with a bad signature rejected',
      );
      return void res.status(401).json({ error: 'invalid_signature', header: reading.header });
    }
    if (reading.kind === 'malformed') return void res.status(400).json(malformedBody('JSON'));
    if (reading.kind === 'no_reference') {
      deps.logger.warn({ shop: shop.id }, 'delivery webhook without a shipment id or external order id');
      return void res.status(200).json({ status: 'ignored', reason: 'no shipment id or external order id found' });
    }
    const found = {
      ...(reading.shipmentId ? { shipmentId: reading.shipmentId } : {}),
      ...(reading.externalOrderId ? { externalOrderId: reading.externalOrderId } : {}),
    };
    try {
      await withinRedisDeadline(() =>
        deps.queues.deliveries.add(
          'sync',
          { shopId: shop.id, ...found, trigger: 'webhook' },
          // Identical deliveries collapse while the job is alive; the sync is idempotent anyway.
          { jobId: stableJobId('sync', shop.id, rawBody.toString('base64')) },
        ),
      );
      res.status(200).json({ status: 'enqueued' });
    } catch (error) {
      deps.logger.error({ shop: shop.id, err: (error as Error).message }, 'could not enqueue a delivery webhook');
      res.status(503).set('Retry-After', '30').json({ error: 'unavailable' });
    }
  });
  return router;
}

/** Why the sample of this webhook is worth keeping: the shop's profile could not verify it or read it. */
function refusalOf(reading: DeliveryWebhookReading): SampleRefusal | undefined {
  if (reading.kind === 'reference') return reading.readByProfile ? undefined : 'shape';
  return reading.kind === 'malformed' ? undefined : reading.kind;
}

/** Keeps the sample; a store that fails loses the sample, never the answer. */
async function keepSample(
  deps: DispatchWebhookDeps,
  shopId: string,
  refusal: SampleRefusal,
  body: Buffer,
  req: Request,
): Promise<void> {
  if (!deps.samples) return;
  // The names as sent (Node lower-cases req.headers): a learned signature header is then spelled as the service does.
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i]!] ??= req.rawHeaders[i + 1]!;
  const receivedAt = (deps.now ?? (() => new Date()))();
  const sample = webhookSampleOf({ shopId, receivedAt, refusal, body, headers });
  try {
    await deps.samples.keepWebhookSample(sample);
  } catch (error) {
    deps.logger.warn({ shop: shopId, err: (error as Error).message }, 'could not keep a delivery webhook sample');
  }
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
