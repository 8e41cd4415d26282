/**
 * The DeliveryService contract (test/contracts/delivery-service.contract.ts) on the dispatch service's adapter:
 * DispatchDeliveryService over a DispatchClient, talking real HTTP to the dispatch emulator (manual clock).
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_COURIER_STEP_MS, DEFAULT_QUOTE_TTL_MS, startDispatchEmulator } from '@relais/emulators/dispatch';
import { deliveryServiceContract } from '../../../test/contracts/delivery-service.contract.js';
import { DispatchClient } from './client.js';
import { DispatchDeliveryService } from './service.js';

deliveryServiceContract(
  'dispatch API over HTTP, against the emulator',
  async (settings) => {
    const apiKey = `pk_live_${randomBytes(16).toString('hex')}`;
    const emulator = await startDispatchEmulator({
      organisations: [{ id: 'org_contract', name: 'Contract org', apiKeys: [apiKey] }],
      unpricedNeighbourhoods: settings.unpricedNeighbourhoods,
    });
    const client = new DispatchClient({ baseUrl: emulator.baseUrl, apiKey, timeoutMs: 5_000 });
    return {
      service: new DispatchDeliveryService(client, { organisation: 'org_contract', carrierName: 'Contract carrier' }),
      advance: (ms) => emulator.advance(ms),
      loseNextCreateAnswer: () =>
        emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'commit_then_drop' } }),
      shipmentCount: (externalOrderId) =>
        emulator.shipments().filter((s) => s.external_order_id === externalOrderId).length,
      stop: async () => {
        await client.close();
        await emulator.close();
      },
    };
  },
  { quoteTtlMs: DEFAULT_QUOTE_TTL_MS, courierStepMs: DEFAULT_COURIER_STEP_MS },
);
