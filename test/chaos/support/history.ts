/**
 * The history of a chaos scenario: everything that crossed a boundary of Relais, as the outside world saw it.
 *
 *   orders      what the test placed in the shops (and so what Relais owes a shipment for)
 *   webhooks    every webhook the test sent to Relais, each attempt with the answer it got (0: no answer)
 *   dispatch    every call the dispatch emulator received, its shipments, the delivery webhooks it sent
 *   shopify     every Admin API call Relais made and the final order pages (what the merchant sees)
 *   woo         every REST call Relais made and the final orders
 *   ledger      the ledger's final record of every order, with its timeline
 *   samples     the ledger state/step and the shop status of every order, sampled while the scenario ran
 *               (the only way to see a status that moved backwards and then forwards again)
 *
 * The recorder only collects; test/chaos/support/checker.ts judges.
 */
import type {
  DispatchEmulator,
  EmulatedShipmentSnapshot,
  RecordedCall,
  WebhookDelivery,
} from '@relais/emulators/dispatch';
import type {
  GraphqlCallRecord,
  OrderSnapshot as ShopifyOrderSnapshot,
  ShopifyEmulator,
} from '@relais/emulators/shopify';
import type { ApiCall, OrderSnapshot as WooOrderSnapshot, WooEmulator } from '@relais/emulators/woocommerce';
import type { HoldReason } from '../../../src/domain/order.js';
import type { DeliveryProgress, OrderLedger, TimelineEntry } from '../../../src/ledger/order-ledger.js';

export type ShopPlatform = 'shopify' | 'woocommerce';

export interface PlacedOrder {
  externalOrderId: string;
  platform: ShopPlatform;
  /** The platform's numeric order id (Shopify order id, WooCommerce post id). */
  shopOrderId: number;
  /** Cash on delivery: Relais marks it paid once delivered, never when the delivery failed. */
  cashOnDelivery: boolean;
  /**
   * What the shop says is owed and the shipping it charged, as the shop's own decimal strings, for the money
   * oracle: the courier must collect exactly outstanding − shipping for the goods (the customer pays the
   * delivery at the door, the test shops' default).
   */
  owed?: { outstanding: string; shipping: string };
}

export interface SentWebhook {
  seq: number;
  /** Milliseconds since the recorder started. */
  at: number;
  /** Who the test played: a shop, or the dispatch service (delivery webhooks replayed out of order). */
  from: ShopPlatform | 'dispatch';
  topic: string;
  externalOrderId?: string;
  /** What stays the same when the platform retries the same delivery (Shopify's event id, WooCommerce's order version). */
  deliveryKey: string;
  /** 1 for the first delivery, 2 for its first retry... */
  attempt: number;
  /** The HTTP status Relais answered; 0 when no answer came (refused, reset, the process died). */
  status: number;
  error?: string;
}

export interface LedgerSample {
  at: number;
  externalOrderId: string;
  state?: string;
  step?: string;
}

export interface ShopSample {
  at: number;
  externalOrderId: string;
  /** Shopify: the financial and fulfillment statuses; WooCommerce: the order status. */
  financial?: string;
  fulfillment?: string;
  status?: string;
}

export interface LedgerFinal {
  externalOrderId: string;
  /** Undefined when the ledger has no record of the order. */
  state?: string;
  hold?: HoldReason & { at: string };
  shipmentId?: string;
  delivery?: DeliveryProgress;
  timeline: TimelineEntry[];
}

export interface History {
  orders: PlacedOrder[];
  webhooks: SentWebhook[];
  dispatch: { calls: RecordedCall[]; shipments: EmulatedShipmentSnapshot[]; webhooks: WebhookDelivery[] };
  shopify: { calls: GraphqlCallRecord[]; orders: ShopifyOrderSnapshot[] };
  woo: { calls: ApiCall[]; orders: WooOrderSnapshot[] };
  ledger: LedgerFinal[];
  samples: { ledger: LedgerSample[]; shop: ShopSample[] };
}

export interface HistorySources {
  dispatch: DispatchEmulator;
  shopify?: ShopifyEmulator;
  shopifyDomain?: string;
  woo?: WooEmulator;
  wooShopId?: string;
  /** Reads the records, sampled and final (through connections that do not go through any fault proxy). */
  ledger: OrderLedger;
}

/** An empty history, for building one by hand (the checker's own tests). */
export function emptyHistory(): History {
  return {
    orders: [],
    webhooks: [],
    dispatch: { calls: [], shipments: [], webhooks: [] },
    shopify: { calls: [], orders: [] },
    woo: { calls: [], orders: [] },
    ledger: [],
    samples: { ledger: [], shop: [] },
  };
}

