/**
 * The dashboard's use-cases for held orders (src/dashboard/use-cases), called directly with the ports the web
 * process wires (src/dashboard/wiring.ts): the real ledger, alias store, resolver and replay over a private
 * Redis, with a worker taking the replays and the Shopify and dispatch emulators behind it. Orders reach the
 * ledger the way they do in production, by the shop's webhook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildShopRegistry } from '../../../src/shops/shops.js';
import type { DashboardDeps } from '../../../src/dashboard/ports.js';
import { addAliasAndReplay } from '../../../src/dashboard/use-cases/add-alias-and-replay.js';
import { heldOrders } from '../../../src/dashboard/use-cases/held-orders.js';
import { replayHeldOrder } from '../../../src/dashboard/use-cases/replay-held-order.js';
import { dashboardDepsFor } from '../../../src/dashboard/wiring.js';
import { UNREADY_WATCHDOG_MINUTES } from '../../../src/domain/shipment-status.js';
import { DEFAULT_SHIPPING_ADDRESS } from '@relais/emulators/shopify';
import { replayOutcome } from '../../../src/orders/intake/replay.js';
import { queuedShopEvents, shopifyExternalId, waitForState } from '../../pipeline/helpers.js';
import {
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  WOO_SHOP_ID,
  type TestRelais,
} from '../../support/relais.js';

let relais: TestRelais;
let ports: DashboardDeps;
/** An order dispatched and marked ready: not held. */
let readyId: string;

const { latitude: _lat, longitude: _lng, ...addressWithoutCoords } = DEFAULT_SHIPPING_ADDRESS;

beforeAll(async () => {
  relais = await startTestRelais({ pollIntervalMs: 500 });
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    relais.shopify!.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
  ports = dashboardDepsFor(relais.web.runtime, { token: `dash_${randomHex(16)}` });
  readyId = shopifyExternalId(relais.shopify!.createOrder(SHOPIFY_DOMAIN, {}).id);
  await waitForState(relais, readyId, ['ready']);
}, 60_000);

afterAll(async () => {
  await relais?.shopify?.webhooksSettled();
  await relais?.stop();
});

/** A Shopify order whose address (no coordinates) is `address1, Dakar`, once Relais has held it. */
async function heldOrder(address1: string): Promise<{ id: string; name: string; heldAt: string }> {
  const order = relais.shopify!.createOrder(SHOPIFY_DOMAIN, {
    shippingAddress: { ...addressWithoutCoords, address1, address2: '', city: 'Dakar' },
  });
  const id = shopifyExternalId(order.id);
  const record = await waitForState(relais, id, ['held']);
  return { id, name: order.name, heldAt: record.hold!.at };
}

const ledger = () => relais.worker.runtime.ledger;

