/**
 * The DeliveryService contract (src/domain/delivery.ts): what the use cases rely on from a delivery service,
 * written once and run against each implementation. A service that passes it may stand in for another.
 *
 * Run against the dispatch service's HTTP adapter talking to the dispatch emulator over real HTTP
 * (src/adapters/dispatch-api/service.test.ts) and against the in-memory fake the use cases' unit tests run on
 * (test/doubles/fake-delivery.test.ts).
 *
 * What it pins down: a quote is priced, and a city name or a name the service does not price costs the fallback
 * tariff, the highest; a quote the service cannot price is refused; createShipment does not refuse a second
 * shipment for the same external order id, so the lookup by that id is what keeps an order to one shipment,
 * including when createShipment's answer was lost; markReady is idempotent; a shipment reads back as it is; a
 * cancellation is accepted before pickup and refused after; every refusal is a DeliveryError whose `reason`,
 * `answer` and `retryable` say what it means, and a lost answer is transient.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryError, type DeliveryService, type QuoteRequest } from '../../src/domain/delivery.js';

export interface DeliveryUnderTest {
  service: DeliveryService;
  /** Moves the service's clock: quotes expire, couriers move one stage per `courierStepMs`. */
  advance(ms: number): Promise<void>;
  /** The next createShipment is made at the service, but its answer never reaches the caller. */
  loseNextCreateAnswer(): void;
  /** How many shipments the service holds for this external order id (its own count, not through the port). */
  shipmentCount(externalOrderId: string): number;
  stop(): Promise<void>;
}

export interface DeliverySettings {
  /** Names the service does not price: quoted at the fallback tariff, as a city name is. */
  unpricedNeighbourhoods: string[];
}

export interface DeliveryContractTimes {
  quoteTtlMs: number;
  courierStepMs: number;
}

export type DeliveryFactory = (settings: DeliverySettings) => Promise<DeliveryUnderTest>;

const UNPRICED = 'Ouakam';
const PICKUP = { neighbourhood: 'Plateau', address: '12 avenue Léopold Sédar Senghor' };
const quoteTo = (neighbourhood: string, extra: Partial<QuoteRequest> = {}): QuoteRequest => ({
  pickup: PICKUP,
  dropoff: { neighbourhood, address: 'Rue 10' },
  payment: 'cash_on_delivery',
  ...extra,
});

/** The refusal a call ended with (a DeliveryError), or a failure of the test when it did not fail. */
async function refusalOf(call: Promise<unknown>): Promise<DeliveryError> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

