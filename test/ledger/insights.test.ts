/**
 * The overview's figures from the real ledger (PostgreSQL): each shop's orders counted on its merchant's own day,
 * the orders page's filters finding the orders a figure counts, holds kept after the order moved on, and the CSV
 * export escaping text a spreadsheet would run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overviewCsv } from '../../src/dashboard/overview-csv.js';
import { overview } from '../../src/dashboard/use-cases/overview.js';
import { COUNTRY_TIME_ZONES } from '../../src/shops/time-zones.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { PostgresOrderLedger } from '../../src/adapters/postgres/pg-ledger.js';
import { PostgresOrderInsights } from '../../src/adapters/postgres/pg-insights.js';
import { seedOrder } from '../support/order-history.js';
import { startTestDatabase, type TestDatabase } from '../support/postgres.js';

let db: TestDatabase;
let ledger: PostgresOrderLedger;
let insights: PostgresOrderInsights;
const dakar = { shopId: 'dakar-mode', timeZone: COUNTRY_TIME_ZONES.SN };
const cotonou = { shopId: 'cotonou-shop', timeZone: COUNTRY_TIME_ZONES.BJ };
/** 23:30 UTC: still the 10th in Dakar (UTC+0), already the 11th in Cotonou (UTC+1). */
const lateEvening = new Date('2026-11-10T23:30:00Z');

beforeAll(async () => {
  db = await startTestDatabase();
  ledger = new PostgresOrderLedger(db.pool());
  insights = new PostgresOrderInsights(db.pool());
  const order = { platform: 'shopify' as const, firstSeenAt: lateEvening, goods: 10_000, delivery: 1_500 };
  await seedOrder(ledger, { ...order, shopId: dakar.shopId, number: 1, end: 'delivered', neighbourhood: 'Plateau' });
  await seedOrder(ledger, { ...order, shopId: cotonou.shopId, number: 2, end: 'delivered', neighbourhood: 'Akpakpa' });
  await seedOrder(ledger, { ...order, shopId: dakar.shopId, number: 3, end: 'held', holdCode: '=HYPERLINK("x")' });
  // Held, then replayed and delivered: the hold is cleared from the order but still counted.
  await seedOrder(ledger, {
    ...order,
    shopId: dakar.shopId,
    number: 4,
    end: 'delivered',
    holdCode: 'no_neighbourhood',
  });
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

describe('the overview from the ledger', () => {
  it("counts each order on its merchant's day: Dakar at UTC+0, Cotonou at UTC+1", async () => {
    const figures = await insights.overview({ shops: [dakar, cotonou], from: '2026-11-10', to: '2026-11-11' });
    const delivered = Object.fromEntries(figures.outcomes.map((d) => [d.day, d.counts.delivered]));
    expect(delivered).toEqual({ '2026-11-10': 2, '2026-11-11': 1 });
    expect(figures.outcomes.find((d) => d.day === '2026-11-10')?.counts.held).toBe(1);
  });

  it('finds, with the filters a figure links with, exactly the orders it counts', async () => {
    const found = await insights.findOrders({
      shops: [dakar, cotonou],
      states: ['delivered'],
      from: '2026-11-11',
      to: '2026-11-11',
      limit: 10,
    });
    expect(found).toEqual({ ids: ['cotonou-shop:2'], total: 1 });
    const held = await insights.findOrders({ shops: [dakar], holdCode: 'no_neighbourhood', limit: 10 });
    expect(held.ids).toEqual(['dakar-mode:4']);
  });

  it('keeps every hold by reason, also of orders that moved on, and exports it with formula cells escaped', async () => {
    const resolver = NeighbourhoodResolver.load();
    const now = new Date('2026-11-12T10:00:00Z');
    const result = await overview({ insights, resolver }, { shops: [dakar], countries: ['SN'], days: 7, now });
    expect(result.holds.codes).toEqual(['=HYPERLINK("x")', 'no_neighbourhood']);
    const csv = overviewCsv('holds', result);
    expect(csv).toContain(`2026-11-10,"'=HYPERLINK(""x"")",1\r\n`);
    expect(csv).toContain('2026-11-10,no_neighbourhood,1\r\n');
    expect(result.neighbourhoods[0]).toMatchObject({
      name: 'Plateau',
      orders: 1,
      delivered: 1,
      averageDeliveryPrice: 1_500,
    });
    expect(result.neighbourhoods[0]?.point).toBeDefined();
  });
});
