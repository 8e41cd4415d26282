/**
 * Duplicate deliveries: platforms deliver at least once, so the same webhook arrives concurrently,
 * one after the other, and long after the order was delivered. Each order still gets one shipment,
 * each step is written once, and the payment once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SHOPIFY_DOMAIN, WOO_SHOP_ID } from '../support/relais.js';
import {
  expectNoAnomaly,
  scale,
  SCENARIO_TIMEOUT_MS,
  startChaosStack,
  type ChaosOrder,
  type ChaosStack,
} from './support/stack.js';

let stack: ChaosStack;
beforeAll(async () => {
  stack = await startChaosStack();
});
afterAll(async () => {
  await stack?.stop();
});

const ORDERS = scale(4, 24);
const COPIES = scale(5, 10);
const updatedTopic = (order: ChaosOrder) => (order.platform === 'shopify' ? 'orders/updated' : 'order.updated');

describe('duplicate deliveries', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`the same order webhook ${COPIES} times at once ships each of ${ORDERS} orders once`, async () => {
    const orders = await stack.placeMany(ORDERS);
    await Promise.all(
      orders.flatMap((order) => {
        const eventId = randomUUID(); // a platform's retries of one delivery share its event id
        return [
          ...Array.from({ length: COPIES }, () => stack.send(order, { eventId })),
          // and a different delivery about the same order, racing them
          stack.send(order, { topic: updatedTopic(order) }),
        ];
      }),
    );
    await stack.waitDispatched(orders);
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });

  it(`the same order webhook ${COPIES} times one after the other ships each of ${ORDERS} orders once`, async () => {
    const orders = await stack.placeMany(ORDERS);
    for (const order of orders) {
      const eventId = randomUUID();
      for (let copy = 0; copy < COPIES; copy++) await stack.send(order, { eventId });
      await stack.send(order, { topic: updatedTopic(order) });
      await stack.send(order); // a new event id: the platform's own duplicate (a second subscription, a re-save)
    }
    await stack.waitDispatched(orders);
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });

  it(`webhooks replayed after ${ORDERS} orders were delivered (old bodies and current ones) change nothing`, async () => {
    const orders = await stack.placeMany(ORDERS);
    const firstIds = new Map(orders.map((o) => [o.externalOrderId, randomUUID()]));
    await Promise.all(orders.map((order) => stack.send(order, { eventId: firstIds.get(order.externalOrderId) })));
    await stack.waitDispatched(orders);
    await stack.driveCourier();
    await stack.settle();
    const writesBefore =
      stack.shopify.graphqlCalls().filter((c) => c.operationType === 'mutation').length +
      stack.woo.calls().filter((c) => c.method !== 'GET').length;

    for (const order of orders) {
      // the original delivery retried late, a new delivery of the old body, and the order as the shop shows it now
      await stack.send(order, { eventId: firstIds.get(order.externalOrderId) });
      await stack.send(order);
      const current =
        order.platform === 'shopify'
          ? (stack.shopify.order(SHOPIFY_DOMAIN, order.shopOrderId) as unknown as Record<string, unknown>)
          : stack.woo.getOrder(WOO_SHOP_ID, order.shopOrderId);
      await stack.send({ ...order, payload: current }, { topic: updatedTopic(order) });
    }
    await stack.settle();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
    const writesAfter =
      stack.shopify.graphqlCalls().filter((c) => c.operationType === 'mutation').length +
      stack.woo.calls().filter((c) => c.method !== 'GET').length;
    if (writesAfter !== writesBefore)
      throw new Error(`replayed webhooks wrote into the shops again: ${writesAfter - writesBefore} writes`);
  });
});
