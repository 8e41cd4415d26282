/**
 * A chaos scenario's world: Relais (startTestRelais: web, worker, the dispatch, Shopify and WooCommerce
 * emulators on one private Redis) plus the history recorder, and the moves every scenario makes:
 * place orders in the shops, deliver their webhooks as the platform would (retrying what was not answered
 * 200), drive the courier to the end, wait for Relais to settle, then check the history.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { DEFAULT_COURIER_STEP_MS, type EmulatedShipmentSnapshot } from '@relais/emulators/dispatch';
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WooEmulator } from '@relais/emulators/woocommerce';
import { createQueues, type RelaisQueues } from '../../../src/orders/queues.js';
import type { OrderLedger } from '../../../src/ledger/order-ledger.js';
import { PostgresOrderLedger } from '../../../src/adapters/postgres/pg-ledger.js';
import { connectRedis, type RedisClient } from '../../../src/redis.js';
import { parseShopifyOrder } from '../../../src/adapters/shopify/payload.js';
import { shopifyShippingOwed } from '../../../src/adapters/shopify/shipping-owed.js';
import { parseWooOrder, wooShippingOwed } from '../../../src/adapters/woocommerce/normalise.js';
import { ABIDJAN_ADDRESS, shopifyWebhookHeaders, wooWebhookHeaders } from '../../support/factories.js';
import {
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  WOO_SHOP_ID,
  type TestRelais,
  type TestRelaisOptions,
} from '../../support/relais.js';
import { checkHistory, describeReport, FINAL_STATUSES, type CheckReport } from './checker.js';
import { HistoryRecorder, type History, type PlacedOrder, type SentWebhook } from './history.js';

/** CHAOS_LONG=1: more orders and more rounds per scenario (npm run chaos). */
export const LONG = process.env.CHAOS_LONG === '1';
/** How long one scenario may take: the long version runs many more orders. */
export const SCENARIO_TIMEOUT_MS = LONG ? 900_000 : 120_000;
/** Waits scale with the volume: the long version gives every wait five times longer. */
const patience = (ms: number) => (LONG ? ms * 5 : ms);
/** `short` orders in CI, `long` with CHAOS_LONG=1. */
export function scale(short: number, long: number): number {
  return LONG ? long : short;
}

export interface ChaosOrder extends PlacedOrder {
  /** The body the platform sends (Shopify: the REST order; WooCommerce: the order as its API shows it). */
  payload: Record<string, unknown>;
}

export interface SendOptions {
  topic?: string;
  /** Shopify: the event id; a retry of the same delivery reuses it. Default: a new one per call. */
  eventId?: string;
  /** Keep retrying (as the platform does) until answered 200; default true. */
  untilAccepted?: boolean;
  /** Where the platform sends; default the in-process web. */
  webUrl?: string;
  /** Gives up retrying after this long. */
  timeoutMs?: number;
}

export interface ChaosStack {
  relais: TestRelais;
  shopify: ShopifyEmulator;
  woo: WooEmulator;
  recorder: HistoryRecorder;
  /** The ledger through a direct connection (never through a fault proxy). */
  ledger: OrderLedger;
  /** The queues through a direct connection. */
  queues: RelaisQueues;
  /** External order ids whose courier fails to deliver (the parcel goes back). */
  failing: Set<string>;
  /** `freeShipping`: its 2 000 F shipping line made free by a discount code (the shop's shipping still owed is 0). */
  placeShopify(options?: { fail?: boolean; prepaid?: boolean; freeShipping?: boolean }): ChaosOrder;
  placeWoo(options?: { fail?: boolean }): Promise<ChaosOrder>;
  /** `count` orders, alternating Shopify and WooCommerce; every fourth one's delivery fails. */
  placeMany(count: number): Promise<ChaosOrder[]>;
  /** Delivers the order webhook, retrying until 200 unless told otherwise; returns every attempt. */
  send(order: ChaosOrder, options?: SendOptions): Promise<SentWebhook[]>;
  /** Posts a delivery webhook (a body the dispatch service sent) to Relais as the service would, recorded in the history. */
  sendDelivery(body: string): Promise<SentWebhook>;
  /** Waits until every order is marked ready (or held, when `allowHeld`). */
  waitDispatched(orders: ChaosOrder[], options?: { timeoutMs?: number; allowHeld?: boolean }): Promise<void>;
  /** Moves the courier stage by stage until every ready shipment of the scenario is final, letting Relais settle after each. */
  driveCourier(): Promise<void>;
  /** Waits until no job is waiting, active or delayed (twice in a row). */
  settle(timeoutMs?: number): Promise<void>;
  /** Settles, waits for write-backs to catch up (bounded), collects the history and checks it. */
  finish(options?: { timeoutMs?: number }): Promise<{ history: History; report: CheckReport }>;
  stop(): Promise<void>;
}

