/**
 * Conformance of the dispatch client and the dispatch emulator to the dispatch spec
 * (docs/dispatch-api-spec.md), section by section: one test named after each rule.
 *
 * The client drives the emulator through real HTTP on 127.0.0.1. Time is the emulator's manual clock:
 * couriers and quote expiry move only when a test calls advance()/runUntilIdle(). Raw HTTP (fetch) is used
 * only to look at what the client deliberately hides (the exact bytes of a public answer, a server-side limit).
 *
 * Every rule is checked twice: with the default wire profile (today's guesses) and with a deliberately
 * different dialect (test/fixtures/dispatch-profiles/other-dialect.json), the emulator speaking it and the
 * client reading it. State names, error codes, webhook header and shape are read through the profile, never
 * written here.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DispatchClient } from '../../src/adapters/dispatch-api/client.js';
import { DISPATCH_OPERATIONS, DispatchConfigError, DispatchError } from '../../src/adapters/dispatch-api/errors.js';
import { getPath } from '../../src/adapters/dispatch-api/dotted-path.js';
import {
  defaultWireProfile,
  loadWireProfile,
  type ErrorMeaning,
  type FieldKey,
  type WireProfile,
} from '../../src/adapters/dispatch-api/profile.js';
import { isPermanent } from '../../src/domain/errors.js';
import { DELIVERY_STEPS, type DeliveryStep } from '../../src/domain/shipment-status.js';
import {
  API_KEY_HEADER,
  ID_PREFIX,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  PaymentMode,
  TRACKING_CODE_LENGTH,
  type WireQuoteRequest,
  type WireShipment,
} from '../../src/adapters/dispatch-api/wire.js';
import { createLogger } from '../../src/log.js';
import { startDispatchEmulator, type DispatchEmulator, type DispatchEmulatorOptions } from '@relais/emulators/dispatch';
import { rejectionOf } from '../support/rejection.js';

// ---------------------------------------------------------------------------------------------------
// Harness

const COURIER_STEP_MS = 60_000;
const QUOTE_TTL_MS = 15 * 60_000;
const ORG_A = 'org_a';
const ORG_B = 'org_b';

/** The two dialects every rule is checked in. */
const PROFILES: readonly WireProfile[] = [
  defaultWireProfile(),
  loadWireProfile('test/fixtures/dispatch-profiles/other-dialect.json'),
];

/** The profile's name for each delivery step: what the emulator answers, and what the client sees. */
function stateNames(profile: WireProfile): Record<DeliveryStep, string> {
  return Object.fromEntries(DELIVERY_STEPS.map((step) => [step, profile.stateFor(step)])) as Record<
    DeliveryStep,
    string
  >;
}

interface Harness {
  emulator: DispatchEmulator;
  /** Client of organisation A. */
  client: DispatchClient;
  /** Client of organisation B (another tenant). */
  other: DispatchClient;
  keyA: string;
  keyB: string;
  newClient(apiKey: string, extra?: { timeoutMs?: number; logLines?: string[] }): DispatchClient;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function liveKey(): string {
  return `pk_live_${randomBytes(16).toString('hex')}`;
}

async function startHarness(
  profile: WireProfile,
  options: Partial<DispatchEmulatorOptions> = {},
  orgA: { webhookUrl?: string; webhookSecret?: string } = {},
): Promise<Harness> {
  const keyA = liveKey();
  const keyB = liveKey();
  const emulator = await startDispatchEmulator({
    organisations: [
      { id: ORG_A, name: 'Dakar Mode', apiKeys: [keyA], ...orgA },
      { id: ORG_B, name: 'Abidjan Shop', apiKeys: [keyB] },
    ],
    courierStepMs: COURIER_STEP_MS,
    quoteTtlMs: QUOTE_TTL_MS,
    profile,
    ...options,
  });
  cleanups.push(() => emulator.close());
  const newClient = (apiKey: string, extra: { timeoutMs?: number; logLines?: string[] } = {}): DispatchClient => {
    const lines = extra.logLines;
    const client = new DispatchClient({
      baseUrl: emulator.baseUrl,
      trackingUrl: emulator.trackingUrl,
      apiKey,
      profile,
      timeoutMs: extra.timeoutMs ?? 5_000,
      ...(lines
        ? { logger: createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } }) }
        : {}),
    });
    cleanups.push(() => client.close());
    return client;
  };
  return { emulator, client: newClient(keyA), other: newClient(keyB), keyA, keyB, newClient };
}

let orderCounter = 0;
function nextOrderId(): string {
  orderCounter += 1;
  return `conformance-shop:${Date.now().toString(36)}${orderCounter}`;
}

const ALMADIES = { city: 'Almadies', address: 'Route des Almadies, villa 12' };
const PLATEAU = { city: 'Plateau', address: '14 avenue Léopold Sédar Senghor' };

function quoteRequest(overrides: Partial<WireQuoteRequest> = {}): WireQuoteRequest {
  return {
    pickup: PLATEAU,
    dropoff: ALMADIES,
    parcel: { weight_kg: 2 },
    payment_mode: PaymentMode.prepaid,
    ...overrides,
  };
}

async function newShipment(
  client: DispatchClient,
  options: { cod?: boolean; orderAmountXof?: number; externalOrderId?: string } = {},
): Promise<WireShipment> {
  const quote = await client.createQuote(quoteRequest(options.cod ? { payment_mode: PaymentMode.cashOnDelivery } : {}));
  return client.createShipment({
    quote_id: quote.quoteId,
    external_order_id: options.externalOrderId ?? nextOrderId(),
    ...(options.orderAmountXof === undefined ? {} : { orderAmountXof: options.orderAmountXof }),
  });
}

/** Moves the manual clock one courier step at a time until the shipment reaches `status` (bounded). */
async function advanceUntil(h: Harness, shipmentId: string, status: string): Promise<WireShipment> {
  for (let step = 0; step < 20; step += 1) {
    const shipment = await h.client.getShipment(shipmentId);
    if (shipment.status === status) return shipment;
    await h.emulator.advance(COURIER_STEP_MS);
  }
  throw new Error(`shipment never reached ${status}`);
}

const failure = (promise: Promise<unknown>) => rejectionOf(promise, DispatchError);

