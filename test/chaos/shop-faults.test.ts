/**
 * The shops misbehaving while Relais writes delivery status back: Shopify THROTTLED, 5xx and 429; WooCommerce
 * 5xx (PHP fatal errors and the proxy in front of it); and delivery webhooks arriving out of order. Each
 * order still ends with its shop showing the shipment's final state, every step and payment written once,
 * never a step backwards.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_SHOP_ID } from '../support/relais.js';
import {
  expectNoAnomaly,
  scale,
  SCENARIO_TIMEOUT_MS,
  startChaosStack,
  type ChaosOrder,
  type ChaosStack,
} from './support/stack.js';

let stack: ChaosStack;
let capture: Server;
/** Delivery webhooks the dispatch emulator sent while they were diverted here, in the order sent. */
const captured: string[] = [];

beforeAll(async () => {
  // No polling fallback here: write-backs complete through retries alone, and out-of-order webhooks are the only news.
  stack = await startChaosStack({ pollIntervalMs: 10 * 60_000 });
  capture = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      captured.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', () => resolve()));
});
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => capture?.close(() => resolve()));
});
afterEach(() => {
  stack.shopify.faults.clear();
  stack.woo.faults.clear();
});

const ORDERS = scale(4, 16);
const FAULTS = scale(4, 12);

async function shipAndDeliver(orders: ChaosOrder[]): Promise<void> {
  await Promise.all(orders.map((o) => stack.send(o)));
  await stack.waitDispatched(orders, { timeoutMs: 60_000 });
  await stack.driveCourier();
}

describe('shop faults during write-back', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`Shopify THROTTLED, 5xx and 429 on the Admin API: ${ORDERS} orders written once each, in order, paid once`, async () => {
    const faults = [
      stack.shopify.faults.add({ kind: 'throttle', times: FAULTS }),
      stack.shopify.faults.add({ kind: 'status', status: 503, retryAfterSeconds: 1, times: FAULTS }),
      stack.shopify.faults.add({ kind: 'status', status: 502, times: FAULTS }),
      stack.shopify.faults.add({ kind: 'status', status: 429, retryAfterSeconds: 1, times: FAULTS }),
      stack.shopify.faults.add({ kind: 'throttle', operation: 'orderMarkAsPaid', times: FAULTS }),
      stack.shopify.faults.add({ kind: 'status', status: 500, operation: 'fulfillmentEventCreate', times: FAULTS }),
    ];
    const orders = Array.from({ length: ORDERS }, (_, i) => stack.placeShopify({ fail: i % 4 === 3 }));
    await shipAndDeliver(orders);
    const { report } = await stack.finish();
    expectNoAnomaly(report);
    // Not a vacuous pass: the general faults were all used up.
    expect(stack.shopify.faults.pending().filter((f) => faults.slice(0, 4).includes(f.id))).toEqual([]);
  });

  it(`WooCommerce 500 and 503 on its REST API: ${ORDERS} orders written once each, in order, paid once`, async () => {
    stack.woo.faults.add({ kind: 'status', status: 500, times: FAULTS });
    stack.woo.faults.add({ kind: 'status', status: 503, times: FAULTS });
    stack.woo.faults.add({ kind: 'status', status: 500, method: 'POST', route: '/notes', times: FAULTS });
    stack.woo.faults.add({ kind: 'status', status: 502, method: 'PUT', times: FAULTS });
    const faultsBefore = stack.woo.calls().filter((c) => c.fault === 'status').length;
    const orders: ChaosOrder[] = [];
    for (let i = 0; i < ORDERS; i++) orders.push(await stack.placeWoo({ fail: i % 4 === 3 }));
    await shipAndDeliver(orders);
    const { report } = await stack.finish();
    expectNoAnomaly(report);
    expect(stack.woo.calls().filter((c) => c.fault === 'status').length - faultsBefore).toBeGreaterThanOrEqual(
      2 * FAULTS,
    );
  });
});

describe('delivery webhooks out of order', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`newest first, oldest last, all at once and again one by one: ${ORDERS} orders never move backwards`, async () => {
    const port = (capture.address() as AddressInfo).port;
    const relaisUrl = `${stack.relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${stack.relais.secrets.dispatchWebhookToken}`;
    const orders = await stack.placeMany(ORDERS);
    await Promise.all(orders.map((o) => stack.send(o)));
    await stack.waitDispatched(orders);
    await stack.settle();
    // The courier runs to the end while its webhooks are diverted: Relais has heard nothing since "ready".
    stack.relais.emulator.setOrganisationWebhook('org_relais', `http://127.0.0.1:${port}/diverted`);
    const ids = new Set(orders.map((o) => o.externalOrderId));
    captured.length = 0;
    try {
      await stack.driveCourier();
    } finally {
      stack.relais.emulator.setOrganisationWebhook('org_relais', relaisUrl);
    }
    const states = await Promise.all(orders.map(async (o) => (await stack.ledger.get(o.externalOrderId))?.state));
    expect(states).toEqual(orders.map(() => 'ready'));
    const ours = captured.filter((body) => [...ids].some((id) => body.includes(`"${id}"`)));
    expect(ours.length).toBeGreaterThanOrEqual(ORDERS * 5);
    const answers = await Promise.all([...ours].reverse().map((body) => stack.sendDelivery(body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await stack.settle();
    for (const body of [...ours].reverse()) expect((await stack.sendDelivery(body)).status).toBe(200);
    // and a few stale ones long after
    for (const body of ours.slice(0, ORDERS)) expect((await stack.sendDelivery(body)).status).toBe(200);
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });
});
