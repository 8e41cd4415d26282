/**
 * relais demo's sample orders (demo.ts): placed in both shops, one per scenario a merchant meets (cash on delivery,
 * prepaid, an address that cannot be resolved, a delivery that fails), then followed until each ends, printing each
 * change, and read back as the outcome table's rows.
 */
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WooEmulator } from '@relais/emulators/woocommerce';
import type { Logger } from '../log.js';
import type { OrderLedger } from '../ledger/order-ledger.js';
import type { RelaisQueues } from '../orders/queues.js';
import { address, describe, detail, writtenInShop, type DemoOutcome } from './demo-parts.js';

/** One sample order and the scenario it plays. */
export interface TrackedOrder {
  ext: string;
  shop: string;
  order: string;
  scenario: string;
}

export interface SampleShops {
  shopify: ShopifyEmulator;
  shopifyShop: string;
  shopifyDomain: string;
  woo: WooEmulator;
  wooShop: string;
  /** The external order ids whose courier cannot deliver. */
  failSet: Set<string>;
  logger: Logger;
}

/** The Shopify shop's four orders; returns the prepaid one's id, to be paid a moment later. */
function placeShopifyOrders(shops: SampleShops, place: (id: number, name: string, scenario: string) => void): number {
  const { shopify, shopifyDomain: domain } = shops;
  const cod = shopify.createOrder(domain, {
    shippingAddress: {
      ...address('Aminata Fall', 'Villa 12, Sacré Coeur 3', 'Dakar'),
      latitude: 14.7167,
      longitude: -17.4677,
    },
  });
  place(cod.id, String(cod.name), 'Shopify, cash on delivery');
  const prepaid = shopify.createOrder(domain, {
    gateway: 'shopify_payments',
    financialStatus: 'pending',
    shippingAddress: address('Moussa Sarr', 'Cité Keur Gorgui, immeuble 4', 'Dakar'),
  });
  place(prepaid.id, String(prepaid.name), 'Shopify, prepaid (paid a moment later)');
  const unresolved = shopify.createOrder(domain, {
    shippingAddress: { ...address('Ibrahima Ba', 'Rue 10', 'Dakar'), latitude: null, longitude: null },
  });
  place(unresolved.id, String(unresolved.name), 'Shopify, address without a neighbourhood');
  const failing = shopify.createOrder(domain, {
    shippingAddress: address('Fatou Ndiaye', 'Ouakam, cité Avion', 'Dakar'),
  });
  place(failing.id, String(failing.name), 'Shopify, cash on delivery, courier cannot deliver');
  shops.failSet.add(`${shops.shopifyShop}:${String(failing.id)}`);
  return prepaid.id;
}

/** The WooCommerce store's one order, paid in cash on delivery. */
async function placeWooOrder(shops: SampleShops): Promise<TrackedOrder> {
  const { woo, wooShop } = shops;
  const product = await woo.createProduct(wooShop, { name: 'Casque audio', price: '18000', weight: '0.6' });
  const wooOrder = await woo.createOrder(wooShop, {
    status: 'processing',
    payment_method: 'cod',
    payment_method_title: 'Paiement à la livraison',
    shipping: {
      first_name: 'Koffi',
      last_name: 'Kouassi',
      address_1: 'Cocody Angré, 7e tranche',
      city: 'Abidjan',
      country: 'CI',
      phone: '+2250701020304',
    },
    billing: {
      first_name: 'Koffi',
      last_name: 'Kouassi',
      phone: '+2250701020304',
      email: 'koffi@example.com',
      country: 'CI',
    },
    line_items: [{ product_id: product.id, quantity: 1 }],
  });
  const id = String(wooOrder.id);
  return { ext: `${wooShop}:${id}`, shop: wooShop, order: `#${id}`, scenario: 'WooCommerce, cash on delivery' };
}

/** Places the sample orders in both shops; the shops' webhooks bring them to Relais. */
export async function placeSampleOrders(shops: SampleShops): Promise<TrackedOrder[]> {
  const tracked: TrackedOrder[] = [];
  const prepaid = placeShopifyOrders(shops, (id, order, scenario) =>
    tracked.push({ ext: `${shops.shopifyShop}:${String(id)}`, shop: shops.shopifyShop, order, scenario }),
  );
  tracked.push(await placeWooOrder(shops));
  // The prepaid order is paid a moment later, as a customer paying online would.
  setTimeout(() => {
    try {
      shops.shopify.markPaid(shops.shopifyDomain, prepaid);
    } catch (error) {
      shops.logger.warn({ err: (error as Error).message }, 'demo: could not mark the prepaid order paid');
    }
  }, 1_500).unref();
  return tracked;
}

const FINAL_STATES = new Set(['delivered', 'returned', 'held', 'cancelled', 'delivery_failed']);

/** What the demo reads from the worker while it follows the orders. */
export interface FollowedBy {
  ledger: Pick<OrderLedger, 'get'>;
  queues: Pick<RelaisQueues, 'shopEvents' | 'deliveries'>;
}

/** No write into a shop is left to do: the shop events and delivery syncs are all done. */
async function writeBacksSettled(worker: FollowedBy): Promise<boolean> {
  const counts = await Promise.all(
    [worker.queues.shopEvents, worker.queues.deliveries].map((q) =>
      q.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
    ),
  );
  return counts.every((c) => Object.values(c).every((n) => n === 0));
}

/**
 * Prints each order's state as it changes until every order has ended (a failed delivery once its parcel is
 * returned, or a minute before the deadline) and the shops' write-backs are done, or 90 s have passed; then the
 * outcome table's rows.
 */
export async function followOrders(
  worker: FollowedBy,
  tracked: TrackedOrder[],
  print: (line: string) => void,
): Promise<DemoOutcome[]> {
  const last = new Map<string, string>();
  const deadline = Date.now() + 90_000;
  for (;;) {
    const records = await Promise.all(tracked.map((t) => worker.ledger.get(t.ext)));
    records.forEach((r, i) => {
      const t = tracked[i]!;
      const line = r ? describe(r) : 'waiting for the webhook';
      if (last.get(t.ext) !== line) {
        last.set(t.ext, line);
        print(`  ${t.order.padEnd(6)} ${t.scenario.padEnd(48)} ${line}`);
      }
    });
    const done = records.every(
      (r) =>
        r &&
        FINAL_STATES.has(r.state) &&
        (r.state !== 'delivery_failed' || r.delivery?.step === 'returned' || Date.now() > deadline - 60_000),
    );
    // The ledger says delivered as soon as the courier's webhook is applied; the shop's last write-backs
    // (the final fulfillment event, paid) may still be queued: the table waits for them too.
    if ((done && (await writeBacksSettled(worker))) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const records = await Promise.all(tracked.map((t) => worker.ledger.get(t.ext)));
  return tracked.map((t, i) => ({
    shop: t.shop,
    order: t.order,
    scenario: t.scenario,
    state: records[i]?.state ?? 'not received',
    detail: records[i] ? detail(records[i]) : '',
    inShop: records[i] ? writtenInShop(records[i]) : '',
    trackingUrl: records[i]?.shipment?.publicTrackingUrl,
  }));
}