export function deliveryServiceContract(
  implementation: string,
  start: DeliveryFactory,
  times: DeliveryContractTimes,
): void {
  describe(`the delivery service (${implementation})`, () => {
    const started: DeliveryUnderTest[] = [];
    afterEach(async () => {
      await Promise.all(started.splice(0).map((under) => under.stop()));
    });
    const fresh = async (): Promise<DeliveryUnderTest> => {
      const under = await start({ unpricedNeighbourhoods: [UNPRICED] });
      started.push(under);
      return under;
    };
    let orders = 0;
    const newOrderId = () => `dakar-mode:contract${(orders += 1)}`;
    /** A firm quote and a cash-on-delivery shipment made from it, carrying 12 000 XOF. */
    const shipFor = async (service: DeliveryService, externalOrderId: string) => {
      const quote = await service.quote(quoteTo('Mermoz'));
      return service.createShipment({ quoteId: quote.quoteId, externalOrderId, orderAmountXof: 12_000 });
    };

    it('prices a delivery to a neighbourhood it knows in whole francs, firm until an expiry in the future, below the fallback tariff', async () => {
      const { service } = await fresh();
      const [priced, city] = await Promise.all([service.quote(quoteTo('Mermoz')), service.quote(quoteTo('Dakar'))]);
      expect(priced.quoteId).not.toBe('');
      expect(Number.isSafeInteger(priced.total) && priced.total > 0).toBe(true);
      expect(Date.parse(priced.expiresAt)).toBeGreaterThan(Date.now() - 60_000);
      expect(priced.total).toBeLessThan(city.total);
    });

    it('prices a city name and a name it does not price at the same fallback tariff, the highest', async () => {
      const { service } = await fresh();
      const [city, unpriced, priced] = await Promise.all([
        service.quote(quoteTo('Dakar')),
        service.quote(quoteTo(UNPRICED)),
        service.quote(quoteTo('Mermoz')),
      ]);
      expect(unpriced.total).toBe(city.total);
      expect(city.total).toBeGreaterThan(priced.total);
      expect([city.pricingBasis, unpriced.pricingBasis]).toEqual(['fallback', 'fallback']);
    });

    it('refuses to quote a parcel it cannot carry (60 kg), for good, saying it is the request', async () => {
      const { service } = await fresh();
      const refused = await refusalOf(service.quote(quoteTo('Mermoz', { weightKg: 60 })));
      expect([refused.answer, refused.reason, refused.retryable]).toEqual(['refused', 'validation', false]);
      expect(refused.operation).toBe('createQuote');
    });

    it('creates a shipment carrying the amount to collect, found afterwards by its external order id; none for another id', async () => {
      const { service } = await fresh();
      const externalOrderId = newOrderId();
      expect(await service.shipmentForOrder(externalOrderId)).toBeUndefined();
      const created = await shipFor(service, externalOrderId);
      expect(created).toMatchObject({ externalOrderId, step: 'created', orderAmountXof: 12_000 });
      expect(created.trackingCode).toBeTruthy();
      expect((await service.shipmentForOrder(externalOrderId))?.shipmentId).toBe(created.shipmentId);
      expect(await service.shipmentForOrder(newOrderId())).toBeUndefined();
    });

    it('does not refuse a second shipment for the same external order id: the lookup answers the latest, so callers look before creating', async () => {
      const under = await fresh();
      const externalOrderId = newOrderId();
      await shipFor(under.service, externalOrderId);
      const second = await shipFor(under.service, externalOrderId);
      expect(under.shipmentCount(externalOrderId)).toBe(2);
      expect((await under.service.shipmentForOrder(externalOrderId))?.shipmentId).toBe(second.shipmentId);
    });

    it('when a createShipment answer is lost, says so as a transient error with no answer, and the shipment made is found by its external order id', async () => {
      const under = await fresh();
      const externalOrderId = newOrderId();
      under.loseNextCreateAnswer();
      const lost = await refusalOf(shipFor(under.service, externalOrderId));
      expect([lost.answer, lost.retryable, lost.operation]).toEqual(['none', true, 'createShipment']);
      const found = await under.service.shipmentForOrder(externalOrderId);
      expect(found).toMatchObject({ externalOrderId, step: 'created', orderAmountXof: 12_000 });
      expect(under.shipmentCount(externalOrderId)).toBe(1);
    });

    it('refuses a shipment from an expired or unknown quote, or a cash-on-delivery one with nothing to collect, each with its reason', async () => {
      const under = await fresh();
      const { service } = under;
      const stale = await service.quote(quoteTo('Mermoz'));
      const fresher = await service.quote(quoteTo('Mermoz'));
      const noAmount = await refusalOf(
        service.createShipment({ quoteId: fresher.quoteId, externalOrderId: newOrderId() }),
      );
      expect([noAmount.reason, noAmount.retryable]).toEqual(['validation', false]);
      await under.advance(times.quoteTtlMs + 1_000);
      const request = { quoteId: stale.quoteId, externalOrderId: newOrderId(), orderAmountXof: 12_000 };
      const expired = await refusalOf(service.createShipment(request));
      expect([expired.reason, expired.answer, expired.retryable]).toEqual(['quote_expired', 'refused', false]);
      const unknown = await refusalOf(service.createShipment({ ...request, quoteId: 'qt_never_issued' }));
      expect([unknown.reason, unknown.notFound]).toEqual(['quote_not_found', true]);
    });

    it('marks a shipment ready, and again without harm; it reads back ready', async () => {
      const { service } = await fresh();
      const created = await shipFor(service, newOrderId());
      expect((await service.markReady(created.shipmentId, 'Relais contract')).step).toBe('ready');
      expect((await service.markReady(created.shipmentId, 'Relais contract')).step).toBe('ready');
      const read = await service.shipment(created.shipmentId);
      expect(read).toMatchObject({ shipmentId: created.shipmentId, step: 'ready', orderAmountXof: 12_000 });
    });

    it('reads an unknown shipment as not found, for good', async () => {
      const { service } = await fresh();
      const missing = await refusalOf(service.shipment('shp_never_made'));
      expect([missing.notFound, missing.reason, missing.answer, missing.retryable]).toEqual([
        true,
        'shipment_not_found',
        'refused',
        false,
      ]);
    });

    it('cancels a shipment before pickup (never marked ready after), and refuses once the parcel is picked up', async () => {
      const under = await fresh();
      const { service } = under;
      const early = await shipFor(service, newOrderId());
      expect((await service.cancel(early.shipmentId, { reason: 'customer cancelled', by: 'contract' })).step).toBe(
        'cancelled',
      );
      const notReady = await refusalOf(service.markReady(early.shipmentId, 'contract'));
      expect([notReady.reason, notReady.retryable]).toEqual(['invalid_state', false]);

      const late = await shipFor(service, newOrderId());
      await service.markReady(late.shipmentId, 'contract');
      await under.advance(times.courierStepMs * 2 + 1_000);
      expect((await service.shipment(late.shipmentId)).step).toBe('picked_up');
      const refused = await refusalOf(service.cancel(late.shipmentId, { reason: 'too late', by: 'contract' }));
      expect([refused.reason, refused.answer, refused.retryable]).toEqual(['cancel_refused', 'refused', false]);
    });
  });
}