describe('replaying a held order as it is', () => {
  it('queues the order for the pipeline again and returns when; nothing fixed, the worker holds it anew', async () => {
    const held = await heldOrder('villa 3');
    const before = Date.now();
    const result = await replayHeldOrder(ports, held.id);
    expect(result).toMatchObject({ kind: 'replayed', record: { meta: { externalOrderId: held.id } } });
    if (result.kind !== 'replayed') return;
    expect(result.replayedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(
      await replayOutcome(
        { ledger: ledger() },
        { externalOrderId: held.id, heldAt: held.heldAt },
        { timeoutMs: 10_000 },
      ),
    ).toMatchObject({ kind: 'held_again', code: 'neighbourhood_not_found' });
  });

  it('does not replay an order the ledger does not have', async () => {
    const queued = await queuedShopEvents(relais);
    expect(await replayHeldOrder(ports, `${SHOPIFY_SHOP_ID}:404`)).toEqual({
      kind: 'not_found',
      externalOrderId: `${SHOPIFY_SHOP_ID}:404`,
    });
    expect(await queuedShopEvents(relais)).toBe(queued);
  });

  it('does not replay an order that is not held, and returns it with its state', async () => {
    const queued = await queuedShopEvents(relais);
    expect(await replayHeldOrder(ports, readyId)).toMatchObject({ kind: 'not_held', record: { state: 'ready' } });
    expect(await queuedShopEvents(relais)).toBe(queued);
  });

  it('says why the replay was refused when the shop payload is gone (redacted)', async () => {
    const held = await heldOrder('villa 5');
    await ledger().redactOrders([held.id]);
    const result = await replayHeldOrder(ports, held.id);
    expect(result).toMatchObject({ kind: 'not_replayed', why: expect.stringContaining('the shop payload is gone') });
    expect((await ledger().get(held.id))?.state).toBe('held');
  });
});

describe('adding an alias and replaying', () => {
  it("adds the alias for the order's shop, spelled as the gazetteer spells it, and replays the order, which is dispatched to that neighbourhood", async () => {
    const held = await heldOrder('Pyrotechnie, villa 3');
    const result = await addAliasAndReplay(ports, held.id, { text: '  Pyrotechnie ', neighbourhood: 'sacre coeur' });
    expect(result).toMatchObject({
      kind: 'replayed',
      alias: { shopName: 'Dakar Mode', text: 'Pyrotechnie', neighbourhood: 'Sacré Coeur' },
    });
    expect(await relais.web.runtime.aliases.list(SHOPIFY_SHOP_ID)).toMatchObject({ Pyrotechnie: 'Sacré Coeur' });
    const dispatched = await waitForState(relais, held.id, ['ready']);
    expect(dispatched.neighbourhood?.name).toBe('Sacré Coeur');
  });

  it('adds the alias but does not replay an order whose address still does not resolve, and returns why and the closest neighbourhoods', async () => {
    const held = await heldOrder('Ouakam ou Yoff');
    const result = await addAliasAndReplay(ports, held.id, { text: 'Cité des Douanes', neighbourhood: 'Plateau' });
    expect(result).toMatchObject({
      kind: 'still_unresolved',
      alias: { text: 'Cité des Douanes', neighbourhood: 'Plateau' },
      reason: expect.stringContaining('names several neighbourhoods'),
    });
    if (result.kind !== 'still_unresolved') return;
    expect([...result.suggestions].sort()).toEqual(['Ouakam', 'Yoff']);
    expect(await relais.web.runtime.aliases.list(SHOPIFY_SHOP_ID)).toMatchObject({ 'Cité des Douanes': 'Plateau' });
    const record = await ledger().get(held.id);
    expect(record).toMatchObject({ state: 'held', hold: { at: held.heldAt }, meta: { generation: 0 } });
  });

  it("refuses a neighbourhood outside the shop's country and adds no alias", async () => {
    const held = await heldOrder('Riviera villa 8');
    const result = await addAliasAndReplay(ports, held.id, { text: 'Riviera', neighbourhood: 'Cocody' });
    expect(result).toMatchObject({
      kind: 'unknown_neighbourhood',
      neighbourhood: 'Cocody',
      country: 'SN',
      reason: expect.stringContaining('Cocody'),
    });
    expect(await relais.web.runtime.aliases.list(SHOPIFY_SHOP_ID)).not.toHaveProperty('Riviera');
  });

  it('refuses an incomplete form, naming each missing field, and adds no alias', async () => {
    const held = await heldOrder('villa 9');
    const aliases = await relais.web.runtime.aliases.list(SHOPIFY_SHOP_ID);
    expect(await addAliasAndReplay(ports, held.id, { text: '   ', neighbourhood: undefined })).toMatchObject({
      kind: 'invalid',
      problems: ['say what customers write', expect.any(String)],
    });
    expect(await addAliasAndReplay(ports, held.id, { text: 'Keur Gorgui Extension', neighbourhood: '' })).toMatchObject(
      { kind: 'invalid', problems: ['name the neighbourhood'] },
    );
    expect(await relais.web.runtime.aliases.list(SHOPIFY_SHOP_ID)).toEqual(aliases);
  });

  it('checks that the order exists and is held before it reads the form', async () => {
    const empty = { text: '', neighbourhood: '' };
    expect(await addAliasAndReplay(ports, `${SHOPIFY_SHOP_ID}:404`, empty)).toEqual({
      kind: 'not_found',
      externalOrderId: `${SHOPIFY_SHOP_ID}:404`,
    });
    expect(await addAliasAndReplay(ports, readyId, empty)).toMatchObject({
      kind: 'not_held',
      record: { state: 'ready' },
    });
  });

  it('refuses an order whose shop is no longer in the registry, and adds no alias', async () => {
    const held = await heldOrder('villa 21');
    const document = relais.registryDocument as { shops: { id: string }[] };
    const withoutShop = buildShopRegistry({ shops: document.shops.filter((s) => s.id === WOO_SHOP_ID) }, (ref) =>
      'env' in ref ? relais.env[ref.env] : undefined,
    );
    const result = await addAliasAndReplay({ ...ports, shops: withoutShop }, held.id, {
      text: 'villa 21',
      neighbourhood: 'Ngor',
    });
    expect(result).toMatchObject({ kind: 'shop_missing', record: { meta: { shopId: SHOPIFY_SHOP_ID } } });
    expect(await relais.web.runtime.aliases.list(SHOPIFY_SHOP_ID)).not.toHaveProperty('villa 21');
  });
});

describe('the held orders page', () => {
  it('lists held orders newest hold first, each with the neighbourhoods its address comes closest to', async () => {
    const older = await heldOrder('Ouakam ou Yoff, villa 11');
    const newer = await heldOrder('villa 12');
    const { held } = await heldOrders(ports, 200);
    const ids = held.map((h) => h.record.meta.externalOrderId);
    expect(ids.indexOf(newer.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    expect([...held.find((h) => h.record.meta.externalOrderId === older.id)!.suggestions].sort()).toEqual([
      'Ouakam',
      'Yoff',
    ]);
    expect(held.find((h) => h.record.meta.externalOrderId === newer.id)!.suggestions).toEqual([]);
    expect(held.every((h) => h.record.state === 'held')).toBe(true);
  });

  it('lists a shipment the service refused to mark ready once it has been unready past the watchdog bound, and not before', async () => {
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'status', status: 409 } });
    const order = relais.shopify!.createOrder(SHOPIFY_DOMAIN, {});
    const id = shopifyExternalId(order.id);
    const record = await waitForState(relais, id, ['held']);
    expect(record.hold?.code).toBe('shipment_not_ready');

    const now = (await heldOrders(ports, 200)).unready.map((u) => u.record.meta.externalOrderId);
    expect(now).not.toContain(id);
    const later = { ...ports, now: () => new Date(Date.now() + (UNREADY_WATCHDOG_MINUTES + 1) * 60_000) };
    const { unready } = await heldOrders(later, 200);
    const listed = unready.find((u) => u.record.meta.externalOrderId === id);
    expect(listed?.record.shipment?.shipmentId).toBe(record.shipment!.shipmentId);
    expect(listed!.since.getTime()).toBeLessThanOrEqual(Date.now());
  });
});
