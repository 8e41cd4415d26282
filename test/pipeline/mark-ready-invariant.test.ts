/**
 * The markReady invariant, against a service that names a new shipment differently from what the shop's wire
 * profile expects (the trap an independent double of the service showed: shipments never marked ready while
 * Relais reported success). The shop's profile here maps `created` to another name, so the emulator's
 * CREATED is a state Relais does not know: it must still call markReady, record it only from the 2xx
 * answer, and count the unknown name.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInProfileDir } from '../../src/adapters/dispatch-api/profile.js';
import { replayOrder } from '../../src/orders/intake/replay.js';
import { shopifyOrderPayload } from '../support/factories.js';
import { startTestRelais, waitFor, type TestRelais } from '../support/relais.js';
import { postShopify, shipmentsFor, shopifyExternalId, waitForState } from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  const defaults = JSON.parse(await readFile(join(builtInProfileDir(), 'default.json'), 'utf8')) as {
    name: string;
    states: Record<string, string[]>;
  };
  // The service's CREATED is not in this profile: to Relais it is an unknown state.
  const profile = {
    ...defaults,
    name: 'created-named-otherwise',
    states: { ...defaults.states, created: ['AWAITING_READY_SIGNAL'] },
  };
  const file = join(await mkdtemp(join(tmpdir(), 'relais-profile-')), 'profile.json');
  await writeFile(file, JSON.stringify(profile));
  relais = await startTestRelais({ dispatchProfile: file });
});
afterAll(async () => {
  await relais?.stop();
});

const codOrder = () =>
  shopifyOrderPayload({
    total_price: '17000.00',
    current_total_price: '17000.00',
    total_outstanding: '17000.00',
    shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar' },
  });

async function metricValue(name: string, labels: string): Promise<number> {
  const text = await relais.worker.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe("a shipment whose state the shop's wire profile does not map", () => {
  it('is marked ready all the same, "ready" is recorded from the 2xx markReady answer, and the unknown name is counted', async () => {
    const payload = codOrder();
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held']);
    expect(record.hold).toBeUndefined();
    expect(record.state).toBe('ready');

    const [shipment] = shipmentsFor(relais, extId);
    expect(shipment?.status).toBe('READY'); // the service put it in the assignment queue
    const markReadyCalls = relais.emulator.calls().filter((c) => c.operation === 'markReady' && c.status === 200);
    expect(markReadyCalls.length).toBeGreaterThanOrEqual(1);
    expect(record.shipment?.markedReadyAt).toBeDefined();
    expect(await metricValue('relais_dispatch_unknown_states_total', 'state="CREATED"')).toBeGreaterThanOrEqual(1);
  });

  it('when the service refuses markReady, holds the order naming the shipment, lists it as unready, and a replay marks it ready', async () => {
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'status', status: 409 } });
    const payload = codOrder();
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    const extId = shopifyExternalId(payload.id);
    const held = await waitForState(relais, extId, ['held', 'ready']);
    expect(held.state).toBe('held');
    const [shipment] = shipmentsFor(relais, extId);
    expect(shipment?.status).toBe('CREATED');
    expect(held.hold).toMatchObject({
      code: 'shipment_not_ready',
      message: expect.stringContaining(shipment!.shipment_id),
    });
    expect(held.shipment?.markedReadyAt).toBeUndefined();
    const unready = await relais.worker.runtime.ledger.listUnready(new Date(Date.now() + 1_000));
    expect(unready.map((u) => u.externalOrderId)).toContain(extId);

    expect((await replayOrder(relais.web.runtime, extId)).ok).toBe(true);
    const ready = await waitFor(
      async () => {
        const r = await relais.worker.runtime.ledger.get(extId);
        return r?.state === 'ready' ? r : undefined;
      },
      { what: 'the replayed order to be ready' },
    );
    expect(ready.shipment?.shipmentId).toBe(shipment!.shipment_id);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(shipmentsFor(relais, extId)[0]?.status).toBe('READY');
    const after = await relais.worker.runtime.ledger.listUnready(new Date(Date.now() + 1_000));
    expect(after.map((u) => u.externalOrderId)).not.toContain(extId);
  });
});