/** A 2 000 F shipping line made free by a discount code: Shopify's shipping price before discounts is still 2 000. */
const FREE_SHIPPING_LINE = {
  title: 'Livraison Dakar',
  price: '2000',
  discount: { code: 'LIVRAISON0', amount: '2000' },
};

export async function startChaosStack(
  options: TestRelaisOptions & { sampleEveryMs?: number } = {},
): Promise<ChaosStack> {
  const failing = new Set<string>();
  const relais = await startTestRelais({
    quoteTtlMs: 30 * 60_000,
    // A job whose worker lost track of it (its moveToActive answered into a partition) waits for its lock to
    // expire and the next stall check: 5 s instead of the production 30 s keeps scenarios short.
    lockMs: 5_000,
    // The polling fallback: a delivery webhook lost to a fault is still read back within a second.
    pollIntervalMs: 1_000,
    deliveryOutcome: ({ externalOrderId }) => (failing.has(externalOrderId) ? 'fail' : 'deliver'),
    ...options,
  });
  const shopify = relais.shopify;
  const woo = relais.woo;
  if (!shopify || !woo)
    throw new Error('the chaos stack needs the harness to start the Shopify and WooCommerce emulators');
  // Every shop shares one dispatch organisation (one key): one delivery webhook URL serves both.
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
  );
  // Straight to the server (or the cluster), never through the fault proxy a scenario may put in front of it.
  const direct: RedisClient = connectRedis(
    { redisUrl: relais.redis.url, redisClusterNodes: relais.base.redisClusterNodes },
    { maxRetriesPerRequest: null },
  );
  direct.on('error', () => undefined); // scenarios that stop Redis: reads wait for it to come back
  const ledger = new PostgresOrderLedger(relais.db.pool());
  const queues = createQueues(direct, relais.prefix);
  for (const queue of queues.all()) queue.on('error', () => undefined); // outages are on purpose here
  const recorder = new HistoryRecorder({
    dispatch: relais.emulator,
    shopify,
    shopifyDomain: SHOPIFY_DOMAIN,
    woo,
    wooShopId: WOO_SHOP_ID,
    ledger,
  });
  recorder.startSampling(options.sampleEveryMs ?? (LONG ? 250 : 100));
  const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Boubou wax', price: '12500', weight: '0.8' });
  let placed = 0;

  const counts = () =>
    Promise.all(
      [queues.shopEvents, queues.dispatch, queues.deliveries].map(async (q) => ({
        queue: q.name,
        ...(await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused')),
      })),
    );
  const settle = async (timeoutMs = 30_000) => {
    const idle = async () =>
      (await counts()).every(({ queue: _queue, ...c }) => Object.values(c).every((n) => n === 0));
    await waitFor(async () => (await idle()) && (await new Promise((r) => setTimeout(r, 150)), await idle()), {
      timeoutMs: patience(timeoutMs),
      what: 'the queues to drain',
    }).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(await counts())}`);
    });
  };

  const ours = (): EmulatedShipmentSnapshot[] => {
    const ids = new Set(recorder.orders.map((o) => o.externalOrderId));
    return relais.emulator.shipments().filter((s) => ids.has(s.external_order_id));
  };

  const stack: ChaosStack = {
    relais,
    shopify,
    woo,
    recorder,
    ledger,
    queues,
    failing,

    placeShopify({ fail = false, prepaid = false, freeShipping = false } = {}) {
      const order = shopify.createOrder(
        SHOPIFY_DOMAIN,
        {
          ...(prepaid ? { gateway: 'shopify_payments', financialStatus: 'paid' } : {}),
          ...(freeShipping ? { shippingLines: [FREE_SHIPPING_LINE] } : {}),
        },
        { webhooks: false },
      );
      const externalOrderId = `${SHOPIFY_SHOP_ID}:${order.id}`;
      if (fail) failing.add(externalOrderId);
      placed += 1;
      // The shop's shipping still owed, by the app's own rule (after discounts, refunds and its tax).
      const parsed = parseShopifyOrder(order);
      if (!parsed.ok) throw new Error(`the Shopify emulator's order does not parse: ${parsed.error.message}`);
      const owed = {
        outstanding: parsed.order.total_outstanding === undefined ? '0' : String(parsed.order.total_outstanding),
        shipping: String(shopifyShippingOwed(parsed.order)),
      };
      recorder.placed({
        externalOrderId,
        platform: 'shopify',
        shopOrderId: order.id,
        cashOnDelivery: !prepaid,
        ...(prepaid ? {} : { owed }),
      });
      return {
        externalOrderId,
        platform: 'shopify',
        shopOrderId: order.id,
        cashOnDelivery: !prepaid,
        payload: order as unknown as Record<string, unknown>,
      };
    },

    async placeWoo({ fail = false } = {}) {
      const json = await woo.createOrder(WOO_SHOP_ID, {
        line_items: [{ product_id: product.id, quantity: 1 }],
        payment_method: 'cod',
        payment_method_title: 'Paiement à la livraison',
        billing: { ...ABIDJAN_ADDRESS, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
        shipping: { ...ABIDJAN_ADDRESS, phone: '' },
      });
      const id = Number(json.id);
      const externalOrderId = `${WOO_SHOP_ID}:${id}`;
      if (fail) failing.add(externalOrderId);
      placed += 1;
      const parsed = parseWooOrder(json);
      if (!parsed.ok) throw new Error(`the WooCommerce emulator's order does not parse: ${parsed.error.message}`);
      const owed = { outstanding: String(json.total), shipping: String(wooShippingOwed(parsed.order)) };
      recorder.placed({ externalOrderId, platform: 'woocommerce', shopOrderId: id, cashOnDelivery: true, owed });
      return { externalOrderId, platform: 'woocommerce', shopOrderId: id, cashOnDelivery: true, payload: json };
    },

    async placeMany(count) {
      const orders: ChaosOrder[] = [];
      for (let i = 0; i < count; i++) {
        const fail = (placed + 1) % 4 === 0;
        orders.push(placed % 2 === 0 ? stack.placeShopify({ fail }) : await stack.placeWoo({ fail }));
      }
      return orders;
    },

    async send(order, sendOptions = {}) {
      const untilAccepted = sendOptions.untilAccepted ?? true;
      const deadline = Date.now() + (sendOptions.timeoutMs ?? 60_000);
      const base = sendOptions.webUrl ?? relais.web.url;
      const body = JSON.stringify(order.payload);
      const attempts: SentWebhook[] = [];
      const eventId = sendOptions.eventId ?? randomUUID();
      const topic = sendOptions.topic ?? (order.platform === 'shopify' ? 'orders/create' : 'order.created');
      const p = order.payload as { id?: unknown; date_modified_gmt?: unknown; status?: unknown; refunds?: unknown };
      const deliveryKey =
        order.platform === 'shopify'
          ? `${topic}|${eventId}`
          : `${topic}|${String(p.id)}|${String(p.date_modified_gmt)}|${String(p.status)}|${Array.isArray(p.refunds) ? p.refunds.length : 0}`;
      for (let attempt = 1; ; attempt++) {
        const [url, headers] =
          order.platform === 'shopify'
            ? [
                `${base}/webhooks/shopify`,
                shopifyWebhookHeaders({
                  topic,
                  shopDomain: SHOPIFY_DOMAIN,
                  body,
                  secret: relais.secrets.shopifyClientSecret,
                  eventId,
                }),
              ]
            : [
                `${base}/webhooks/woocommerce/${WOO_SHOP_ID}`,
                wooWebhookHeaders({ topic, body, secret: relais.secrets.wooWebhookSecret }),
              ];
        let status = 0;
        let error: string | undefined;
        try {
          const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
          status = response.status;
          await response.arrayBuffer();
        } catch (failure) {
          error =
            failure instanceof Error
              ? `${failure.message}${failure.cause instanceof Error ? `: ${failure.cause.message}` : ''}`
              : String(failure);
        }
        attempts.push(
          recorder.sent({
            from: order.platform,
            topic,
            externalOrderId: order.externalOrderId,
            deliveryKey,
            attempt,
            status,
            ...(error ? { error } : {}),
          }),
        );
        if (status === 200 || !untilAccepted || Date.now() > deadline) return attempts;
        // Platforms back off for minutes; the scenario compresses that.
        await new Promise((r) => setTimeout(r, 250));
      }
    },

    async sendDelivery(body) {
      const url = `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`;
      const parsed = JSON.parse(body) as { status?: unknown; external_order_id?: unknown; shipment_id?: unknown };
      let status = 0;
      let error: string | undefined;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch (failure) {
        error = failure instanceof Error ? failure.message : String(failure);
      }
      return recorder.sent({
        from: 'dispatch',
        topic: String(parsed.status ?? 'unknown'),
        deliveryKey: body,
        attempt: 1,
        status,
        ...(typeof parsed.external_order_id === 'string' ? { externalOrderId: parsed.external_order_id } : {}),
        ...(error ? { error } : {}),
      });
    },

    async waitDispatched(orders, { timeoutMs = 30_000, allowHeld = false } = {}) {
      const done = new Set([
        'ready',
        'in_delivery',
        'delivery_failed',
        'delivered',
        'returned',
        ...(allowHeld ? ['held'] : []),
      ]);
      await waitFor(
        async () => {
          const states = await Promise.all(orders.map(async (o) => (await ledger.get(o.externalOrderId))?.state));
          return states.every((s) => s !== undefined && done.has(s));
        },
        { timeoutMs: patience(timeoutMs), what: `${orders.length} orders to be marked ready` },
      ).catch(async (error: unknown) => {
        const states = await Promise.all(
          orders.map(async (o) => `${o.externalOrderId}=${(await ledger.get(o.externalOrderId))?.state ?? '-'}`),
        );
        throw new Error(`${(error as Error).message}: ${states.join(', ')}`);
      });
    },

    async driveCourier() {
      for (let round = 0; round < 12; round++) {
        const moving = ours().filter(
          (s) => s.status_history.some((h) => h.status === 'READY') && !FINAL_STATUSES.has(s.status),
        );
        if (moving.length === 0) return;
        await relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
        await settle();
      }
      throw new Error('the courier did not bring every shipment to a final status in 12 stages');
    },

    settle,

    async finish({ timeoutMs = 20_000 } = {}) {
      // Write-backs may trail the queues by a polling round: wait (bounded) until the shop and the ledger
      // show each shipment's final state, then judge. What is still stale after that is reported.
      const deadline = Date.now() + patience(timeoutMs);
      for (;;) {
        await settle();
        const interim = checkHistory(await recorder.collect({ keepSampling: true }));
        if (interim.stale.length === 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      // The sampler keeps running: a file may run several scenarios on one stack, each judged on everything so far.
      const history = await recorder.collect({ keepSampling: true });
      return { history, report: checkHistory(history) };
    },

    async stop() {
      await recorder.stopSampling();
      await queues.close();
      direct.disconnect();
      await relais.stop();
    },
  };
  return stack;
}

/** The scenario's verdict: zero lost, duplicated, regressed and stale orders; every order acknowledged; held only where expected. */
export function expectNoAnomaly(report: CheckReport, options: { held?: number } = {}): void {
  // CHAOS_VERBOSE=1 prints every verdict (orders, acknowledged, shipped, held, anomalies).
  if (process.env.CHAOS_VERBOSE === '1') process.stdout.write(`[chaos] ${describeReport(report)}\n`);
  const counts = {
    lost: report.lost.length,
    duplicated: report.duplicated.length,
    regressed: report.regressed.length,
    stale: report.stale.length,
    misbilled: report.misbilled.length,
    unacknowledged: report.unacknowledged.length,
    held: report.held.length,
  };
  expect(counts, describeReport(report)).toEqual({
    lost: 0,
    duplicated: 0,
    regressed: 0,
    stale: 0,
    misbilled: 0,
    unacknowledged: 0,
    held: options.held ?? 0,
  });
  expect(report.shipped + report.held.length, describeReport(report)).toBe(report.orders);
}
