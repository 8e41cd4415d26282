/**
 * The baselines Relais is measured against: the ceiling of its own stack, with nothing of Relais in it.
 *
 *   bareReceiverApp   Express + express.raw + Shopify's HMAC check + `queue.add` (the receiver's ceiling)
 *   bareDispatchJob   a BullMQ processor making the dispatch calls with Relais's own DispatchClient (same
 *                     HTTP client library, keep-alive agent and zod readers) and nothing else: no ledger,
 *                     no lock, no neighbourhood resolution, no timeline
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import express from 'express';
import type { DispatchClient } from '../../src/adapters/dispatch-api/client.js';
import { PaymentMode } from '../../src/adapters/dispatch-api/wire.js';

export interface BareOrderJob {
  topic: string;
  payload: unknown;
}

/** Same body bound as Relais (src/http/app.ts MAX_BODY_BYTES). */
const MAX_BODY_BYTES = 512 * 1024;

export function bareReceiverApp(options: { queue: Queue<BareOrderJob>; secret: string }): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use('/webhooks', express.raw({ type: () => true, limit: MAX_BODY_BYTES }));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.post('/webhooks/shopify', async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const given = Buffer.from(req.get('x-shopify-hmac-sha256') ?? '', 'base64');
    const expected = createHmac('sha256', options.secret).update(body).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return void res.status(401).json({ error: 'invalid_hmac' });
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      return void res.status(400).json({ error: 'malformed_body' });
    }
    try {
      await options.queue.add(req.get('x-shopify-topic') ?? 'unknown', {
        topic: req.get('x-shopify-topic') ?? 'unknown',
        payload,
      });
      res.status(200).json({ status: 'enqueued' });
    } catch {
      res.status(503).json({ error: 'unavailable' });
    }
  });
  return app;
}

/** Where the bare jobs ship from and to: the same places, coordinates and amount Relais sends for the bench's orders. */
const PICKUP = { city: 'Plateau', address: '12 avenue Léopold Sédar Senghor', coords: { lat: 14.6681, lng: -17.4322 } };
const DROPOFF = {
  city: 'Sacré-Cœur 3',
  address: 'Villa 12, Sacré Coeur 3, Dakar',
  coords: { lat: 14.7236, lng: -17.4694 },
};

/**
 * The bare pipeline: createQuote → createShipment → markReady. With `lookupFirst`, it also makes the
 * getShipmentByExternalOrder call Relais makes before creating anything, so the two make the same calls.
 */
export function bareDispatchJob(client: DispatchClient, options: { lookupFirst: boolean }) {
  return async (job: Job<BareOrderJob>): Promise<string> => {
    const order = job.data.payload as { id?: unknown; total_price?: unknown };
    const externalOrderId = `bare:${String(order.id)}`;
    if (options.lookupFirst) {
      const existing = await client.getShipmentByExternalOrder(externalOrderId);
      if (existing) return existing.shipmentId;
    }
    const quote = await client.createQuote({
      pickup: PICKUP,
      dropoff: DROPOFF,
      parcel: { weight_kg: 0.6 },
      payment_mode: PaymentMode.cashOnDelivery,
    });
    const shipment = await client.createShipment({
      quote_id: quote.quoteId,
      external_order_id: externalOrderId,
      orderAmountXof: Math.trunc(Number(order.total_price)),
    });
    await client.markReady(shipment.shipmentId, 'bare baseline');
    return shipment.shipmentId;
  };
}
