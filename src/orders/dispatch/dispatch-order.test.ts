/**
 * The dispatch use case (dispatchOrder) on the proven in-memory doubles: the ledger (test/doubles/memory-ledger.ts)
 * and the delivery service (test/doubles/fake-delivery.ts), each passing the contract suite its real adapter
 * passes. The order lock and the fallback-tariff memory are real Redis; the address resolver is the real
 * gazetteer. No web process, worker, queue or HTTP: one attempt is one call, as a job's attempt is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { normaliseShopifyOrder } from '../../adapters/shopify/normalise.js';
import { NeighbourhoodResolver } from '../../geo/resolver.js';
import { createLogger } from '../../log.js';
import { DeliveryError } from '../../domain/delivery.js';
import type { AliasStore } from '../../ledger/alias-store.js';
import { FAKE_COD_FEE_XOF, FAKE_FALLBACK_XOF, FakeDeliveryService } from '../../../test/doubles/fake-delivery.js';
import { MemoryOrderLedger } from '../../../test/doubles/memory-ledger.js';
import { shopifyOrderPayload } from '../../../test/support/factories.js';
import { startRedis, type TestRedis } from '../../../test/support/redis.js';
import { makeSecrets, registryDocument, secretEnv, SHOPIFY_SHOP_ID } from '../../../test/support/stack.js';
import { buildShopRegistry } from '../../shops/shops.js';
import { dispatchOrder, type PipelineDeps } from './dispatch-order.js';
import { TariffMemory } from './tariff-guard.js';

let redis: TestRedis;
let client: Redis;
let resolver: NeighbourhoodResolver;
beforeAll(async () => {
  redis = await startRedis();
  client = redis.client();
  resolver = NeighbourhoodResolver.load();
});
afterAll(async () => {
  await redis?.stop();
});

/** No aliases added at run time: the registry's only. */
const noAliases: AliasStore = {
  add: async () => undefined,
  remove: async () => false,
  list: async () => ({}),
  forShop: async (shop) => shop.policy.neighbourhoodAliases,
};

const secrets = makeSecrets();
const env = secretEnv(secrets);
const shops = buildShopRegistry(registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:9' }), (ref) =>
  'env' in ref ? env[ref.env] : undefined,
);

/** The fake's fallback tariff for a cash-on-delivery parcel (its collection fee included). */
const FALLBACK = FAKE_FALLBACK_XOF + FAKE_COD_FEE_XOF;

interface World {
  ledger: MemoryOrderLedger;
  delivery: FakeDeliveryService;
  deps: PipelineDeps;
}

let worlds = 0;
/** A ledger, a delivery service and the use case's dependencies over them; `tariffs` checks quotes against the fallback. */
function world(options: { unpriced?: string[]; tariffs?: boolean } = {}): World {
  worlds += 1;
  const ledger = new MemoryOrderLedger();
  const delivery = new FakeDeliveryService({ unpricedNeighbourhoods: options.unpriced ?? [] });
  const prefix = `{${redis.prefix}w${worlds}}`;
  const deps: PipelineDeps = {
    ledger,
    shops,
    deliveryFor: () => delivery,
    resolver,
    aliases: noAliases,
    redis: client,
    prefix,
    now: () => delivery.now(),
    logger: createLogger({ level: 'silent' }),
    ...(options.tariffs ? { tariffs: new TariffMemory(client, prefix) } : {}),
  };
  return { ledger, delivery, deps };
}

/** A cash-on-delivery Shopify order of 12 000 XOF to this address line in Dakar, recorded as a shop event would. */
async function recordOrder({ ledger, delivery }: World, address1: string, overrides: Record<string, unknown> = {}) {
  const payload = shopifyOrderPayload({
    total_price: '12000.00',
    current_total_price: '12000.00',
    total_outstanding: '12000.00',
    total_weight: 1500,
    shipping_address: { address1, city: 'Dakar', latitude: null, longitude: null },
    ...overrides,
  });
  const normalised = normaliseShopifyOrder(payload, { shopId: SHOPIFY_SHOP_ID, codGateways: [] });
  if (!normalised.ok) throw new Error(`the order does not normalise: ${normalised.hold.message}`);
  const order = normalised.order;
  const meta = {
    externalOrderId: order.externalOrderId,
    shopId: SHOPIFY_SHOP_ID,
    platform: 'shopify' as const,
    orderId: order.orderId,
    orderName: order.orderName,
  };
  await ledger.recordEvent({ meta, payload, order, now: delivery.now() });
  return {
    order,
    job: { shopId: SHOPIFY_SHOP_ID, externalOrderId: order.externalOrderId, generation: 0, trigger: 'test' },
  };
}

