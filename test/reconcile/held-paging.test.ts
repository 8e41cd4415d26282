/**
 * Reconciliation reports every held order, however many are held: the held orders are read page by page, never
 * only the first few hundred. Real PostgreSQL, Redis, the Shopify emulator and the worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, reconcileDepsFor } from '../../src/orders/reconcile/index.js';
import { postShopify, shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import { DAKAR_ADDRESS_WITHOUT_NEIGHBOURHOOD } from '../support/factories.js';
import { SHOPIFY_DOMAIN, startTestRelais, type TestRelais } from '../support/relais.js';

let relais: TestRelais;

beforeAll(async () => {
  relais = await startTestRelais({ pollIntervalMs: 3_600_000 });
}, 60_000);

afterAll(async () => {
  await relais?.stop();
});

/** `count` orders of a shop Relais no longer serves, held for a long time (they are read with the rest). */
async function holdOldOrders(count: number): Promise<void> {
  const ledger = relais.worker.runtime.ledger;
  const longAgo = new Date(Date.now() - 30 * 86_400_000);
  for (let start = 0; start < count; start += 25) {
    const batch = Array.from({ length: Math.min(25, count - start) }, (_, i) => start + i + 1);
    await Promise.all(
      batch.map(async (n) => {
        const extId = `closed-shop:${n}`;
        await ledger.recordEvent({
          meta: {
            externalOrderId: extId,
            shopId: 'closed-shop',
            platform: 'shopify',
            orderId: String(n),
            orderName: `#${n}`,
          },
          payload: { id: n },
          now: longAgo,
          timeline: {
            at: longAgo.toISOString(),
            system: 'shop',
            operation: 'webhook orders/create',
            outcome: 'malformed_order',
          },
        });
        await ledger.hold(extId, { code: 'malformed_order', message: `Order #${n} cannot be read.` }, longAgo);
      }),
    );
  }
}

describe('held orders in reconciliation', () => {
  it('with 600 orders held longer than it: a held order is still reported, with its reason', async () => {
    await holdOldOrders(600);
    const shopify = relais.shopify!;
    const order = shopify.createOrder(
      SHOPIFY_DOMAIN,
      {
        // Placed and last changed 20 days ago: a window of the last day does not bring it up, only the held read can.
        createdAt: new Date(Date.now() - 20 * 86_400_000).toISOString(),
        updatedAt: new Date(Date.now() - 20 * 86_400_000).toISOString(),
        shippingAddress: DAKAR_ADDRESS_WITHOUT_NEIGHBOURHOOD,
      },
      { webhooks: false },
    );
    const extId = shopifyExternalId(order.id);
    expect((await postShopify(relais, 'orders/create', shopify.order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
    expect((await waitForState(relais, extId, ['held'])).hold?.code).toBe('neighbourhood_not_found');

    const report = await reconcile(reconcileDepsFor(relais.worker.runtime), {
      since: new Date(Date.now() - 86_400_000),
      repair: false,
    });
    const findings = report.shops.flatMap((s) => s.findings).filter((f) => f.externalOrderId === extId);
    expect(findings).toEqual([
      expect.objectContaining({ kind: 'held', detail: expect.stringContaining('neighbourhood_not_found') }),
    ]);
  });
});
