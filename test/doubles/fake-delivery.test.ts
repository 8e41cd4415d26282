/**
 * The fake delivery service passes the same DeliveryService contract as the dispatch service's HTTP adapter
 * against the emulator (test/contracts/delivery-service.contract.ts).
 */
import { deliveryServiceContract } from '../contracts/delivery-service.contract.js';
import { FAKE_COURIER_STEP_MS, FAKE_QUOTE_TTL_MS, FakeDeliveryService } from './fake-delivery.js';

deliveryServiceContract(
  'in-memory fake',
  async (settings) => {
    const service = new FakeDeliveryService({ unpricedNeighbourhoods: settings.unpricedNeighbourhoods });
    return {
      service,
      advance: async (ms) => service.advance(ms),
      loseNextCreateAnswer: () => service.loseNextAnswer('createShipment'),
      shipmentCount: (externalOrderId) => service.shipmentsFor(externalOrderId).length,
      stop: async () => undefined,
    };
  },
  { quoteTtlMs: FAKE_QUOTE_TTL_MS, courierStepMs: FAKE_COURIER_STEP_MS },
);