export class HistoryRecorder {
  readonly orders: PlacedOrder[] = [];
  readonly webhooks: SentWebhook[] = [];
  private readonly ledgerSamples: LedgerSample[] = [];
  private readonly shopSamples: ShopSample[] = [];
  private readonly started = Date.now();
  private sampler: { stop(): Promise<void> } | undefined;

  constructor(private readonly sources: HistorySources) {}

  elapsed(): number {
    return Date.now() - this.started;
  }

  placed(order: PlacedOrder): PlacedOrder {
    this.orders.push(order);
    return order;
  }

  sent(webhook: Omit<SentWebhook, 'seq' | 'at'>): SentWebhook {
    const entry: SentWebhook = { ...webhook, seq: this.webhooks.length + 1, at: this.elapsed() };
    this.webhooks.push(entry);
    return entry;
  }

  /**
   * Samples every placed order's ledger state and step and its shop status every `everyMs`, until stop().
   * Reads go to the ledger in one query per round; while the database is down a round is skipped.
   */
  startSampling(everyMs = 100): void {
    if (this.sampler) return;
    let running = true;
    let round: Promise<void> = Promise.resolve();
    let busy = false;
    const timer = setInterval(() => {
      // A slow round (the database restarting) is not queued behind: the next tick simply skips.
      if (!running || busy) return;
      busy = true;
      round = this.sampleOnce()
        .catch(() => undefined)
        .finally(() => {
          busy = false;
        });
    }, everyMs);
    this.sampler = {
      stop: async () => {
        running = false;
        clearInterval(timer);
        await round;
        await this.sampleOnce().catch(() => undefined);
      },
    };
  }

  async stopSampling(): Promise<void> {
    await this.sampler?.stop();
    this.sampler = undefined;
  }

  private async sampleOnce(): Promise<void> {
    const at = this.elapsed();
    const orders = [...this.orders];
    if (orders.length > 0) {
      const records = await this.sources.ledger.getMany(orders.map((o) => o.externalOrderId)).catch(() => []);
      records.forEach((record, i) => {
        const order = orders[i];
        if (!record || !order) return;
        this.ledgerSamples.push({
          at,
          externalOrderId: order.externalOrderId,
          state: record.state,
          step: record.delivery?.step,
        });
      });
    }
    for (const order of orders) {
      const shop = this.shopStatus(order);
      if (shop) this.shopSamples.push({ at, externalOrderId: order.externalOrderId, ...shop });
    }
  }

  private shopStatus(order: PlacedOrder): Omit<ShopSample, 'at' | 'externalOrderId'> | undefined {
    const { shopify, shopifyDomain, woo, wooShopId } = this.sources;
    try {
      if (order.platform === 'shopify' && shopify && shopifyDomain) {
        const snapshot = shopify.orderSnapshot(shopifyDomain, order.shopOrderId);
        return { financial: snapshot.financialStatus, fulfillment: snapshot.fulfillmentStatus };
      }
      if (order.platform === 'woocommerce' && woo && wooShopId)
        return { status: woo.orderSnapshot(wooShopId, order.shopOrderId).status };
    } catch {
      return undefined; // an order the emulator does not know (the checker's own fabricated ones)
    }
    return undefined;
  }

  /** Everything so far; the sampler stops unless `keepSampling` (an interim look while the scenario settles). */
  async collect(options: { keepSampling?: boolean } = {}): Promise<History> {
    if (!options.keepSampling) await this.stopSampling();
    const { dispatch, shopify, shopifyDomain, woo, wooShopId, ledger } = this.sources;
    const ledgerFinals = await Promise.all(
      this.orders.map(async (order): Promise<LedgerFinal> => {
        const record = await ledger.get(order.externalOrderId);
        return {
          externalOrderId: order.externalOrderId,
          state: record?.state,
          hold: record?.hold,
          shipmentId: record?.shipment?.shipmentId,
          delivery: record?.delivery,
          timeline: await ledger.timeline(order.externalOrderId),
        };
      }),
    );
    const shopifyOrders =
      shopify && shopifyDomain
        ? this.orders
            .filter((o) => o.platform === 'shopify')
            .map((o) => shopify.orderSnapshot(shopifyDomain, o.shopOrderId))
        : [];
    const wooOrders =
      woo && wooShopId
        ? this.orders
            .filter((o) => o.platform === 'woocommerce')
            .map((o) => woo.orderSnapshot(wooShopId, o.shopOrderId))
        : [];
    return {
      orders: [...this.orders],
      webhooks: [...this.webhooks],
      dispatch: { calls: dispatch.calls(), shipments: dispatch.shipments(), webhooks: dispatch.webhookDeliveries() },
      shopify: { calls: shopify?.graphqlCalls() ?? [], orders: shopifyOrders },
      woo: { calls: [...(woo?.calls() ?? [])], orders: wooOrders },
      ledger: ledgerFinals,
      samples: { ledger: [...this.ledgerSamples], shop: [...this.shopSamples] },
    };
  }
}