describe('dispatching one order (dispatchOrder)', () => {
  it('ships a first attempt with three calls, no lookup: a quote, one shipment carrying the goods owed, marked ready, recorded ready', async () => {
    const w = world();
    const { order, job } = await recordOrder(w, 'Villa 12, Sacré Coeur 3');
    const outcome = await dispatchOrder(job, w.deps);
    const [shipment] = w.delivery.shipmentsFor(order.externalOrderId);
    expect(outcome).toEqual({ kind: 'ready', shipmentId: shipment?.shipmentId, adopted: false });
    expect(w.delivery.shipmentsFor(order.externalOrderId)).toHaveLength(1);
    expect(shipment).toMatchObject({ step: 'ready', orderAmountXof: order.outstanding });
    // No createShipment was ever sent for it (the ledger says so): nothing to look up first.
    expect(w.delivery.calls).toEqual(['quote', 'createShipment', 'markReady']);
    const record = await w.ledger.get(order.externalOrderId);
    expect(record?.state).toBe('ready');
    expect(record?.shipment).toMatchObject({ shipmentId: shipment?.shipmentId, step: 'ready' });
    expect(record?.shipment?.markedReadyAt).toBeDefined();
    expect(record?.door).toBeDefined();
    expect(record?.hold).toBeUndefined();
  });

  it('holds an order whose quote the service refuses (a 60 kg parcel), with the service’s reason, and creates nothing', async () => {
    const w = world();
    const { order, job } = await recordOrder(w, 'Villa 12, Sacré Coeur 3', { total_weight: 60_000 });
    const outcome = await dispatchOrder(job, w.deps);
    expect(outcome).toMatchObject({ kind: 'held', reason: { code: 'dispatch_validation' } });
    const record = await w.ledger.get(order.externalOrderId);
    expect(record?.state).toBe('held');
    expect(record?.hold).toMatchObject({
      code: 'dispatch_validation',
      message: expect.stringMatching(/refused createQuote: .*weight/),
    });
    expect(w.delivery.shipmentsFor(order.externalOrderId)).toEqual([]);
    expect(w.delivery.calls).not.toContain('createShipment');
  });

  it('adopts the shipment a createShipment made when its answer was lost, and never makes a second one', async () => {
    const w = world();
    const { order, job } = await recordOrder(w, 'Villa 12, Sacré Coeur 3');
    w.delivery.loseNextAnswer('createShipment');
    const lost = await dispatchOrder(job, w.deps).then(
      () => undefined,
      (error: unknown) => error,
    );
    // The attempt fails as retryable: the job is tried again (here: the next call, as BullMQ's retry would).
    expect(lost).toBeInstanceOf(DeliveryError);
    expect((lost as DeliveryError).retryable).toBe(true);
    expect((await w.ledger.get(order.externalOrderId))?.state).not.toBe('ready');

    const retried = await dispatchOrder(job, w.deps);
    const shipments = w.delivery.shipmentsFor(order.externalOrderId);
    expect(shipments).toHaveLength(1);
    expect(retried).toEqual({ kind: 'ready', shipmentId: shipments[0]?.shipmentId, adopted: true });
    expect(shipments[0]?.step).toBe('ready');
    expect(w.delivery.calls.filter((call) => call === 'createShipment')).toHaveLength(1);
    expect((await w.ledger.get(order.externalOrderId))?.state).toBe('ready');
  });

  it('holds an order whose neighbourhood the service prices at the fallback tariff, naming the name, and creates nothing', async () => {
    // Nor the commune holding it, the order's other candidate name.
    const w = world({ unpriced: ['Mermoz', 'Mermoz-Sacré-Cœur'], tariffs: true });
    const { order, job } = await recordOrder(w, 'Villa 40, Mermoz');
    const outcome = await dispatchOrder(job, w.deps);
    expect(outcome).toMatchObject({ kind: 'held', reason: { code: 'neighbourhood_not_priced' } });
    const record = await w.ledger.get(order.externalOrderId);
    expect(record?.state).toBe('held');
    expect(record?.hold?.message).toMatch(
      new RegExp(
        `does not price 'Mermoz' at ${FALLBACK} XOF, 'Mermoz-Sacré-Cœur' at ${FALLBACK} XOF: each was quoted at the fallback tariff of ${FALLBACK} XOF \\(its price for the city name 'Dakar'\\)`,
      ),
    );
    expect(w.delivery.shipmentsFor(order.externalOrderId)).toEqual([]);
  });
});
