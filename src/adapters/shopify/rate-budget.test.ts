/**
 * The shop's Shopify rate budget in a real Redis, as two workers of one Relais see it: one bucket per shop, taken
 * from before each call and put right by every answer.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { perFile } from '../../../test/support/per-file.js';
import { startRedis } from '../../../test/support/redis.js';
import { createLogger } from '../../log.js';
import { RedisShopRateBudget, type BudgetTicket, type ThrottleStatus } from './rate-budget.js';

const redis = perFile(() => startRedis());

const logger = createLogger({ level: 'silent' });
const SHOP = 'dakar-mode.myshopify.com';
let run = 0;

/** Two workers' views of the same shop's budget, under a prefix of their own for this test. */
function twoWorkers(domain = SHOP) {
  run += 1;
  const prefix = `${redis().prefix}:${run}`;
  return [
    new RedisShopRateBudget(redis().client(), prefix, domain, logger),
    new RedisShopRateBudget(redis().client(), prefix, domain, logger),
  ] as const;
}

/** A bucket that refills slowly enough that the milliseconds a test takes do not matter. */
const bucket = (currentlyAvailable: number): ThrottleStatus => ({
  maximumAvailable: 1_000,
  currentlyAvailable,
  restoreRate: 1,
});

/** The ticket of a call the budget let out; fails the test when it was told to wait. */
async function ticketOf(taking: Promise<{ ticket: BudgetTicket } | { waitMs: number }>): Promise<BudgetTicket> {
  const taken = await taking;
  if (!('ticket' in taken)) throw new Error(`told to wait ${taken.waitMs} ms`);
  return taken.ticket;
}
async function waitOf(taking: Promise<{ ticket: BudgetTicket } | { waitMs: number }>): Promise<number> {
  const taken = await taking;
  return 'waitMs' in taken ? taken.waitMs : 0;
}

/** One call of `operation` answered by Shopify: its requested cost, and what the bucket holds after it. */
async function answered(budget: RedisShopRateBudget, operation: string, requestedCost: number, left: number) {
  const ticket = await ticketOf(budget.take(operation, 10));
  await budget.settle(ticket, { operation, requestedCost, status: bucket(left) });
}

/**
 * While `first`'s orderState call holding `out` is unanswered, `second` must wait; once Shopify's answer (the cost it
 * charged, the points left in the bucket) is settled, `second` gets its ticket.
 */
async function waitsForTheAnswer(
  first: RedisShopRateBudget,
  second: RedisShopRateBudget,
  out: BudgetTicket,
  requestedCost: number,
  left: number,
) {
  expect(await waitOf(second.take('orderState', 10))).toBeGreaterThan(0);
  await first.settle(out, { operation: 'orderState', requestedCost, status: bucket(left) });
  await ticketOf(second.take('orderState', 10));
}

describe('the Shopify rate budget shared in Redis', () => {
  it('lets one call out to learn a bucket Shopify has not reported yet, and has the others wait for it', async () => {
    const [first, second] = twoWorkers();
    const scout = await ticketOf(first.take('orderState', 10));
    await waitsForTheAnswer(first, second, scout, 10, 990);
  });

  it('holds the points of a call still out until its answer, then counts what Shopify reports', async () => {
    const [first, second] = twoWorkers();
    await answered(first, 'orderState', 600, 1_000);
    const out = await ticketOf(first.take('orderState', 10)); // 600 held
    // 400 left for the second worker while the first call is out: a 600-point call waits, for the answer.
    // Shopify then charges 600 and refunds all but 9: the bucket holds 991 again.
    await waitsForTheAnswer(first, second, out, 600, 991);
  });

  it('makes a worker wait for the bucket to refill, as long as Shopify would make it wait', async () => {
    const [first, second] = twoWorkers();
    await answered(first, 'fulfillmentCreate', 10, 5);
    const wait = await waitOf(second.take('fulfillmentCreate', 10));
    // 5 points left, 10 needed, 1 point a second: about five seconds.
    expect(wait).toBeGreaterThan(4_000);
    expect(wait).toBeLessThanOrEqual(5_000);
  });

  it('takes an operation at the cost Shopify last reported for it, not at the estimate', async () => {
    const [first, second] = twoWorkers();
    await answered(first, 'RelaisReconcileOrders', 800, 900);
    // A listing (800) is reserved, then a second one must wait while a 10-point mutation need not.
    await ticketOf(second.take('RelaisReconcileOrders', 10));
    expect(await waitOf(second.take('RelaisReconcileOrders', 10))).toBeGreaterThan(0);
    await ticketOf(second.take('tagsAdd', 10));
  });

  it('lets one call of an operation whose cost Shopify has not reported go out at a time, then takes the rest at that cost', async () => {
    const [first, second] = twoWorkers();
    await answered(first, 'RelaisReconcileOrders', 800, 1_000);
    // The bucket is known, the cost of a read is not: a burst of reads at the 10-point estimate would each ask
    // Shopify for 620 and be throttled together.
    const read = await ticketOf(first.take('orderState', 10));
    await waitsForTheAnswer(first, second, read, 620, 991);
    // 991 less the 620 now held: the next read waits for the first to be answered.
    expect(await waitOf(first.take('orderState', 10))).toBeGreaterThan(0);
  });

  it("keeps each shop's bucket apart", async () => {
    const [dakar] = twoWorkers('dakar-mode.myshopify.com');
    run -= 1;
    const [abidjan] = twoWorkers('abidjan-tech.myshopify.com');
    await answered(dakar, 'orderState', 10, 0);
    expect(await waitOf(dakar.take('orderState', 10))).toBeGreaterThan(0);
    await ticketOf(abidjan.take('orderState', 10));
  });

  it('lets the call go out when Redis does not answer (Shopify still paces it)', async () => {
    const unreachable = new Redis(redis().port, { host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false });
    unreachable.on('error', () => undefined);
    const budget = new RedisShopRateBudget(unreachable, 'gone', SHOP, logger);
    const ticket = await ticketOf(budget.take('orderState', 10));
    await expect(
      budget.settle(ticket, { operation: 'orderState', requestedCost: 10, status: bucket(0) }),
    ).resolves.toBeUndefined();
    unreachable.disconnect();
  });
});
