/**
 * Sending signed shop webhooks to a running Relais, and reading what became of the order.
 */
import { shopifyOrderPayload, shopifyWebhookHeaders, wooWebhookHeaders } from '../support/factories.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, WOO_SHOP_ID, waitFor, type TestRelais } from '../support/relais.js';
import type { OrderLedger, OrderRecord } from '../../src/ledger/order-ledger.js';
import type { DeliveryStep } from '../../src/domain/shipment-status.js';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';

/** A Shopify order of 12 000 XOF cash on delivery, 1.5 kg, to this address line in Dakar, without coordinates (zone-priced). */
export function dakarCashOrder(address1: string) {
  return shopifyOrderPayload({
    total_price: '12000.00',
    current_total_price: '12000.00',
    total_outstanding: '12000.00',
    total_weight: 1500,
    shipping_address: { address1, city: 'Dakar', latitude: null, longitude: null },
  });
}

export async function postShopify(
  relais: TestRelais,
  topic: string,
  payload: unknown,
  options: { eventId?: string; secret?: string; headers?: Record<string, string | undefined>; rawBody?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const body = options.rawBody ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...shopifyWebhookHeaders({
      topic,
      shopDomain: SHOPIFY_DOMAIN,
      body,
      secret: options.secret ?? relais.secrets.shopifyClientSecret,
      eventId: options.eventId,
    }),
  };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    for (const existing of Object.keys(headers))
      if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
    if (value !== undefined) headers[name] = value;
  }
  const response = await fetch(`${relais.web.url}/webhooks/shopify`, { method: 'POST', headers, body });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

export async function postWoo(
  relais: TestRelais,
  topic: string,
  payload: unknown,
  options: { secret?: string; shopId?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const body = JSON.stringify(payload);
  const headers = {
    'content-type': 'application/json',
    ...wooWebhookHeaders({ topic, body, secret: options.secret ?? relais.secrets.wooWebhookSecret }),
  };
  const response = await fetch(`${relais.web.url}/webhooks/woocommerce/${options.shopId ?? WOO_SHOP_ID}`, {
    method: 'POST',
    headers,
    body,
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

export function shopifyExternalId(orderId: number | string): string {
  return `${SHOPIFY_SHOP_ID}:${String(orderId)}`;
}
export function wooExternalId(orderId: number | string): string {
  return `${WOO_SHOP_ID}:${String(orderId)}`;
}

export async function waitForState(
  relais: TestRelais,
  externalOrderId: string,
  states: string[],
  timeoutMs = 10_000,
): Promise<OrderRecord> {
  return waitFor(
    async () => {
      const record = await relais.worker.runtime.ledger.get(externalOrderId);
      return record && states.includes(record.state) ? record : undefined;
    },
    { timeoutMs, what: `order ${externalOrderId} to reach ${states.join(' or ')}` },
  );
}

/** Waits until the work queues are empty (nothing waiting, active or delayed). The maintenance queue always holds its next scheduled poll. */
export async function waitForIdle(relais: TestRelais, timeoutMs = 10_000): Promise<void> {
  await waitFor(
    async () => {
      const { shopEvents, dispatch, deliveries } = relais.web.runtime.queues;
      const counts = await Promise.all(
        [shopEvents, dispatch, deliveries].map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
      );
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    },
    { timeoutMs, what: 'the queues to drain' },
  );
}

export function shipmentsFor(relais: TestRelais, externalOrderId: string) {
  return relais.emulator.shipments().filter((s) => s.external_order_id === externalOrderId);
}

/** Every job of the shop-events queue, whatever its state: what the web process has enqueued so far. */
export async function queuedShopEvents(relais: TestRelais): Promise<number> {
  const counts = await relais.web.runtime.queues.shopEvents.getJobCounts();
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/**
 * Moves the dispatch emulator's courier one stage at a time; after each, waits until Relais has seen it and
 * written it into the shop (`ledger`: the ledger of the worker doing the work).
 */
export async function courierThrough(
  relais: TestRelais,
  ledger: Pick<OrderLedger, 'get'>,
  externalOrderId: string,
  stages: DeliveryStep[],
): Promise<void> {
  for (const stage of stages) {
    await relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
    await waitFor(
      async () => {
        const progress = (await ledger.get(externalOrderId))?.delivery;
        return progress?.step === stage && (stage === 'assigned' || progress.written.steps[stage] !== undefined);
      },
      { what: `${externalOrderId} at ${stage} in the shop` },
    );
  }
}

/**
 * What an earlier dispatch attempt leaves in the ledger when the answer to its createShipment was lost (a crash,
 * a timeout, a connection dropped after the service committed): the order recorded, dispatching, with the note
 * that a createShipment was sent. The next attempt looks the shipment up before creating one.
 */
export async function createShipmentSentEarlier(relais: TestRelais, externalOrderId: string): Promise<void> {
  const ledger = relais.worker.runtime.ledger;
  const [shopId, orderId] = externalOrderId.split(':') as [string, string];
  const now = new Date();
  const meta = { externalOrderId, shopId, platform: 'shopify' as const, orderId, orderName: `#${orderId}` };
  await ledger.recordEvent({ meta, payload: {}, now });
  await ledger.apply(externalOrderId, { now, state: 'dispatching', shipmentRequested: true });
}
