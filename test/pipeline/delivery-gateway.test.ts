/**
 * The gateway every use case calls the delivery service through (src/orders/delivery-gateway.ts), over the real
 * dispatch emulator, the ledger in PostgreSQL and the order lock and pacing in Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload } from '../support/factories.js';
import { SHOPIFY_SHOP_ID, WOO_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';
import { postShopify, shipmentsFor, shopifyExternalId, waitForIdle, waitForState } from './helpers.js';
import { DeliveryGateway, type DeliveryCallReport } from '../../src/orders/delivery-gateway.js';
import { OrderLockLostError, withOrderLock } from '../../src/orders/order-lock.js';
import { ShopRateLimiter } from '../../src/orders/rate-limit.js';
import { Secret } from '../../src/shops/secret.js';
import { deliveryServiceForShop } from '../../src/adapters/dispatch-api/index.js';
import type { ShopConfig } from '../../src/shops/shops.js';
import { DeliveryError } from '../../src/domain/delivery.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais({ quoteTtlMs: 5 * 60_000 });
});
afterAll(async () => {
  await relais?.stop();
});

const shop = (): ShopConfig => relais.shops.get(SHOPIFY_SHOP_ID)!;

function gateway(extra: { rateLimiter?: ShopRateLimiter } = {}) {
  const calls: DeliveryCallReport[] = [];
  const runtime = relais.worker.runtime;
  const gateway = new DeliveryGateway({
    deliveryFor: (s) => runtime.deliveryFor(s),
    ledger: runtime.ledger,
    now: () => new Date(),
    logger: relais.logger,
    onCall: (call) => calls.push(call),
    ...extra,
  });
  return { gateway, calls };
}

/** An order shipped and marked ready by the worker: its external id and shipment id. */
async function readyOrder(): Promise<{ extId: string; shipmentId: string }> {
  const payload = shopifyOrderPayload();
  const extId = shopifyExternalId(payload.id);
  await postShopify(relais, 'orders/create', payload);
  await waitForState(relais, extId, ['ready'], 20_000);
  await waitForIdle(relais);
  return { extId, shipmentId: shipmentsFor(relais, extId)[0]!.shipment_id };
}

const timeline = (extId: string) => relais.worker.runtime.ledger.timeline(extId);

describe('the delivery gateway', () => {
  it("cancels a shipment under the order lock, notes the call on the order's timeline with its time, and reports it to metrics", async () => {
    const { extId, shipmentId } = await readyOrder();
    const { gateway: g, calls } = gateway();
    const cancelled = await withOrderLock(relais.redis.client(), relais.prefix, extId, (lock) =>
      g.forShop(shop()).underLock(extId, lock).cancel(shipmentId, { reason: 'test', by: 'the gateway test' }),
    );
    expect(cancelled.step).toBe('cancelled');
    const line = (await timeline(extId)).findLast((e) => e.operation === 'cancelShipment');
    expect(line).toMatchObject({ system: 'dispatch', outcome: 'ok' });
    expect(line?.ms).toBeGreaterThanOrEqual(0);
    expect(calls).toEqual([{ operation: 'cancelShipment', ms: expect.any(Number) }]);
  });

  it("notes a refusal with the service's own label and reports it as an error, then throws it", async () => {
    const { extId } = await readyOrder();
    const { gateway: g, calls } = gateway();
    const refused = await withOrderLock(relais.redis.client(), relais.prefix, extId, (lock) =>
      g
        .forShop(shop())
        .underLock(extId, lock)
        .markReady('shp_no_such_shipment', 'the gateway test')
        .catch((error: unknown) => error),
    );
    expect(refused).toBeInstanceOf(DeliveryError);
    expect(refused).toMatchObject({ retryable: false });
    const line = (await timeline(extId)).findLast((e) => e.operation === 'markReady');
    expect(line?.outcome).not.toBe('ok');
    expect(line?.outcome).toBe((refused as { label: string }).label);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ operation: 'markReady', error: refused });
  });

  it('makes no call that changes something once the order lock is lost: the service never sees it, the timeline says why', async () => {
    const { extId, shipmentId } = await readyOrder();
    const { gateway: g, calls } = gateway();
    const redis = relais.redis.client();
    const before = relais.emulator.calls().length;
    const outcome = await withOrderLock(redis, relais.prefix, extId, async (lock) => {
      // Another worker takes the order over (its own token on the lock's key).
      await redis.set(`${relais.prefix}:lock:order:${extId}`, 'another-worker', 'PX', 60_000);
      return g
        .forShop(shop())
        .underLock(extId, lock)
        .cancel(shipmentId, { reason: 'test', by: 'the gateway test' })
        .catch((error: unknown) => error);
    });
    await redis.del(`${relais.prefix}:lock:order:${extId}`);
    expect(outcome).toBeInstanceOf(OrderLockLostError);
    expect(
      relais.emulator
        .calls()
        .slice(before)
        .filter((c) => c.operation === 'cancelShipment'),
    ).toEqual([]);
    expect((await timeline(extId)).findLast((e) => e.operation === 'cancelShipment')).toMatchObject({
      system: 'relais',
      outcome: 'lock_lost',
    });
    expect(calls).toEqual([]);
  });

  it('paces the shop: six reads at two calls a second span more than a second, while calls paid for up front do not wait again', async () => {
    const { extId } = await readyOrder();
    const slow: ShopConfig = { ...shop(), policy: { ...shop().policy, dispatchCallsPerSecond: 2 } };
    const { gateway: g } = gateway({ rateLimiter: new ShopRateLimiter(relais.redis.client(), `${relais.prefix}:g`) });
    const paced = g.forShop(slow);
    const reads = paced.forOrder(extId, { timeline: { note: () => undefined } });
    const started = Date.now();
    for (let i = 0; i < 6; i += 1) await reads.shipmentForOrder();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);

    // Two turns taken at once, then two calls: neither waits for the next window.
    const prepaid = await paced.prepay(2);
    expect(prepaid).toBe(2);
    const session = paced.forOrder(extId, { prepaid, timeline: { note: () => undefined } });
    const afterPrepay = Date.now();
    await session.shipmentForOrder();
    await session.shipmentForOrder();
    expect(Date.now() - afterPrepay).toBeLessThan(500);
  });

  it('names the organisation from the port: shops sharing a key share it, another key is another, and no key shows in it', () => {
    const { gateway: g } = gateway();
    const dakar = g.forShop(shop());
    expect(dakar.sameOrganisation(g.forShop(relais.shops.get(WOO_SHOP_ID)!))).toBe(true);

    const elsewhere: ShopConfig = {
      ...shop(),
      id: 'elsewhere',
      dispatch: { ...shop().dispatch, apiKey: new Secret('pk_live_another_organisation', 'test') },
    };
    const other = new DeliveryGateway({
      deliveryFor: (s) => deliveryServiceForShop(s, relais.logger),
      ledger: relais.worker.runtime.ledger,
      now: () => new Date(),
      logger: relais.logger,
    }).forShop(elsewhere);
    expect(dakar.sameOrganisation(other)).toBe(false);
    expect(other.organisation).not.toContain('pk_live_another_organisation');
    expect(dakar.organisation).not.toContain(shop().dispatch.apiKey.reveal());
  });
});
