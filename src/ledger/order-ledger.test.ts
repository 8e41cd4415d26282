import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/support/redis.js';
import { OrderLedger } from './order-ledger.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

const DAY = 86_400_000;

function ledgerFor(name: string): OrderLedger {
  return new OrderLedger(redis.client(), `{${redis.prefix}${name}}`, { retentionDays: 30, timelineLength: 5 });
}

async function receive(ledger: OrderLedger, orderId: string, at: Date, payload: unknown = { id: orderId }) {
  return ledger.recordEvent({
    meta: { externalOrderId: `dakar-mode:${orderId}`, shopId: 'dakar-mode', platform: 'shopify', orderId, orderName: `#${orderId}` },
    payload,
    now: at,
    timeline: { at: at.toISOString(), system: 'shop', operation: 'webhook orders/create', outcome: 'received' },
  });
}

describe('the order ledger', () => {
  it('records an order once: a second event keeps its first-seen time and state, and both events are on the timeline', async () => {
    const ledger = ledgerFor('a');
    const first = await receive(ledger, '1', new Date('2026-11-01T10:00:00Z'));
    await ledger.setState('dakar-mode:1', 'waiting', new Date('2026-11-01T10:00:01Z'));
    const second = await receive(ledger, '1', new Date('2026-11-01T11:00:00Z'), { id: '1', note: 'edited' });
    expect(first.state).toBe('received');
    expect(second.state).toBe('waiting');
    expect(second.meta.firstSeenAt).toBe('2026-11-01T10:00:00.000Z');
    expect(await ledger.payload('dakar-mode:1')).toEqual({ id: '1', note: 'edited' });
    expect(await ledger.timeline('dakar-mode:1')).toHaveLength(2);
  });

  it('keeps the raw payload until the order is ready, and never stores it again after', async () => {
    const ledger = ledgerFor('b');
    await receive(ledger, '2', new Date('2026-11-01T10:00:00Z'));
    await ledger.setState('dakar-mode:2', 'dispatching', new Date('2026-11-01T10:00:01Z'));
    expect(await ledger.payload('dakar-mode:2')).toEqual({ id: '2' });
    await ledger.setState('dakar-mode:2', 'ready', new Date('2026-11-01T10:00:02Z'));
    expect(await ledger.payload('dakar-mode:2')).toBeUndefined();
    const later = await receive(ledger, '2', new Date('2026-11-01T12:00:00Z'), { id: '2', note: 'after shipping' });
    expect(later.state).toBe('ready');
    expect(await ledger.payload('dakar-mode:2')).toBeUndefined();
  });

  it('trims the shop index to the retention, keeping recent orders listed', async () => {
    const ledger = ledgerFor('c');
    const now = new Date('2026-11-22T00:00:00Z');
    await receive(ledger, 'old', new Date(now.getTime() - 31 * DAY));
    await receive(ledger, 'recent', new Date(now.getTime() - 29 * DAY));
    expect(await ledger.trimShopIndex('dakar-mode', now)).toBe(1);
    expect(await ledger.listShopOrders('dakar-mode')).toEqual(['dakar-mode:recent']);
  });
});
