/**
 * Delivery webhooks from the dispatch service. The spec shows neither their shape nor how they are
 * signed, so each shop gets its own URL carrying an unguessable token
 * (POST /webhooks/dispatch/<shopId>/<token>), checked in constant time; when a signing secret is
 * configured, the signature must match too, in the header, prefix and encoding the shop's wire profile names.
 *
 * The body has the shop routes' bounds: the size (MAX_BODY_BYTES, src/http/app.ts, for all of /webhooks), the
 * server's request timeouts (src/main/web.ts) and the JSON depth (parseJson, src/stores/common.ts).
 *
 * The payload is only a hint: any JSON shape is accepted, the shipment id (or the external order id) is
 * read where the profile says it sits, else looked for wherever it sits, and the worker re-reads the
 * shipment before changing anything. So a forged or replayed webhook can at worst cause one extra read.
 */
import { timingSafeEqual } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { ShopRegistry } from '../../config/shops.js';
import { wireProfileOf } from '../../dispatch/for-shop.js';
import { ID_PREFIX } from '../../dispatch/wire.js';
import { stableJobId, type RelaisQueues } from '../../jobs/queues.js';
import type { Logger } from '../../log.js';
import { malformedBody, parseJson } from '../../stores/common.js';
import { withinRedisDeadline } from '../redis-deadline.js';

export interface DispatchWebhookDeps {
  shops: ShopRegistry;
  queues: RelaisQueues;
  logger: Logger;
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
    const profile = wireProfileOf(shop);
    if (shop.dispatch.webhookSigningSecret) {
      const given = req.get(profile.signatureHeader);
      if (!profile.verify(rawBody, given, shop.dispatch.webhookSigningSecret.reveal())) {
        deps.logger.warn(
          { shop: shop.id, header: profile.signatureHeader, present: given !== undefined },
          given === undefined
            ? `delivery webhook without the ${profile.signatureHeader} header rejected`
            : 'delivery webhook with a bad signature rejected',
        );
        return void res.status(401).json({ error: 'invalid_signature', header: profile.signatureHeader });
      }
    }
    // The shop routes' parser: JSON nested past MAX_JSON_DEPTH is refused before it is queued.
    const payload = parseJson(rawBody);
    if (payload === undefined) return void res.status(400).json(malformedBody('JSON'));
    // Where the profile says the ids sit first; then anywhere (the service may send more than one shape).
    const { shipmentId, externalOrderId } = profile.webhookReference(payload);
    const found = {
      ...findShipmentReference(payload),
      ...(shipmentId ? { shipmentId } : {}),
      ...(externalOrderId ? { externalOrderId } : {}),
    };
    if (!found.shipmentId && !found.externalOrderId) {
      deps.logger.warn({ shop: shop.id }, 'delivery webhook without a shipment id or external order id');
      return void res.status(200).json({ status: 'ignored', reason: 'no shipment id or external order id found' });
    }
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

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const SHIPMENT_KEYS = ['shipment_id', 'shipmentId', 'shipment', 'id'];
const EXTERNAL_KEYS = ['external_order_id', 'externalOrderId'];

/** Looks through any JSON shape (bounded depth) for a shp_ id and an external order id. */
export function findShipmentReference(payload: unknown, depth = 0): { shipmentId?: string; externalOrderId?: string } {
  if (depth > 5 || payload === null || typeof payload !== 'object') return {};
  const found: { shipmentId?: string; externalOrderId?: string } = {};
  const entries = Array.isArray(payload) ? payload.map((v, i) => [String(i), v] as const) : Object.entries(payload);
  for (const [key, value] of entries) {
    if (typeof value === 'string') {
      if (
        !found.shipmentId &&
        value.startsWith(ID_PREFIX.shipment) &&
        (SHIPMENT_KEYS.includes(key) || /^shp_[A-Za-z0-9_-]+$/.test(value))
      ) {
        found.shipmentId = value;
      }
      if (!found.externalOrderId && EXTERNAL_KEYS.includes(key)) found.externalOrderId = value;
    }
  }
  for (const [, value] of entries) {
    if (found.shipmentId && found.externalOrderId) break;
    if (value && typeof value === 'object') {
      const nested = findShipmentReference(value, depth + 1);
      found.shipmentId ??= nested.shipmentId;
      found.externalOrderId ??= nested.externalOrderId;
    }
  }
  return found;
}