async function rawJson(url: string, init: RequestInit = {}): Promise<{ status: number; text: string; json: unknown }> {
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

interface WebhookReceiver {
  url: string;
  received: { body: string; signature: string | undefined }[];
  /** Status the receiver answers; change it to simulate a failing endpoint. */
  answer: { status: number };
}

async function startWebhookReceiver(profile: WireProfile): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const answer = { status: 200 };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const signature = req.headers[profile.signatureHeader.toLowerCase()];
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: Array.isArray(signature) ? signature[0] : signature,
      });
      res.writeHead(answer.status).end();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/dispatch`, received, answer };
}

// ---------------------------------------------------------------------------------------------------

describe.each(PROFILES.map((profile) => [profile.name, profile] as const))(
  'speaking the "%s" wire profile',
  (_name, profile) => {
    const S = stateNames(profile);
    const code = (meaning: ErrorMeaning): string | undefined => profile.codeFor(meaning);
    /** The first of the profile's spellings of a field that is snake_case (what responseSpelling 'snake' writes). */
    const snakeSpelling = (key: FieldKey): string =>
      profile.document.fields[key].find((name) => /^[a-z0-9_]+$/.test(name)) ?? profile.spelling(key);

    describe('1. What the service does', () => {
      it('the request flow is three calls: createQuote, createShipment, markReady', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        const shipment = await h.client.createShipment({ quote_id: quote.quoteId, external_order_id: nextOrderId() });
        expect(shipment.status).toBe(S.created);
        const ready = await h.client.markReady(shipment.shipmentId, 'relais');
        expect(ready.status).toBe(S.ready);
        await h.emulator.runUntilIdle();
        expect((await h.client.getShipment(shipment.shipmentId)).status).toBe(S.delivered);
      });

      it('a shipment never marked ready is never offered to a courier', async () => {
        const h = await startHarness(profile);
        const waiting = await newShipment(h.client);
        const ready = await newShipment(h.client);
        await h.client.markReady(ready.shipmentId, 'relais');
        for (let hour = 0; hour < 48; hour += 1) await h.emulator.advance(60 * 60_000);
        const after = await h.client.getShipment(waiting.shipmentId);
        expect(after.status).toBe(S.created);
        expect(after.courierId).toBeUndefined();
        expect(after.statusHistory?.map((e) => e.status)).toEqual([S.created]);
        // Over the same two days, the shipment that was marked ready went all the way.
        expect((await h.client.getShipment(ready.shipmentId)).status).toBe(S.delivered);
      });

      it('amounts are whole XOF francs, never divided by 100', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest({ payment_mode: PaymentMode.cashOnDelivery }));
        expect(quote.currency).toBe('XOF');
        expect(Number.isSafeInteger(quote.total)).toBe(true);
        // A delivery in francs costs hundreds or thousands; "in cents" it would be a hundred times more, divided a hundred times less.
        expect(quote.total).toBeGreaterThanOrEqual(500);
        expect(quote.total).toBeLessThan(100_000);
        const { courier, platform, codFee, customer } = quote.breakdown ?? {};
        expect(customer).toBe(quote.total);
        expect((courier ?? 0) + (platform ?? 0) + (codFee ?? 0)).toBe(quote.total);
        const shipment = await h.client.createShipment({
          quote_id: quote.quoteId,
          external_order_id: nextOrderId(),
          orderAmountXof: 15000,
        });
        expect(shipment.orderAmountXof).toBe(15000);
        expect(h.emulator.shipments(ORG_A).find((s) => s.shipment_id === shipment.shipmentId)?.orderAmountXof).toBe(
          15000,
        );
        // A fraction of a franc never leaves the client.
        expect(() =>
          h.client.createShipment({ quote_id: quote.quoteId, external_order_id: nextOrderId(), orderAmountXof: 150.5 }),
        ).toThrow(RangeError);
      });

      it('identifiers carry their type prefix', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        expect(quote.quoteId.startsWith(ID_PREFIX.quote)).toBe(true);
        const externalOrderId = nextOrderId();
        const shipment = await h.client.createShipment({ quote_id: quote.quoteId, external_order_id: externalOrderId });
        expect(shipment.shipmentId.startsWith(ID_PREFIX.shipment)).toBe(true);
        expect(shipment.quoteId).toBe(quote.quoteId);
        await h.client.markReady(shipment.shipmentId, 'relais');
        const assigned = await advanceUntil(h, shipment.shipmentId, S.assigned);
        expect(assigned.courierId?.startsWith(ID_PREFIX.courier)).toBe(true);
        // Stored unchanged, they find the same resources again.
        expect((await h.client.getShipment(shipment.shipmentId)).shipmentId).toBe(shipment.shipmentId);
        expect((await h.client.getShipmentByExternalOrder(externalOrderId))?.externalOrderId).toBe(externalOrderId);
      });

      it('a city name instead of a neighbourhood is priced at the fallback tariff', async () => {
        const h = await startHarness(profile);
        const neighbourhoodPairs: [string, string][] = [
          ['Plateau', 'Almadies'],
          ['Plateau', 'Medina'],
          ['Yoff', 'Ngor'],
          ['Ouakam', 'Grand Yoff'],
          ['Fann', 'Point E'],
          ['Mermoz', 'Plateau'],
        ];
        const neighbourhoodTotals: number[] = [];
        for (const [from, to] of neighbourhoodPairs) {
          const quote = await h.client.createQuote(
            quoteRequest({ pickup: { city: from, address: 'a' }, dropoff: { city: to, address: 'b' } }),
          );
          neighbourhoodTotals.push(quote.total);
        }
        const cityName = await h.client.createQuote(
          quoteRequest({ pickup: PLATEAU, dropoff: { city: 'Dakar', address: 'b' } }),
        );
        const otherCityName = await h.client.createQuote(
          quoteRequest({ pickup: PLATEAU, dropoff: { city: 'DAKAR', address: 'b' } }),
        );
        const unknown = await h.client.createQuote(
          quoteRequest({ pickup: PLATEAU, dropoff: { city: 'Nowhere Heights', address: 'b' } }),
        );
        // The fallback is the highest: above every neighbourhood pair, and the customer pays the difference.
        expect(cityName.total).toBeGreaterThan(Math.max(...neighbourhoodTotals));
        expect(otherCityName.total).toBe(cityName.total);
        expect(unknown.total).toBe(cityName.total);
        expect(cityName.dropoffZone).toBe(unknown.dropoffZone);
      });
    });

    describe('2. Resources and their fields', () => {
      it('a quote carries quote_id, expiresAt, total and a breakdown for accounting', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        expect(quote.quoteId).toMatch(/^qte_/);
        expect(Date.parse(quote.expiresAt)).toBeGreaterThan(h.emulator.now().getTime());
        expect(quote.breakdown?.courier).toBeGreaterThan(0);
        expect(quote.breakdown?.platform).toBeGreaterThan(0);
        expect(quote.breakdown?.codFee).toBeUndefined();
      });

      it('a cash collection at delivery adds its own fee to the breakdown', async () => {
        const h = await startHarness(profile);
        const prepaid = await h.client.createQuote(quoteRequest());
        const cod = await h.client.createQuote(quoteRequest({ payment_mode: PaymentMode.cashOnDelivery }));
        expect(cod.breakdown?.codFee).toBeGreaterThan(0);
        expect(cod.total).toBe(prepaid.total + (cod.breakdown?.codFee ?? 0));
      });

      it('coordinates at both ends price by real distance', async () => {
        const h = await startHarness(profile);
        const near = await h.client.createQuote(
          quoteRequest({
            pickup: { ...PLATEAU, coords: { lat: 14.6676, lng: -17.4329 } },
            dropoff: { ...ALMADIES, coords: { lat: 14.675, lng: -17.44 } },
          }),
        );
        const far = await h.client.createQuote(
          quoteRequest({
            pickup: { ...PLATEAU, coords: { lat: 14.6676, lng: -17.4329 } },
            dropoff: { ...ALMADIES, coords: { lat: 14.7442, lng: -17.5175 } },
          }),
        );
        const zoneOnly = await h.client.createQuote(quoteRequest());
        const oneEndOnly = await h.client.createQuote(
          quoteRequest({ pickup: { ...PLATEAU, coords: { lat: 14.6676, lng: -17.4329 } } }),
        );
        // Same neighbourhoods, different points: the price follows the distance, not the zones.
        expect(far.total).toBeGreaterThan(near.total);
        expect(far.distanceKm).toBeGreaterThan(10);
        expect(near.distanceKm).toBeLessThan(2);
        // Coordinates on one end only: priced by zone, as if there were none.
        expect(oneEndOnly.total).toBe(zoneOnly.total);
        expect(oneEndOnly.distanceKm).toBeUndefined();
      });

      it('an absent weight is priced as a standard parcel', async () => {
        const h = await startHarness(profile);
        const absent = await h.client.createQuote(quoteRequest({ parcel: {} }));
        const noParcel = await h.client.createQuote({ pickup: PLATEAU, dropoff: ALMADIES });
        const byWeight = new Map<number, number>();
        for (const kg of [0.5, 1, 2, 5, 10, 20, 40]) {
          byWeight.set(kg, (await h.client.createQuote(quoteRequest({ parcel: { weight_kg: kg } }))).total);
        }
        expect(noParcel.total).toBe(absent.total);
        // Not refused, not penalised: the price of an ordinary band, below the heaviest.
        expect([...byWeight.values()]).toContain(absent.total);
        expect(absent.total).toBeLessThan(byWeight.get(40) ?? 0);
      });

      it('a shipment carries its id, external order id, quote id, status, publicTrackingUrl and tracking code', async () => {
        const h = await startHarness(profile);
        const externalOrderId = nextOrderId();
        const quote = await h.client.createQuote(quoteRequest({ payment_mode: PaymentMode.cashOnDelivery }));
        const shipment = await h.client.createShipment({
          quote_id: quote.quoteId,
          external_order_id: externalOrderId,
          orderAmountXof: 24000,
        });
        expect(shipment).toMatchObject({
          externalOrderId,
          quoteId: quote.quoteId,
          status: S.created,
          orderAmountXof: 24000,
        });
        expect(shipment.publicTrackingUrl).toBe(`${h.emulator.trackingUrl}/t/${shipment.trackingCode}`);
      });

      it('a COD shipment without orderAmountXof is refused (400 and the code the profile gives for validation: the spec shows neither)', async () => {
        const h = await startHarness(profile);
        const cod = await h.client.createQuote(quoteRequest({ payment_mode: PaymentMode.cashOnDelivery }));
        const missing = await failure(
          h.client.createShipment({ quote_id: cod.quoteId, external_order_id: nextOrderId() }),
        );
        expect(missing).toMatchObject({
          kind: 'http',
          status: 400,
          code: code('validation'),
          meaning: 'validation',
          retryable: false,
        });
        const zero = await failure(
          h.client.createShipment({ quote_id: cod.quoteId, external_order_id: nextOrderId(), orderAmountXof: 0 }),
        );
        expect(zero).toMatchObject({ status: 400, retryable: false });
        expect(h.emulator.shipments(ORG_A)).toHaveLength(0);
        // A prepaid shipment needs no amount to collect.
        const prepaid = await h.client.createQuote(quoteRequest());
        await expect(
          h.client.createShipment({ quote_id: prepaid.quoteId, external_order_id: nextOrderId() }),
        ).resolves.toMatchObject({ status: S.created });
      });

      it('a claim carries reason, description, claimant_id, and claimant_type defaulting to seller', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        const claim = await h.client.openDispute(shipment.shipmentId, {
          reason: 'damaged',
          description: 'box crushed',
          claimant_id: 'usr_ops1',
        });
        expect(claim).toMatchObject({
          reason: 'damaged',
          description: 'box crushed',
          claimantId: 'usr_ops1',
          claimantType: 'seller',
          status: 'OPEN',
        });
        expect(claim.shipmentId).toBe(shipment.shipmentId);
        expect(claim.claimId).toMatch(/^clm_/);
      });

      it('the client reads the snake_case spellings too', async () => {
        const h = await startHarness(profile, { responseSpelling: 'snake' });
        const quoteRaw = await rawJson(`${h.emulator.baseUrl}/v1/quotes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [API_KEY_HEADER]: h.keyA },
          body: JSON.stringify(quoteRequest()),
        });
        // The emulator really answers in the profile's snake_case spelling (instead of its first one, when that differs)...
        const expiry = snakeSpelling('quoteExpiry');
        expect(quoteRaw.text).toContain(`"${expiry}"`);
        if (profile.spelling('quoteExpiry') !== expiry)
          expect(quoteRaw.text).not.toContain(`"${profile.spelling('quoteExpiry')}"`);
        // ...and the client reads it.
        const quote = await h.client.createQuote(quoteRequest({ payment_mode: PaymentMode.cashOnDelivery }));
        expect(Date.parse(quote.expiresAt)).toBeGreaterThan(0);
        const shipment = await h.client.createShipment({
          quote_id: quote.quoteId,
          external_order_id: nextOrderId(),
          orderAmountXof: 18000,
        });
        expect(shipment.publicTrackingUrl).toBe(`${h.emulator.trackingUrl}/t/${shipment.trackingCode}`);
        expect(shipment.orderAmountXof).toBe(18000);
        const raw = await rawJson(`${h.emulator.baseUrl}/v1/shipments/${shipment.shipmentId}`, {
          headers: { [API_KEY_HEADER]: h.keyA },
        });
        expect(raw.text).toContain(`"${snakeSpelling('trackingUrl')}"`);
        expect(raw.text).toContain(`"${snakeSpelling('orderAmount')}"`);
      });
    });

    describe('3. States and transitions', () => {
      it('createShipment creates the shipment from the accepted quote, not yet in the assignment queue', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        await h.emulator.advance(COURIER_STEP_MS * 10);
        const after = await h.client.getShipment(shipment.shipmentId);
        expect(after.status).toBe(S.created);
        expect(after.courierId).toBeUndefined();
      });

      it('markReady puts the run in the assignment queue: a courier takes it and follows it to delivery', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        await h.client.markReady(shipment.shipmentId, 'relais');
        await h.emulator.advance(COURIER_STEP_MS);
        const assigned = await h.client.getShipment(shipment.shipmentId);
        expect(assigned.status).toBe(S.assigned);
        await h.emulator.runUntilIdle();
        const delivered = await h.client.getShipment(shipment.shipmentId);
        expect(delivered.statusHistory?.map((e) => e.status)).toEqual([
          S.created,
          S.ready,
          S.assigned,
          S.picked_up,
          S.in_transit,
          S.out_for_delivery,
          S.delivered,
        ]);
      });

      it('a failed delivery comes back to the pickup point', async () => {
        const h = await startHarness(profile, { deliveryOutcome: () => 'fail' });
        const shipment = await newShipment(h.client);
        await h.client.markReady(shipment.shipmentId, 'relais');
        await h.emulator.runUntilIdle();
        const after = await h.client.getShipment(shipment.shipmentId);
        expect(after.statusHistory?.map((e) => e.status).slice(-3)).toEqual([
          S.out_for_delivery,
          S.delivery_failed,
          S.returned,
        ]);
      });

      it("markReady again is harmless, and a cancelled shipment cannot be marked ready (409 and the profile's invalid_state code: not shown by the spec)", async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        await h.client.markReady(shipment.shipmentId, 'relais');
        expect((await h.client.markReady(shipment.shipmentId, 'relais')).status).toBe(S.ready);
        const cancelled = await newShipment(h.client);
        await h.client.cancelShipment(cancelled.shipmentId, { reason: 'customer cancelled', by: 'relais' });
        const refused = await failure(h.client.markReady(cancelled.shipmentId, 'relais'));
        expect(refused).toMatchObject({
          status: 409,
          code: code('invalid_state'),
          meaning: 'invalid_state',
          retryable: false,
        });
      });

      it('cancelShipment is accepted while the parcel has not been picked up', async () => {
        const h = await startHarness(profile);
        const created = await newShipment(h.client);
        expect(
          (await h.client.cancelShipment(created.shipmentId, { reason: 'customer cancelled', by: 'relais' })).status,
        ).toBe(S.cancelled);
        const ready = await newShipment(h.client);
        await h.client.markReady(ready.shipmentId, 'relais');
        expect((await h.client.cancelShipment(ready.shipmentId, { reason: 'out of stock', by: 'relais' })).status).toBe(
          S.cancelled,
        );
        const assigned = await newShipment(h.client);
        await h.client.markReady(assigned.shipmentId, 'relais');
        await advanceUntil(h, assigned.shipmentId, S.assigned);
        expect(
          (await h.client.cancelShipment(assigned.shipmentId, { reason: 'address wrong', by: 'relais' })).status,
        ).toBe(S.cancelled);
        // A cancelled shipment stays cancelled: no courier picks it up later.
        await h.emulator.runUntilIdle();
        expect((await h.client.getShipment(assigned.shipmentId)).status).toBe(S.cancelled);
        // Cancelling twice is harmless.
        expect((await h.client.cancelShipment(created.shipmentId, { reason: 'again', by: 'relais' })).status).toBe(
          S.cancelled,
        );
      });

      it('cancelShipment is refused once the parcel is picked up (409 and the profile\'s cancel_refused code: the spec says only "refused")', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        await h.client.markReady(shipment.shipmentId, 'relais');
        await advanceUntil(h, shipment.shipmentId, S.picked_up);
        const refused = await failure(
          h.client.cancelShipment(shipment.shipmentId, { reason: 'too late', by: 'relais' }),
        );
        expect(refused).toMatchObject({
          kind: 'http',
          status: 409,
          code: code('cancel_refused'),
          meaning: 'cancel_refused',
          retryable: false,
        });
        expect((await h.client.getShipment(shipment.shipmentId)).status).toBe(S.picked_up);
      });

      it('openDispute holds settlement and the claim is listed under data', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client, { cod: true, orderAmountXof: 20000 });
        await h.client.markReady(shipment.shipmentId, 'relais');
        await h.emulator.runUntilIdle();
        expect(await h.client.listShipmentDisputes(shipment.shipmentId)).toEqual([]);
        expect((await h.client.getShipment(shipment.shipmentId)).settlementStatus).not.toBe('HELD');
        const claim = await h.client.openDispute(shipment.shipmentId, {
          reason: 'never delivered',
          description: 'the customer says nobody came',
          claimant_id: 'usr_ops1',
          claimant_type: 'seller',
        });
        expect((await h.client.getShipment(shipment.shipmentId)).settlementStatus).toBe('HELD');
        const listed = await h.client.listShipmentDisputes(shipment.shipmentId);
        expect(listed.map((c) => c.claimId)).toEqual([claim.claimId]);
        const raw = await rawJson(`${h.emulator.baseUrl}/v1/shipments/${shipment.shipmentId}/disputes`, {
          headers: { [API_KEY_HEADER]: h.keyA },
        });
        expect(raw.json).toMatchObject({ data: [{ reason: 'never delivered' }] });
        // Decided, the claim releases the settlement.
        if (!claim.claimId) throw new Error('claim without id');
        h.emulator.decideDispute(claim.claimId, {
          status: 'REJECTED',
          outcome: 'delivery photo and signature on file',
        });
        expect((await h.client.getShipment(shipment.shipmentId)).settlementStatus).not.toBe('HELD');
      });

      it("a settled claim's outcome stays readable", async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        const compensated = await h.client.openDispute(shipment.shipmentId, {
          reason: 'damaged',
          description: 'screen cracked',
          claimant_id: 'usr_ops1',
        });
        const rejected = await h.client.openDispute(shipment.shipmentId, {
          reason: 'lost',
          description: 'one item missing',
          claimant_id: 'usr_ops2',
        });
        if (!compensated.claimId || !rejected.claimId) throw new Error('claims without id');
        h.emulator.decideDispute(compensated.claimId, { status: 'COMPENSATED', outcome: 'refunded 12000 XOF' });
        h.emulator.decideDispute(rejected.claimId, {
          status: 'REJECTED',
          outcome: 'item was not in the sealed parcel at pickup',
        });
        await h.emulator.advance(24 * 60 * 60_000);
        const claims = await h.client.listShipmentDisputes(shipment.shipmentId);
        expect(claims).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              claimId: compensated.claimId,
              status: 'COMPENSATED',
              outcome: 'refunded 12000 XOF',
            }),
            expect.objectContaining({
              claimId: rejected.claimId,
              status: 'REJECTED',
              outcome: 'item was not in the sealed parcel at pickup',
            }),
          ]),
        );
        expect(claims).toHaveLength(2);
      });

      it('the status filter accepts shipment states', async () => {
        const h = await startHarness(profile);
        const waiting = await newShipment(h.client);
        const ready1 = await newShipment(h.client);
        const ready2 = await newShipment(h.client);
        await h.client.markReady(ready1.shipmentId, 'relais');
        await h.client.markReady(ready2.shipmentId, 'relais');
        const ids = (list: WireShipment[]): string[] => list.map((s) => s.shipmentId).sort();
        expect(ids((await h.client.listShipments({ status: S.ready })).shipments)).toEqual(ids([ready1, ready2]));
        expect(ids((await h.client.listShipments({ status: S.created })).shipments)).toEqual([waiting.shipmentId]);
        expect((await h.client.listShipments({ status: S.delivered })).shipments).toEqual([]);
        await h.emulator.runUntilIdle();
        expect(ids((await h.client.listShipments({ status: S.delivered })).shipments)).toEqual(ids([ready1, ready2]));
        const unknown = await failure(h.client.listShipments({ status: 'TELEPORTED' }));
        expect(unknown).toMatchObject({ status: 400, retryable: false });
      });
    });

    describe('4. Endpoints', () => {
      it('getQuote rereads the same quote, so an order funnel can be repeated safely', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        expect(await h.client.getQuote(quote.quoteId)).toEqual(quote);
        const unknown = await failure(h.client.getQuote('qte_doesnotexist'));
        expect(unknown).toMatchObject({ status: 404, retryable: false });
      });

      it("getShipmentByExternalOrder finds the shipment by the client's own reference, and answers undefined when there is none", async () => {
        const h = await startHarness(profile);
        const externalOrderId = nextOrderId();
        const shipment = await newShipment(h.client, { externalOrderId });
        expect((await h.client.getShipmentByExternalOrder(externalOrderId))?.shipmentId).toBe(shipment.shipmentId);
        expect(await h.client.getShipmentByExternalOrder(nextOrderId())).toBeUndefined();
      });

      it('getShipmentByExternalOrder returns the most recent shipment when a client bug made two', async () => {
        const h = await startHarness(profile);
        const externalOrderId = nextOrderId();
        await newShipment(h.client, { externalOrderId });
        const second = await newShipment(h.client, { externalOrderId });
        expect((await h.client.getShipmentByExternalOrder(externalOrderId))?.shipmentId).toBe(second.shipmentId);
      });

      it('listShipmentDisputes answers an empty list when there is no dispute', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        expect(await h.client.listShipmentDisputes(shipment.shipmentId)).toEqual([]);
      });

      it('trackByCode is public and shows no personal data', async () => {
        const h = await startHarness(profile, { trackingPort: 0 });
        expect(h.emulator.trackingUrl).not.toBe(h.emulator.baseUrl);
        const externalOrderId = nextOrderId();
        const quote = await h.client.createQuote(
          quoteRequest({
            payment_mode: PaymentMode.cashOnDelivery,
            pickup: { city: 'Plateau', address: 'Boutique Awa, 7 rue Carnot' },
            dropoff: { city: 'Almadies', address: 'Villa Moussa Ndiaye, lot 42' },
          }),
        );
        const shipment = await h.client.createShipment({
          quote_id: quote.quoteId,
          external_order_id: externalOrderId,
          orderAmountXof: 37500,
        });
        await h.client.markReady(shipment.shipmentId, 'Awa Diop (shop operator)');
        await h.emulator.advance(COURIER_STEP_MS);
        const code = shipment.trackingCode ?? '';
        const view = await h.client.trackByCode(code);
        expect(view).toMatchObject({ trackingCode: code, status: S.assigned });
        expect(view.events.map((e) => e.status)).toEqual([S.created, S.ready, S.assigned]);
        // Public: no key was sent (the emulator saw no organisation), and it answered on the tracking host.
        const trackCalls = h.emulator.calls().filter((c) => c.operation === 'trackByCode');
        expect(trackCalls).toHaveLength(1);
        expect(trackCalls[0]?.orgId).toBeUndefined();
        // No personal data, no amounts, no internal references, in the JSON view nor on the public page.
        const raw = await rawJson(`${h.emulator.trackingUrl}/v1/tracking/${code}`);
        const page = await fetch(shipment.publicTrackingUrl ?? '');
        expect(page.status).toBe(200);
        const pageText = await page.text();
        for (const text of [raw.text, pageText]) {
          for (const secret of [
            'Boutique Awa',
            'Villa Moussa',
            'Moussa Ndiaye',
            'Awa Diop',
            externalOrderId,
            '37500',
            shipment.shipmentId,
            quote.quoteId,
          ]) {
            expect(text).not.toContain(secret);
          }
        }
        expect(raw.json).not.toHaveProperty('external_order_id');
        const unknown = await failure(h.client.trackByCode('ZZZZZZZZZZ'));
        expect(unknown).toMatchObject({ status: 404, retryable: false });
      });

      it('simulatePrice is public and indicative', async () => {
        const h = await startHarness(profile, { trackingPort: 0 });
        const before = h.emulator.shipments().length;
        const simulation = await h.client.simulatePrice({
          pickup_city: 'Plateau',
          dropoff_city: 'Almadies',
          weight_kg: 2,
        });
        expect(simulation.currency).toBe('XOF');
        expect(Number.isSafeInteger(simulation.total)).toBe(true);
        expect(simulation.total).toBeGreaterThan(0);
        // Same neighbourhood rules as a quote: a city name costs the fallback.
        const byCity = await h.client.simulatePrice({ pickup_city: 'Plateau', dropoff_city: 'Dakar' });
        expect(byCity.total).toBeGreaterThan(simulation.total);
        // Public (no organisation seen), no identifier returned, nothing reserved.
        const calls = h.emulator.calls().filter((c) => c.operation === 'simulatePrice');
        expect(calls.map((c) => c.orgId)).toEqual([undefined, undefined]);
        const raw = await rawJson(`${h.emulator.trackingUrl}/v1/tracking/simulate-price`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ pickup_city: 'Plateau', dropoff_city: 'Almadies' }),
        });
        expect(raw.status).toBe(200);
        expect(raw.text).not.toMatch(/qte_|shp_|_id"/);
        expect(h.emulator.shipments()).toHaveLength(before);
      });
    });

    describe('5. Authentication', () => {
      it('a pk_test_ key is refused with SANDBOX_KEY_NOT_SUPPORTED', async () => {
        const h = await startHarness(profile);
        const sandboxKey = `pk_test_${randomBytes(16).toString('hex')}`;
        // The client refuses it at once, saying why, without a single call...
        let thrown: unknown;
        try {
          h.newClient(sandboxKey);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(DispatchConfigError);
        // A retry is refused the same way until the key changes: a job stops at once.
        expect(isPermanent(thrown)).toBe(true);
        expect((thrown as Error).message).toContain('SANDBOX_KEY_NOT_SUPPORTED');
        expect((thrown as Error).message).not.toContain(sandboxKey);
        expect(h.emulator.calls()).toHaveLength(0);
        // ...because the service would answer 403 SANDBOX_KEY_NOT_SUPPORTED anyway.
        const raw = await rawJson(`${h.emulator.baseUrl}/v1/shipments`, { headers: { [API_KEY_HEADER]: sandboxKey } });
        expect(raw.status).toBe(403);
        expect(profile.readErrorBody(raw.json).code).toBe(code('sandbox_key'));
      });

      it("an unknown key is refused with 401, and a retry cannot help (status and code are the profile's: not shown by the spec)", async () => {
        const h = await startHarness(profile);
        const stranger = h.newClient(liveKey());
        const error = await failure(stranger.listShipments());
        expect(error).toMatchObject({
          kind: 'http',
          status: 401,
          code: code('unauthorized'),
          meaning: 'unauthorized',
          retryable: false,
        });
      });

      it("the tenant is derived from the key: another organisation's shipment is not found", async () => {
        const h = await startHarness(profile);
        const externalOrderId = nextOrderId();
        const mine = await newShipment(h.client, { externalOrderId });
        const theirs = await newShipment(h.other);
        const notFound = { kind: 'http', status: 404, retryable: false };
        expect(await failure(h.other.getShipment(mine.shipmentId))).toMatchObject(notFound);
        expect(await h.other.getShipmentByExternalOrder(externalOrderId)).toBeUndefined();
        expect(await failure(h.other.markReady(mine.shipmentId, 'intruder'))).toMatchObject(notFound);
        expect(await failure(h.other.cancelShipment(mine.shipmentId, { reason: 'x', by: 'intruder' }))).toMatchObject(
          notFound,
        );
        expect(
          await failure(h.other.openDispute(mine.shipmentId, { reason: 'x', description: 'x', claimant_id: 'usr_x' })),
        ).toMatchObject(notFound);
        expect(await failure(h.other.listShipmentDisputes(mine.shipmentId))).toMatchObject(notFound);
        expect((await h.other.listShipments()).shipments.map((s) => s.shipmentId)).toEqual([theirs.shipmentId]);
        expect((await h.client.listShipments()).shipments.map((s) => s.shipmentId)).toEqual([mine.shipmentId]);
        // Nothing the intruder tried changed the shipment.
        expect((await h.client.getShipment(mine.shipmentId)).status).toBe(S.created);
        // The same external order id in another organisation is another shipment.
        const sameRef = await newShipment(h.other, { externalOrderId });
        expect((await h.client.getShipmentByExternalOrder(externalOrderId))?.shipmentId).toBe(mine.shipmentId);
        expect((await h.other.getShipmentByExternalOrder(externalOrderId))?.shipmentId).toBe(sameRef.shipmentId);
      });

      it('the key never appears in what the client logs or throws', async () => {
        const lines: string[] = [];
        const h = await startHarness(profile);
        const client = h.newClient(h.keyA, { logLines: lines, timeoutMs: 2_000 });
        const shipment = await newShipment(client, { cod: true, orderAmountXof: 9000 });
        await client.markReady(shipment.shipmentId, 'relais');
        h.emulator.faults.add({ operation: 'getShipment', times: 1, fault: { kind: 'status', status: 503 } });
        h.emulator.faults.add({ operation: 'listShipments', times: 1, fault: { kind: 'reset' } });
        const errors = [
          await failure(client.getShipment(shipment.shipmentId)),
          await failure(client.listShipments()),
          await failure(client.cancelShipment('shp_unknown', { reason: 'x', by: 'relais' })),
        ];
        expect(lines.length).toBeGreaterThan(3);
        for (const error of errors) {
          for (const text of [String(error), JSON.stringify(error), error.stack ?? ''])
            expect(text).not.toContain(h.keyA);
        }
        for (const line of lines) expect(line).not.toContain(h.keyA);
        expect(JSON.stringify(client)).not.toContain(h.keyA);
      });
    });

    describe('6. Events', () => {
      it('the service notifies each stage by webhook', async () => {
        const receiver = await startWebhookReceiver(profile);
        const secret = randomBytes(24).toString('hex');
        const h = await startHarness(profile, {}, { webhookUrl: receiver.url, webhookSecret: secret });
        const shipment = await newShipment(h.client);
        await h.client.markReady(shipment.shipmentId, 'relais');
        await h.emulator.runUntilIdle();
        const final = await h.client.getShipment(shipment.shipmentId);
        expect(final.status).toBe(S.delivered);
        const eventName = profile.document.webhook.event;
        const events = receiver.received.map((delivery) => {
          // Each delivery is signed with the organisation's secret over the raw body, under the profile's header.
          expect(delivery.signature).toBe(profile.sign(delivery.body, secret));
          expect(profile.verify(Buffer.from(delivery.body), delivery.signature, secret)).toBe(true);
          const body = JSON.parse(delivery.body) as unknown;
          if (eventName) expect(getPath(body, eventName.path)).toBe(eventName.statusChanged);
          return profile.webhookReference(body);
        });
        expect(events.length).toBeGreaterThan(0);
        for (const event of events) {
          expect(event).toMatchObject({ shipmentId: shipment.shipmentId, externalOrderId: shipment.externalOrderId });
        }
        // Every stage after creation was notified, in order.
        const stages = (final.statusHistory ?? []).map((e) => e.status).filter((s) => s !== S.created);
        expect(events.map((e) => e.state).filter((s) => s !== S.created)).toEqual(stages);
        // A forged signature would not match.
        const first = receiver.received[0];
        expect(
          profile.verify(Buffer.from(first?.body ?? ''), profile.sign(first?.body ?? '', 'wrong-secret'), secret),
        ).toBe(false);
        expect(profile.sign(first?.body ?? '', 'wrong-secret')).not.toBe(first?.signature);
      });

      it('a webhook the receiver refuses is delivered again later', async () => {
        const receiver = await startWebhookReceiver(profile);
        const secret = randomBytes(24).toString('hex');
        const h = await startHarness(profile, {}, { webhookUrl: receiver.url, webhookSecret: secret });
        receiver.answer.status = 500;
        const shipment = await newShipment(h.client);
        await h.client.markReady(shipment.shipmentId, 'relais');
        // Less than a courier step: only the READY notification is due, and the receiver refuses it.
        await h.emulator.advance(500);
        expect(receiver.received.length).toBeGreaterThan(0);
        receiver.answer.status = 200;
        await h.emulator.advance(30_000);
        const readyDeliveries = receiver.received.filter(
          (d) => profile.webhookReference(JSON.parse(d.body)).state === S.ready,
        );
        expect(readyDeliveries.length).toBeGreaterThanOrEqual(2);
        expect(h.emulator.webhookDeliveries().some((d) => d.status === 200 && d.attempt > 1)).toBe(true);
      });
    });

    describe('7. Errors', () => {
      it('getQuote answers 404 once the quote has expired', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        await h.emulator.advance(QUOTE_TTL_MS + 1_000);
        const error = await failure(h.client.getQuote(quote.quoteId));
        expect(error).toMatchObject({ kind: 'http', status: 404, retryable: false, operation: 'getQuote' });
      });

      it('createShipment refuses a stale quote (409 and the profile\'s quote_expired code: the spec says only "refused")', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        await h.emulator.advance(QUOTE_TTL_MS + 1_000);
        const error = await failure(
          h.client.createShipment({ quote_id: quote.quoteId, external_order_id: nextOrderId() }),
        );
        expect(error).toMatchObject({
          kind: 'http',
          status: 409,
          code: code('quote_expired'),
          meaning: 'quote_expired',
          retryable: false,
        });
        expect(h.emulator.shipments(ORG_A)).toHaveLength(0);
      });

      it('an invalid request is a 400 that a retry cannot fix, never a 500', async () => {
        const h = await startHarness(profile);
        const error = await failure(h.client.createQuote(quoteRequest({ parcel: { weight_kg: 500 } })));
        expect(error).toMatchObject({ kind: 'http', status: 400, retryable: false });
        const malformed = await rawJson(`${h.emulator.baseUrl}/v1/quotes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [API_KEY_HEADER]: h.keyA },
          body: '{"pickup": ',
        });
        expect(malformed.status).toBe(400);
      });
    });

    describe('7. Errors: faults reach the caller as errors that say whether a retry can help', () => {
      it('a 5xx is a retryable http error, and nothing was created', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        h.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'status', status: 503 } });
        const error = await failure(
          h.client.createShipment({ quote_id: quote.quoteId, external_order_id: nextOrderId() }),
        );
        expect(error).toMatchObject({ kind: 'http', status: 503, retryable: true, operation: 'createShipment' });
        expect(h.emulator.shipments(ORG_A)).toHaveLength(0);
      });

      it('a 429 is retryable and carries Retry-After as retryAfterMs', async () => {
        const h = await startHarness(profile);
        h.emulator.faults.add({
          operation: 'listShipments',
          times: 1,
          fault: { kind: 'rate_limit', retryAfterSeconds: 12 },
        });
        const error = await failure(h.client.listShipments());
        expect(error).toMatchObject({ kind: 'http', status: 429, retryable: true, retryAfterMs: 12_000 });
        await expect(h.client.listShipments()).resolves.toMatchObject({ shipments: [] });
      });

      it('a call left without an answer times out as retryable', async () => {
        const h = await startHarness(profile);
        h.emulator.faults.add({ operation: 'getShipment', times: 1, fault: { kind: 'timeout' } });
        const shipment = await newShipment(h.client);
        const started = Date.now();
        const error = await failure(h.client.getShipment(shipment.shipmentId, { timeoutMs: 200 }));
        expect(error).toMatchObject({ kind: 'timeout', retryable: true });
        expect(Date.now() - started).toBeLessThan(3_000);
        await expect(h.client.getShipment(shipment.shipmentId)).resolves.toMatchObject({ status: S.created });
      });

      it('a reset connection is a retryable network error with no side effect', async () => {
        const h = await startHarness(profile);
        const shipment = await newShipment(h.client);
        h.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'reset' } });
        const error = await failure(h.client.markReady(shipment.shipmentId, 'relais'));
        expect(error).toMatchObject({ kind: 'network', retryable: true, operation: 'markReady' });
        expect((await h.client.getShipment(shipment.shipmentId)).status).toBe(S.created);
      });

      it('an answer slower than usual but within the budget is read normally', async () => {
        const h = await startHarness(profile);
        h.emulator.faults.add({ operation: 'createQuote', times: 1, fault: { kind: 'latency', ms: 150 } });
        await expect(h.client.createQuote(quoteRequest())).resolves.toMatchObject({ currency: 'XOF' });
      });

      it('commit then drop leaves a shipment findable by external order id', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        const externalOrderId = nextOrderId();
        h.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'commit_then_drop' } });
        const error = await failure(
          h.client.createShipment({ quote_id: quote.quoteId, external_order_id: externalOrderId }),
        );
        expect(error).toMatchObject({ kind: 'network', retryable: true });
        // The network error does not say whether the write happened: look it up before creating again.
        const found = await h.client.getShipmentByExternalOrder(externalOrderId);
        expect(found?.externalOrderId).toBe(externalOrderId);
        expect(h.emulator.shipments(ORG_A)).toHaveLength(1);
      });
    });

    describe('8. Limits', () => {
      it('listShipments pages with next_cursor, default 20, maximum 100', async () => {
        const h = await startHarness(profile);
        const created: string[] = [];
        const quote = async (): Promise<string> => (await h.client.createQuote(quoteRequest())).quoteId;
        for (let i = 0; i < LIST_MAX_LIMIT + 5; i += 1) {
          created.push(
            (await h.client.createShipment({ quote_id: await quote(), external_order_id: nextOrderId() })).shipmentId,
          );
        }
        const firstPage = await h.client.listShipments();
        expect(firstPage.shipments).toHaveLength(LIST_DEFAULT_LIMIT);
        expect(firstPage.nextCursor).toBeTruthy();
        const second = await h.client.listShipments({ cursor: firstPage.nextCursor ?? '' });
        expect(second.shipments.map((s) => s.shipmentId)).toEqual(
          created.slice(LIST_DEFAULT_LIMIT, 2 * LIST_DEFAULT_LIMIT),
        );
        const biggest = await h.client.listShipments({ limit: LIST_MAX_LIMIT });
        expect(biggest.shipments).toHaveLength(LIST_MAX_LIMIT);
        const rest = await h.client.listShipments({ limit: LIST_MAX_LIMIT, cursor: biggest.nextCursor ?? '' });
        expect(rest.shipments).toHaveLength(5);
        expect(rest.nextCursor).toBeUndefined();
        // iterateShipments follows the cursors: every shipment once, in creation order.
        const all: string[] = [];
        for await (const shipment of h.client.iterateShipments({ pageSize: 30 })) all.push(shipment.shipmentId);
        expect(all).toEqual(created);
        // Over the maximum: the client refuses before calling, and the service refuses too.
        expect(() => h.client.listShipments({ limit: LIST_MAX_LIMIT + 1 })).toThrow(RangeError);
        const raw = await rawJson(`${h.emulator.baseUrl}/v1/shipments?limit=${LIST_MAX_LIMIT + 1}`, {
          headers: { [API_KEY_HEADER]: h.keyA },
        });
        expect(raw.status).toBe(400);
      });

      it('the public tracking code has 10 characters', async () => {
        const h = await startHarness(profile);
        for (let i = 0; i < 5; i += 1) {
          const shipment = await newShipment(h.client);
          expect(shipment.trackingCode).toHaveLength(TRACKING_CODE_LENGTH);
          expect(shipment.trackingCode).toMatch(/^[A-Z0-9]{10}$/);
          expect((await h.client.trackByCode(shipment.trackingCode ?? '')).trackingCode).toBe(shipment.trackingCode);
        }
      });

      it('a quote is valid until its expiresAt', async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        const untilExpiry = Date.parse(quote.expiresAt) - h.emulator.now().getTime();
        expect(untilExpiry).toBeGreaterThan(0);
        await h.emulator.advance(untilExpiry - 1_000);
        expect((await h.client.getQuote(quote.quoteId)).total).toBe(quote.total);
        await expect(
          h.client.createShipment({ quote_id: quote.quoteId, external_order_id: nextOrderId() }),
        ).resolves.toMatchObject({ status: S.created });
        const later = await h.client.createQuote(quoteRequest());
        await h.emulator.advance(Date.parse(later.expiresAt) - h.emulator.now().getTime() + 1_000);
        expect(await failure(h.client.getQuote(later.quoteId))).toMatchObject({ status: 404 });
      });
    });

    describe('9. Versioning', () => {
      it("every operation is sent with the method and the /v1 path of the spec's table, checked against the spec's own list", async () => {
        const h = await startHarness(profile);
        const quote = await h.client.createQuote(quoteRequest());
        await h.client.getQuote(quote.quoteId);
        const externalOrderId = nextOrderId();
        const shipment = await h.client.createShipment({ quote_id: quote.quoteId, external_order_id: externalOrderId });
        await h.client.getShipment(shipment.shipmentId);
        await h.client.listShipments({ status: S.created, limit: 5 });
        await h.client.getShipmentByExternalOrder(externalOrderId);
        await h.client.openDispute(shipment.shipmentId, { reason: 'damaged', description: 'x', claimant_id: 'usr_1' });
        await h.client.listShipmentDisputes(shipment.shipmentId);
        await h.client.markReady(shipment.shipmentId, 'relais');
        await h.client.cancelShipment(shipment.shipmentId, { reason: 'test', by: 'relais' });
        await h.client.trackByCode(shipment.trackingCode ?? '');
        await h.client.simulatePrice({ pickup_city: 'Plateau', dropoff_city: 'Almadies' });
        // The spec's own table (section 4), written here apart from the client's and the emulator's path lists:
        // each call the client sent must be the spec's method and path for the operation it was made for.
        const SPEC_ROUTES: [string, 'GET' | 'POST', RegExp][] = [
          ['createQuote', 'POST', /^\/v1\/quotes$/],
          ['getQuote', 'GET', /^\/v1\/quotes\/qte_[^/]+$/],
          ['createShipment', 'POST', /^\/v1\/shipments$/],
          ['getShipment', 'GET', /^\/v1\/shipments\/shp_[^/]+$/],
          ['listShipments', 'GET', /^\/v1\/shipments$/],
          ['getShipmentByExternalOrder', 'GET', /^\/v1\/shipments\/by-external-order\/[^/]+$/],
          ['openDispute', 'POST', /^\/v1\/shipments\/shp_[^/]+\/open-dispute$/],
          ['listShipmentDisputes', 'GET', /^\/v1\/shipments\/shp_[^/]+\/disputes$/],
          ['markReady', 'POST', /^\/v1\/shipments\/shp_[^/]+\/mark-ready$/],
          ['cancelShipment', 'POST', /^\/v1\/shipments\/shp_[^/]+\/cancel$/],
          ['trackByCode', 'GET', /^\/v1\/tracking\/[A-Za-z0-9]+$/],
          ['simulatePrice', 'POST', /^\/v1\/tracking\/simulate-price$/],
        ];
        const calls = h.emulator.calls();
        expect(calls.map((c) => c.method)).toEqual(SPEC_ROUTES.map(([, method]) => method));
        calls.forEach((call, i) => expect(call.path, SPEC_ROUTES[i]![0]).toMatch(SPEC_ROUTES[i]![2]));
        expect(new Set(SPEC_ROUTES.map(([operation]) => operation))).toEqual(new Set(DISPATCH_OPERATIONS));
      });
    });
  },
);
