/**
 * A reconciliation repair whose job is enqueued while the ledger refuses the timeline entry that notes it (as
 * while PostgreSQL is away and Redis answers: seen in the PostgreSQL chaos scenario). The repair is reported as
 * done, saying the entry is missing, not as failed. The ledger's refusal is a real one: a trigger on the
 * timeline table of the test's own schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, reconcileDepsFor, RECONCILE_TOPIC } from '../../src/orders/reconcile/index.js';
import { wooExternalId } from '../pipeline/helpers.js';
import { ABIDJAN_ADDRESS } from '../support/factories.js';
import { startTestRelais, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';

let relais: TestRelais;

beforeAll(async () => {
  // No worker: the replayed event only has to be enqueued, and a worker would take it into the ledger.
  relais = await startTestRelais({ inProcessWorker: false });
  await relais.db.pool().query(`
    CREATE FUNCTION refuse_timeline() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the timeline takes no entry now'; END $$;
    CREATE TRIGGER refuse_timeline BEFORE INSERT ON order_timeline FOR EACH ROW EXECUTE FUNCTION refuse_timeline();
  `);
});

afterAll(async () => {
  await relais?.stop();
});

describe('reconciliation while the ledger refuses its notes', () => {
  it('reports the replay of a missed webhook as repaired, saying its timeline entry is missing, and the event is enqueued', async () => {
    const woo = relais.woo!;
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Boubou wax', price: '12500', weight: '0.8' });
    const order = await woo.createOrder(WOO_SHOP_ID, {
      line_items: [{ product_id: product.id, quantity: 1 }],
      payment_method: 'cod',
      billing: { ...ABIDJAN_ADDRESS, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
      shipping: { ...ABIDJAN_ADDRESS, phone: '' },
    });
    const extId = wooExternalId(Number(order.id));

    const report = await reconcile(reconcileDepsFor(relais.web.runtime), {
      since: new Date(Date.now() - 86_400_000),
      repair: true,
    });

    const findings = report.shops.flatMap((s) => s.findings).filter((f) => f.externalOrderId === extId);
    expect(findings.map((f) => [f.kind, f.action])).toEqual([['missed_webhook', 'repaired']]);
    expect(findings[0]?.detail).toContain("not noted on the order's timeline: the timeline takes no entry now");
    const replayed = await relais.web.runtime.queues.shopEvents.getJobs(['waiting', 'prioritized', 'delayed']);
    expect(
      replayed.filter((job) => job.name === RECONCILE_TOPIC && (job.data.payload as { id?: unknown }).id === order.id),
    ).toHaveLength(1);
  });
});
