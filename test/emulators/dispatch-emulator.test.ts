/**
 * The dispatch emulator's own behaviour, through real HTTP with plain fetch (no client library):
 * what a developer pointing any HTTP client at it would see. The client's conformance suite lives in
 * test/dispatch/.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultWireProfile, loadWireProfile } from '../../src/adapters/dispatch-api/profile.js';
import { API_KEY_HEADER } from '../../src/adapters/dispatch-api/wire.js';
import {
  ErrorCode,
  WEBHOOK_SIGNATURE_HEADER,
  COD_FEE_XOF,
  FALLBACK_TARIFF_XOF,
  ZONE_TARIFF_XOF,
  loadEmulatorConfig,
  parseEmulatorConfig,
  startDispatchEmulator,
  type DispatchEmulator,
  type DispatchEmulatorOptions,
} from '@relais/emulators/dispatch';
import { parseCsvRecords } from '@relais/emulators/dispatch/csv';
import { createLogger } from '../../src/log.js';

const STEP_MS = 60_000;
const QUOTE_TTL_MS = 15 * 60_000;

interface QuoteBody {
  quote_id: string;
  expiresAt?: string;
  expires_at?: string;
  total: number;
  currency: string;
  breakdown: { customer: number; courier: number; platform: number; cod_fee?: number };
  pickup_zone: string;
  dropoff_zone: string;
  pricing_basis: string;
  distance_km?: number;
}
interface ShipmentBody {
  shipment_id: string;
  external_order_id: string;
  status: string;
  tracking_code: string;
  publicTrackingUrl?: string;
  public_tracking_url?: string;
  orderAmountXof?: number | null;
  order_amount_xof?: number | null;
  courier_id?: string;
  settlement_status: string;
  status_history: { status: string; at: string; by?: string }[];
}
interface ClaimBody {
  claim_id: string;
  status: string;
  claimant_type: string;
  outcome?: string;
}
interface ErrorBody {
  code: string;
  message: string;
}
interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

const liveKey = () => `pk_live_${randomBytes(16).toString('hex')}`;
const ORG_A = 'org_dakar_mode';
const ORG_B = 'org_abidjan_shop';
const ORG_LIST = 'org_lister';
const keyA = liveKey();
const keyB = liveKey();
const keyList = liveKey();

const PLATEAU = { city: 'Plateau', address: '14 avenue Léopold Sédar Senghor' };
const ALMADIES = { city: 'Almadies', address: 'Route des Almadies, villa 12' };

const logLines: string[] = [];
let emu: DispatchEmulator;
const extraEmulators: DispatchEmulator[] = [];
const extraServers: Server[] = [];

async function start(options: Partial<DispatchEmulatorOptions> = {}): Promise<DispatchEmulator> {
  const emulator = await startDispatchEmulator({
    organisations: [
      { id: ORG_A, name: 'Dakar Mode', apiKeys: [keyA] },
      { id: ORG_B, name: 'Abidjan Shop', apiKeys: [keyB] },
      { id: ORG_LIST, name: 'Lister', apiKeys: [keyList] },
    ],
    courierStepMs: STEP_MS,
    quoteTtlMs: QUOTE_TTL_MS,
    ...options,
  });
  extraEmulators.push(emulator);
  return emulator;
}

beforeAll(async () => {
  emu = await startDispatchEmulator({
    organisations: [
      { id: ORG_A, name: 'Dakar Mode', apiKeys: [keyA] },
      { id: ORG_B, name: 'Abidjan Shop', apiKeys: [keyB] },
      { id: ORG_LIST, name: 'Lister', apiKeys: [keyList] },
    ],
    courierStepMs: STEP_MS,
    quoteTtlMs: QUOTE_TTL_MS,
    logger: createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } }),
  });
});

afterEach(async () => {
  emu.faults.clear();
  emu.setOrganisationWebhook(ORG_A, undefined);
  await Promise.all(extraEmulators.splice(0).map((e) => e.close()));
  await Promise.all(
    extraServers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

afterAll(async () => {
  await emu.close();
});

async function call<T = ErrorBody>(
  url: string,
  init: {
    method?: string;
    key?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers[API_KEY_HEADER] = init.key;
  const rawBody = init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  if (rawBody !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? (rawBody === undefined ? 'GET' : 'POST'),
    headers,
    ...(rawBody === undefined ? {} : { body: rawBody }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body: body as T, headers: response.headers, text };
}

function quoteRequest(overrides: Record<string, unknown> = {}) {
  return { pickup: PLATEAU, dropoff: ALMADIES, parcel: { weight_kg: 2 }, ...overrides };
}

async function createQuote(e: DispatchEmulator, key: string, body: unknown = quoteRequest()): Promise<QuoteBody> {
  const answer = await call<QuoteBody>(`${e.baseUrl}/v1/quotes`, { key, body });
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

async function priceOf(
  pickupCity: string,
  dropoffCity: string,
  extra: Record<string, unknown> = {},
): Promise<QuoteBody> {
  return createQuote(emu, keyA, {
    pickup: { city: pickupCity, address: 'a' },
    dropoff: { city: dropoffCity, address: 'b' },
    ...extra,
  });
}

let orderSeq = 0;
async function newShipment(
  e: DispatchEmulator,
  key: string,
  options: { cod?: boolean; amount?: number; externalOrderId?: string } = {},
): Promise<ShipmentBody> {
  const quote = await createQuote(e, key, quoteRequest(options.cod ? { payment_mode: 'cash_on_delivery' } : {}));
  const answer = await call<ShipmentBody>(`${e.baseUrl}/v1/shipments`, {
    key,
    body: {
      quote_id: quote.quote_id,
      external_order_id: options.externalOrderId ?? `test-shop:${++orderSeq}`,
      ...(options.amount === undefined ? {} : { orderAmountXof: options.amount }),
    },
  });
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

async function getShipment(e: DispatchEmulator, key: string, id: string): Promise<Answer<ShipmentBody>> {
  return call<ShipmentBody>(`${e.baseUrl}/v1/shipments/${id}`, { key });
}

async function markReady(e: DispatchEmulator, key: string, id: string, by = 'Awa Diop'): Promise<Answer<ShipmentBody>> {
  return call<ShipmentBody>(`${e.baseUrl}/v1/shipments/${id}/mark-ready`, { key, body: { by } });
}

function expectError(answer: Answer<unknown>, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/application\/json/);
  expect(answer.body).toMatchObject({ code, message: expect.any(String) });
}

/** A webhook receiver on 127.0.0.1 that answers the statuses queued in `answers` (then 200). */
async function startReceiver(answers: number[] = []) {
  const received: { body: string; signature?: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const signature = req.headers[WEBHOOK_SIGNATURE_HEADER.toLowerCase()];
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        ...(typeof signature === 'string' ? { signature } : {}),
      });
      res.statusCode = answers.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  extraServers.push(server);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}/hooks/dispatch`, received };
}

describe('authentication and tenants', () => {
  it("refuses a request without a key, and one with an unknown key, with 401 UNAUTHORIZED (the default profile's status and code; the spec shows none)", async () => {
    expectError(await call(`${emu.baseUrl}/v1/shipments`), 401, ErrorCode.UNAUTHORIZED);
    const stranger = liveKey();
    const answer = await call(`${emu.baseUrl}/v1/shipments`, { key: stranger });
    expectError(answer, 401, ErrorCode.UNAUTHORIZED);
    expect(answer.text).not.toContain(stranger);
  });

  it('refuses any pk_test_ key with 403 SANDBOX_KEY_NOT_SUPPORTED, even one nobody issued', async () => {
    const sandbox = `pk_test_${randomBytes(16).toString('hex')}`;
    const answer = await call(`${emu.baseUrl}/v1/quotes`, { key: sandbox, body: quoteRequest() });
    expectError(answer, 403, ErrorCode.SANDBOX_KEY_NOT_SUPPORTED);
    expect(answer.text).not.toContain(sandbox);
  });

  it('never writes a key into its logs', async () => {
    const sandbox = `pk_test_${randomBytes(16).toString('hex')}`;
    await call(`${emu.baseUrl}/v1/shipments`, { key: sandbox });
    await call(`${emu.baseUrl}/v1/shipments`, { key: keyA });
    expect(logLines.some((l) => l.includes('listShipments'))).toBe(true);
    const all = logLines.join('\n');
    for (const key of [sandbox, keyA, keyB]) expect(all).not.toContain(key);
  });

  it("hides one organisation's shipments and quotes from another (404, never 403; codes SHIPMENT_NOT_FOUND and QUOTE_NOT_FOUND are the default profile's, not the spec's)", async () => {
    const shipment = await newShipment(emu, keyA, { externalOrderId: 'dakar-mode:isolated-1' });
    expectError(await getShipment(emu, keyB, shipment.shipment_id), 404, ErrorCode.SHIPMENT_NOT_FOUND);
    expectError(
      await call(`${emu.baseUrl}/v1/shipments/by-external-order/dakar-mode%3Aisolated-1`, { key: keyB }),
      404,
      ErrorCode.SHIPMENT_NOT_FOUND,
    );
    expectError(await markReady(emu, keyB, shipment.shipment_id), 404, ErrorCode.SHIPMENT_NOT_FOUND);
    const quote = await createQuote(emu, keyA);
    expectError(
      await call(`${emu.baseUrl}/v1/quotes/${quote.quote_id}`, { key: keyB }),
      404,
      ErrorCode.QUOTE_NOT_FOUND,
    );
    const listB = await call<{ shipments: ShipmentBody[] }>(`${emu.baseUrl}/v1/shipments?limit=100`, { key: keyB });
    expect(listB.body.shipments.map((s) => s.shipment_id)).not.toContain(shipment.shipment_id);
    expect((await getShipment(emu, keyA, shipment.shipment_id)).status).toBe(200);
  });
});

describe('input validation', () => {
  it("answers malformed JSON with 400 MALFORMED_JSON, not 500 (the default profile's code; the spec shows none)", async () => {
    const answer = await call(`${emu.baseUrl}/v1/quotes`, { key: keyA, rawBody: '{"pickup": {"city": "Plateau",' });
    expectError(answer, 400, ErrorCode.MALFORMED_JSON);
    expect(emu.calls().at(-1)).toMatchObject({ operation: 'createQuote', status: 400 });
  });

  it("answers wrong types and out-of-range values with 400 VALIDATION_ERROR (the default profile's code; the spec shows none)", async () => {
    const quoteUrl = `${emu.baseUrl}/v1/quotes`;
    expectError(
      await call(quoteUrl, { key: keyA, body: quoteRequest({ pickup: { city: 42, address: 'x' } }) }),
      400,
      ErrorCode.VALIDATION_ERROR,
    );
    expectError(await call(quoteUrl, { key: keyA, body: [] }), 400, ErrorCode.VALIDATION_ERROR);
    expectError(
      await call(quoteUrl, { key: keyA, body: quoteRequest({ payment_mode: 'barter' }) }),
      400,
      ErrorCode.VALIDATION_ERROR,
    );
    const quote = await createQuote(emu, keyA);
    for (const amount of ['15000', 15000.5, -1]) {
      const answer = await call(`${emu.baseUrl}/v1/shipments`, {
        key: keyA,
        body: { quote_id: quote.quote_id, external_order_id: 'x:1', orderAmountXof: amount },
      });
      expectError(answer, 400, ErrorCode.VALIDATION_ERROR);
      expect(answer.body.message).toContain('orderAmountXof');
    }
  });

  it('refuses a body over 100 kB with 413 and a JSON error', async () => {
    const answer = await call(`${emu.baseUrl}/v1/quotes`, {
      key: keyA,
      body: quoteRequest({ pickup: { city: 'Plateau', address: 'x'.repeat(120_000) } }),
    });
    expectError(answer, 413, ErrorCode.PAYLOAD_TOO_LARGE);
  });

  it("answers an unknown route with a JSON 404 NOT_FOUND (the default profile's code; the spec shows none)", async () => {
    expectError(await call(`${emu.baseUrl}/v2/quotes`, { key: keyA }), 404, ErrorCode.NOT_FOUND);
  });
});

describe('pricing', () => {
  it('charges a city name, a département, an unknown or empty name the fallback tariff, the highest of all', async () => {
    const farthestZone = Math.max(...Object.values(ZONE_TARIFF_XOF));
    expect(FALLBACK_TARIFF_XOF).toBeGreaterThan(farthestZone);
    const zoned = await priceOf('Plateau', 'Keur Massar'); // Keur Massar is in the farthest Dakar band
    expect(zoned.pricing_basis).toBe('zone');
    for (const cityLike of ['Dakar', 'dakar', 'DKR', 'Pikine', 'Abidjan', 'Lomé', 'Quartier Inconnu', '']) {
      const fallback = await priceOf(cityLike, 'Almadies');
      expect(fallback.pickup_zone, cityLike).toBe('FALLBACK');
      expect(fallback.pricing_basis, cityLike).toBe('fallback');
      expect(fallback.total, cityLike).toBeGreaterThan(zoned.total);
    }
  });

  it('matches neighbourhoods whatever the case, accents, hyphens and alternate names', async () => {
    const reference = await priceOf('Sacré-Cœur', 'Médina');
    expect(reference.pickup_zone).toMatch(/^SN-DAKAR-Z\d$/);
    for (const [pickup, dropoff] of [
      ['sacre coeur', 'MEDINA'],
      ['Sacre  Coeur', 'médina'],
      ['Sacré Coeur', 'Medina'],
    ] as const) {
      const again = await priceOf(pickup, dropoff);
      expect([again.pickup_zone, again.dropoff_zone, again.total]).toEqual([
        reference.pickup_zone,
        reference.dropoff_zone,
        reference.total,
      ]);
    }
    expect((await priceOf('Les Almadies', 'Plateau')).pickup_zone).toBe(
      (await priceOf('Almadies', 'Plateau')).pickup_zone,
    );
  });

  it('reads quoted CSV fields whole, so names from the official lists are zones too', async () => {
    const records = parseCsvRecords(
      'country,city,name,note\r\nSN,Dakar,"Mermoz-Sacré-Cœur","coords, from ""wiki""\nsecond line"\nSN,Dakar,Ngor,\n',
    );
    expect(records).toEqual([
      { country: 'SN', city: 'Dakar', name: 'Mermoz-Sacré-Cœur', note: 'coords, from "wiki"\nsecond line' },
      { country: 'SN', city: 'Dakar', name: 'Ngor', note: '' },
    ]);
    // "Unité 12" (Parcelles Assainies) exists only in official-lists.csv, which quotes its notes.
    expect((await priceOf('Unité 12', 'Plateau')).pickup_zone).toMatch(/^SN-DAKAR-Z\d$/);
    expect((await priceOf('Mermoz Sacre Coeur', 'Plateau')).pickup_zone).toMatch(/^SN-DAKAR-Z\d$/);
  });

  it('prices by real distance when both ends carry coordinates', async () => {
    const byZone = await priceOf('Plateau', 'Almadies');
    const near = await priceOf('Plateau', 'Almadies', {
      pickup: { ...PLATEAU, coords: { lat: 14.6676, lng: -17.4329 } },
      dropoff: { ...ALMADIES, coords: { lat: 14.67, lng: -17.43 } },
    });
    const far = await priceOf('Plateau', 'Almadies', {
      pickup: { ...PLATEAU, coords: { lat: 14.6676, lng: -17.4329 } },
      dropoff: { ...ALMADIES, coords: { lat: 14.7442, lng: -17.5175 } },
    });
    expect(near.pricing_basis).toBe('distance');
    expect(far.distance_km).toBeGreaterThan(10);
    expect(far.total).toBeGreaterThan(near.total);
    expect(near.total).not.toBe(byZone.total);
    // One end only: still the zones.
    const oneEnd = await priceOf('Plateau', 'Almadies', {
      pickup: { ...PLATEAU, coords: { lat: 14.6676, lng: -17.4329 } },
    });
    expect(oneEnd.total).toBe(byZone.total);
  });

  it('charges heavier parcels more, treats an absent weight as a standard parcel and refuses absurd weights', async () => {
    const at = async (weight: unknown) =>
      priceOf('Plateau', 'Almadies', weight === undefined ? {} : { parcel: { weight_kg: weight } });
    const light = await at(0.5);
    const standard = await at(undefined);
    const eight = await at(8);
    const thirty = await at(30);
    expect(light.total).toBeLessThan(standard.total);
    expect(standard.total).toBe((await at(4)).total);
    expect(standard.total).toBeLessThan(eight.total);
    expect(eight.total).toBeLessThan(thirty.total);
    for (const absurd of [-1, 51, 'heavy', {}]) {
      const answer = await call(`${emu.baseUrl}/v1/quotes`, {
        key: keyA,
        body: quoteRequest({ parcel: { weight_kg: absurd } }),
      });
      expectError(answer, 400, ErrorCode.VALIDATION_ERROR);
    }
  });

  it('adds the cash-collection fee to the breakdown, and the parts add up to the total', async () => {
    const prepaid = await priceOf('Plateau', 'Almadies');
    const cod = await priceOf('Plateau', 'Almadies', { payment_mode: 'cash_on_delivery' });
    expect(cod.breakdown.cod_fee).toBe(COD_FEE_XOF);
    expect(cod.total).toBe(prepaid.total + COD_FEE_XOF);
    for (const q of [prepaid, cod]) {
      expect(q.breakdown.courier + q.breakdown.platform + (q.breakdown.cod_fee ?? 0)).toBe(q.total);
      expect(q.breakdown.customer).toBe(q.total);
      expect(Number.isInteger(q.total)).toBe(true);
      expect(q.currency).toBe('XOF');
    }
  });
});

describe('quotes and shipments', () => {
  it('expires a quote on the emulator clock: getQuote 404, createShipment 409 QUOTE_EXPIRED (the default profile\'s status and code; the spec says only "refused")', async () => {
    const e = await start();
    const quote = await createQuote(e, keyA);
    expect(Date.parse(quote.expiresAt ?? '')).toBe(e.now().getTime() + QUOTE_TTL_MS);
    expect((await call(`${e.baseUrl}/v1/quotes/${quote.quote_id}`, { key: keyA })).status).toBe(200);
    await e.advance(QUOTE_TTL_MS);
    expectError(await call(`${e.baseUrl}/v1/quotes/${quote.quote_id}`, { key: keyA }), 404, ErrorCode.QUOTE_NOT_FOUND);
    const create = await call(`${e.baseUrl}/v1/shipments`, {
      key: keyA,
      body: { quote_id: quote.quote_id, external_order_id: 'x:1' },
    });
    expectError(create, 409, ErrorCode.QUOTE_EXPIRED);
    expectError(
      await call(`${e.baseUrl}/v1/shipments`, {
        key: keyA,
        body: { quote_id: 'qte_doesnotexist', external_order_id: 'x:1' },
      }),
      404,
      ErrorCode.QUOTE_NOT_FOUND,
    );
    expect(e.shipments()).toHaveLength(0);
  });

  it('refuses a cash-on-delivery shipment without a positive orderAmountXof, and accepts the snake_case spelling', async () => {
    const quote = await createQuote(emu, keyA, quoteRequest({ payment_mode: 'cash_on_delivery' }));
    for (const amount of [undefined, 0]) {
      const answer = await call(`${emu.baseUrl}/v1/shipments`, {
        key: keyA,
        body: {
          quote_id: quote.quote_id,
          external_order_id: 'cod:1',
          ...(amount === undefined ? {} : { orderAmountXof: amount }),
        },
      });
      expectError(answer, 400, ErrorCode.VALIDATION_ERROR);
    }
    const created = await call<ShipmentBody>(`${emu.baseUrl}/v1/shipments`, {
      key: keyA,
      body: { quote_id: quote.quote_id, external_order_id: 'cod:1', order_amount_xof: 15000 },
    });
    expect(created.status).toBe(201);
    expect(created.body.orderAmountXof).toBe(15000);
  });

  it('lets a duplicate external_order_id through, and finds the most recent by that reference', async () => {
    const first = await newShipment(emu, keyA, { externalOrderId: 'dup-shop:77' });
    const second = await newShipment(emu, keyA, { externalOrderId: 'dup-shop:77' });
    expect(second.shipment_id).not.toBe(first.shipment_id);
    const found = await call<ShipmentBody>(`${emu.baseUrl}/v1/shipments/by-external-order/dup-shop%3A77`, {
      key: keyA,
    });
    expect(found.body.shipment_id).toBe(second.shipment_id);
    expectError(
      await call(`${emu.baseUrl}/v1/shipments/by-external-order/never-seen`, { key: keyA }),
      404,
      ErrorCode.SHIPMENT_NOT_FOUND,
    );
  });

  it('gives opaque prefixed ids and a 10-character tracking code behind the public tracking URL', async () => {
    const shipment = await newShipment(emu, keyA);
    expect(shipment.shipment_id).toMatch(/^shp_[A-Za-z0-9]{20}$/);
    expect(shipment.tracking_code).toMatch(/^[A-HJ-NP-Z2-9]{10}$/);
    expect(shipment.publicTrackingUrl).toBe(`${emu.trackingUrl}/t/${shipment.tracking_code}`);
  });
});

describe('the courier', () => {
  it('never moves a shipment that was not marked ready', async () => {
    const e = await start();
    const shipment = await newShipment(e, keyA);
    await e.advance(48 * 3_600_000);
    await e.runUntilIdle();
    const after = await getShipment(e, keyA, shipment.shipment_id);
    expect(after.body.status).toBe('CREATED');
    expect(after.body.status_history.map((h) => h.status)).toEqual(['CREATED']);
  });

  it('delivers a ready shipment stage by stage, with the whole history dated on the emulator clock', async () => {
    const e = await start();
    const shipment = await newShipment(e, keyA);
    const ready = await markReady(e, keyA, shipment.shipment_id);
    expect(ready.body.status).toBe('READY');
    expect((await markReady(e, keyA, shipment.shipment_id)).body.status).toBe('READY'); // idempotent
    await e.advance(STEP_MS);
    expect((await getShipment(e, keyA, shipment.shipment_id)).body.status).toBe('ASSIGNED');
    await e.runUntilIdle();
    const done = (await getShipment(e, keyA, shipment.shipment_id)).body;
    expect(done.status).toBe('DELIVERED');
    expect(done.courier_id).toMatch(/^drv_/);
    expect(done.settlement_status).toBe('SETTLED');
    expect(done.status_history.map((h) => h.status)).toEqual([
      'CREATED',
      'READY',
      'ASSIGNED',
      'PICKED_UP',
      'IN_TRANSIT',
      'OUT_FOR_DELIVERY',
      'DELIVERED',
    ]);
    const times = done.status_history.map((h) => Date.parse(h.at));
    expect(times.at(-1)! - times[1]!).toBe(5 * STEP_MS);
  });

  it('follows the failed-delivery path when the outcome says so', async () => {
    const e = await start({
      deliveryOutcome: ({ externalOrderId }) => (externalOrderId.endsWith(':fail') ? 'fail' : 'deliver'),
    });
    const failing = await newShipment(e, keyA, { externalOrderId: 'shop:fail' });
    const fine = await newShipment(e, keyA, { externalOrderId: 'shop:ok' });
    await markReady(e, keyA, failing.shipment_id);
    await markReady(e, keyA, fine.shipment_id);
    await e.runUntilIdle();
    const failed = (await getShipment(e, keyA, failing.shipment_id)).body;
    expect(failed.status_history.map((h) => h.status).slice(-3)).toEqual([
      'OUT_FOR_DELIVERY',
      'DELIVERY_FAILED',
      'RETURNED',
    ]);
    expect((await getShipment(e, keyA, fine.shipment_id)).body.status).toBe('DELIVERED');
  });

  it('cancels before pickup and stops the run, refuses to cancel from PICKED_UP on, and refuses markReady once cancelled', async () => {
    const e = await start();
    const cancelUrl = (id: string) => `${e.baseUrl}/v1/shipments/${id}/cancel`;
    const early = await newShipment(e, keyA);
    await markReady(e, keyA, early.shipment_id);
    await e.advance(STEP_MS); // ASSIGNED
    const cancelled = await call<ShipmentBody>(cancelUrl(early.shipment_id), {
      key: keyA,
      body: { reason: 'customer changed mind', by: 'ops' },
    });
    expect(cancelled.body.status).toBe('CANCELLED');
    expect(
      (await call<ShipmentBody>(cancelUrl(early.shipment_id), { key: keyA, body: { reason: 'again', by: 'ops' } }))
        .status,
    ).toBe(200);
    expectError(await markReady(e, keyA, early.shipment_id), 409, ErrorCode.INVALID_STATE);
    expectError(
      await call(cancelUrl(early.shipment_id), { key: keyA, body: { reason: 'x' } }),
      400,
      ErrorCode.VALIDATION_ERROR,
    );

    const late = await newShipment(e, keyA);
    await markReady(e, keyA, late.shipment_id);
    await e.advance(2 * STEP_MS); // ASSIGNED, PICKED_UP
    expect((await getShipment(e, keyA, late.shipment_id)).body.status).toBe('PICKED_UP');
    expectError(
      await call(cancelUrl(late.shipment_id), { key: keyA, body: { reason: 'too late', by: 'ops' } }),
      409,
      ErrorCode.CANCEL_NOT_ALLOWED,
    );

    await e.runUntilIdle();
    expect((await getShipment(e, keyA, early.shipment_id)).body.status).toBe('CANCELLED');
    expect((await getShipment(e, keyA, late.shipment_id)).body.status).toBe('DELIVERED');
  });

  it('moves by itself on the realtime clock and stops its timers on close', async () => {
    const e = await start({ clock: 'realtime', courierStepMs: 15 });
    const shipment = await newShipment(e, keyA);
    await markReady(e, keyA, shipment.shipment_id);
    const deadline = Date.now() + 3_000;
    let status = '';
    while (Date.now() < deadline && status !== 'DELIVERED') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = (await getShipment(e, keyA, shipment.shipment_id)).body.status;
    }
    expect(status).toBe('DELIVERED');
    const second = await newShipment(e, keyA);
    await markReady(e, keyA, second.shipment_id);
    await e.close();
    const frozen = e.shipments().find((s) => s.shipment_id === second.shipment_id)?.status;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(e.shipments().find((s) => s.shipment_id === second.shipment_id)?.status).toBe(frozen);
  });
});

describe('disputes', () => {
  it('lists claims under data, holds settlement while open, and keeps a decided claim with its outcome', async () => {
    const shipment = await newShipment(emu, keyA);
    const disputesUrl = `${emu.baseUrl}/v1/shipments/${shipment.shipment_id}/disputes`;
    expect((await call<{ data: ClaimBody[] }>(disputesUrl, { key: keyA })).body).toEqual({ data: [] });
    const opened = await call<ClaimBody>(`${emu.baseUrl}/v1/shipments/${shipment.shipment_id}/open-dispute`, {
      key: keyA,
      body: { reason: 'damaged', description: 'screen cracked on arrival', claimant_id: 'usr_seller_1' },
    });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({ status: 'OPEN', claimant_type: 'seller' });
    expect(opened.body.claim_id).toMatch(/^clm_/);
    expect((await getShipment(emu, keyA, shipment.shipment_id)).body.settlement_status).toBe('HELD');

    emu.decideDispute(opened.body.claim_id, { status: 'COMPENSATED', outcome: 'refunded 12000 XOF' });
    const listed = await call<{ data: ClaimBody[] }>(disputesUrl, { key: keyA });
    expect(listed.body.data).toEqual([
      expect.objectContaining({ claim_id: opened.body.claim_id, status: 'COMPENSATED', outcome: 'refunded 12000 XOF' }),
    ]);
    expect((await getShipment(emu, keyA, shipment.shipment_id)).body.settlement_status).not.toBe('HELD');
    expectError(await call(disputesUrl, { key: keyB }), 404, ErrorCode.SHIPMENT_NOT_FOUND);
    const incomplete = await call(`${emu.baseUrl}/v1/shipments/${shipment.shipment_id}/open-dispute`, {
      key: keyA,
      body: { reason: 'lost' },
    });
    expectError(incomplete, 400, ErrorCode.VALIDATION_ERROR);
  });
});

describe('listShipments', () => {
  it('pages 20 by default, up to 100, in creation order, following next_cursor to the end', async () => {
    const e = await start();
    const created: string[] = [];
    for (let i = 0; i < 45; i++) created.push((await newShipment(e, keyList)).shipment_id);
    const listUrl = (query: string) => `${e.baseUrl}/v1/shipments${query}`;
    type Page = { shipments: ShipmentBody[]; next_cursor?: string };
    const first = await call<Page>(listUrl(''), { key: keyList });
    expect(first.body.shipments).toHaveLength(20);
    expect(first.body.next_cursor).toEqual(expect.any(String));

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page: Answer<Page> = await call<Page>(
        listUrl(`?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
        { key: keyList },
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.shipments.map((s) => s.shipment_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(created);

    const all = await call<Page>(listUrl('?limit=100'), { key: keyList });
    expect(all.body.shipments).toHaveLength(45);
    expect(all.body.next_cursor).toBeUndefined();
    for (const bad of [
      '?limit=101',
      '?limit=0',
      '?limit=abc',
      '?limit=2.5',
      '?status=LOST',
      '?cursor=garbage',
      '?limit=5&limit=6',
    ]) {
      expectError(await call(listUrl(bad), { key: keyList }), 400, ErrorCode.VALIDATION_ERROR);
    }
    await markReady(e, keyList, created[3]!);
    const ready = await call<Page>(listUrl('?status=READY'), { key: keyList });
    expect(ready.body.shipments.map((s) => s.shipment_id)).toEqual([created[3]]);
  });
});

describe('public operations', () => {
  it('shows a tracking view and page with stages only, no personal data', async () => {
    const e = await start();
    const quote = await createQuote(
      e,
      keyA,
      quoteRequest({
        payment_mode: 'cash_on_delivery',
        dropoff: { city: 'Almadies', address: 'Villa Fatou Ndiaye 12' },
      }),
    );
    const created = await call<ShipmentBody>(`${e.baseUrl}/v1/shipments`, {
      key: keyA,
      body: { quote_id: quote.quote_id, external_order_id: 'dakar-mode:secret-order-991', orderAmountXof: 98765 },
    });
    const shipment = created.body;
    await markReady(e, keyA, shipment.shipment_id, 'Moussa Sarr');
    await e.advance(STEP_MS);
    const view = await call<{ tracking_code: string; status: string; events: { status: string }[] }>(
      `${e.trackingUrl}/v1/tracking/${shipment.tracking_code.toLowerCase()}`,
    );
    expect(view.status).toBe(200);
    expect(view.body.status).toBe('ASSIGNED');
    expect(view.body.events.map((ev) => ev.status)).toEqual(['CREATED', 'READY', 'ASSIGNED']);
    const page = await call(`${e.trackingUrl}/t/${shipment.tracking_code}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    for (const text of [view.text, page.text]) {
      for (const secret of [
        'secret-order-991',
        'Fatou',
        'Moussa',
        '98765',
        shipment.shipment_id,
        ORG_A,
        'Dakar Mode',
      ]) {
        expect(text).not.toContain(secret);
      }
    }
    expectError(await call(`${e.trackingUrl}/v1/tracking/ZZZZZZZZZZ`), 404, ErrorCode.NOT_FOUND);
    expect((await call(`${e.trackingUrl}/t/ZZZZZZZZZZ`)).status).toBe(404);
  });

  it('simulates a price without a key, ignores a key if sent, and returns no identifier', async () => {
    const body = { pickup_city: 'Plateau', dropoff_city: 'Almadies', weight_kg: 2 };
    const simulated = await call<Record<string, unknown>>(`${emu.trackingUrl}/v1/tracking/simulate-price`, { body });
    expect(simulated.status).toBe(200);
    expect(Object.keys(simulated.body).sort()).toEqual(['currency', 'total']);
    expect(simulated.body.total).toBe((await priceOf('Plateau', 'Almadies')).total);
    const withSandboxKey = await call(`${emu.trackingUrl}/v1/tracking/simulate-price`, {
      body,
      key: `pk_test_${randomBytes(4).toString('hex')}`,
    });
    expect(withSandboxKey.status).toBe(200);
    expect(
      (
        await call<{ total: number }>(`${emu.trackingUrl}/v1/tracking/simulate-price`, {
          body: { ...body, pickup_city: 'Dakar' },
        })
      ).body.total,
    ).toBeGreaterThan(simulated.body.total as number);
    expectError(
      await call(`${emu.trackingUrl}/v1/tracking/simulate-price`, { body: { pickup_city: 'Plateau' } }),
      400,
      ErrorCode.VALIDATION_ERROR,
    );
  });

  it('serves public operations only on the tracking port when one is configured', async () => {
    const e = await start({ trackingPort: 0 });
    expect(e.trackingUrl).not.toBe(e.baseUrl);
    const shipment = await newShipment(e, keyA);
    expect(shipment.publicTrackingUrl).toBe(`${e.trackingUrl}/t/${shipment.tracking_code}`);
    expect((await call(`${e.trackingUrl}/v1/tracking/${shipment.tracking_code}`)).status).toBe(200);
    expect((await call(shipment.publicTrackingUrl ?? '')).status).toBe(200);
    const simulate = { pickup_city: 'Plateau', dropoff_city: 'Almadies' };
    expect((await call(`${e.trackingUrl}/v1/tracking/simulate-price`, { body: simulate })).status).toBe(200);
    expectError(await call(`${e.baseUrl}/v1/tracking/${shipment.tracking_code}`), 404, ErrorCode.NOT_FOUND);
    expectError(await call(`${e.baseUrl}/v1/tracking/simulate-price`, { body: simulate }), 404, ErrorCode.NOT_FOUND);
    expectError(
      await getShipment({ ...e, baseUrl: e.trackingUrl }, keyA, shipment.shipment_id),
      404,
      ErrorCode.NOT_FOUND,
    );
  });

  it('answers in snake_case spelling when asked, to prove clients read both', async () => {
    const e = await start({ responseSpelling: 'snake' });
    const quote = await createQuote(e, keyA, quoteRequest({ payment_mode: 'cash_on_delivery' }));
    expect(quote.expires_at).toEqual(expect.any(String));
    expect(quote.expiresAt).toBeUndefined();
    const created = await call<ShipmentBody>(`${e.baseUrl}/v1/shipments`, {
      key: keyA,
      body: { quote_id: quote.quote_id, external_order_id: 'snake:1', orderAmountXof: 5000 },
    });
    expect(created.body.public_tracking_url).toBe(`${e.trackingUrl}/t/${created.body.tracking_code}`);
    expect(created.body.order_amount_xof).toBe(5000);
    expect(created.body.publicTrackingUrl).toBeUndefined();
  });
});

describe('webhooks', () => {
  it('signs each status change with HMAC-SHA256 and retries after the receiver answers 500', async () => {
    const receiver = await startReceiver([500]);
    const secret = randomBytes(24).toString('hex');
    const e = await start();
    e.setOrganisationWebhook(ORG_A, receiver.url, secret);
    const shipment = await newShipment(e, keyA);
    await markReady(e, keyA, shipment.shipment_id);
    await e.advance(0);
    expect(receiver.received).toHaveLength(1);
    expect(e.webhookDeliveries()).toEqual([expect.objectContaining({ orgId: ORG_A, status: 500, attempt: 1 })]);
    await e.advance(999);
    expect(receiver.received).toHaveLength(1); // backoff is 1 s on the emulator clock
    await e.advance(1);
    expect(receiver.received).toHaveLength(2);
    expect(e.webhookDeliveries()[1]).toMatchObject({ status: 200, attempt: 2 });
    for (const delivery of receiver.received) {
      const expected = `sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`;
      expect(delivery.signature).toBe(expected);
      expect(JSON.parse(delivery.body)).toEqual({
        event: 'shipment.status_changed',
        shipment_id: shipment.shipment_id,
        external_order_id: shipment.external_order_id,
        status: 'READY',
        occurred_at: expect.any(String),
      });
    }
    await e.runUntilIdle();
    const statuses = receiver.received.map((d) => (JSON.parse(d.body) as { status: string }).status);
    expect(statuses.slice(2)).toEqual(['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED']);
  });

  it('gives up after five attempts to a receiver that keeps failing', async () => {
    const receiver = await startReceiver([500, 500, 500, 500, 500, 500]);
    const e = await start();
    e.setOrganisationWebhook(ORG_A, receiver.url, 'secret');
    const shipment = await newShipment(e, keyA);
    await call(`${e.baseUrl}/v1/shipments/${shipment.shipment_id}/cancel`, {
      key: keyA,
      body: { reason: 'r', by: 'b' },
    });
    await e.runUntilIdle();
    expect(e.webhookDeliveries().map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5]);
    const times = e.webhookDeliveries().map((d) => Date.parse(d.at));
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual([1000, 2000, 4000, 8000]);
  });
});

describe('fault injection', () => {
  const shipmentsUrl = () => `${emu.baseUrl}/v1/shipments`;

  it('delays the answer by at least the latency asked, then answers the next call with a quote as usual', async () => {
    // Only a lower bound is timed: an upper bound on a loaded 2-core machine is a flaky assertion.
    emu.faults.add({ operation: 'createQuote', times: 1, fault: { kind: 'latency', ms: 120 } });
    const started = performance.now();
    await createQuote(emu, keyA);
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
    const next = await createQuote(emu, keyA);
    expect(next).toBeDefined();
  });

  it('answers an injected 5xx as JSON with no side effect, only for the organisation targeted', async () => {
    const quote = await createQuote(emu, keyA);
    const before = emu.shipments(ORG_A).length;
    emu.faults.add({ operation: 'createShipment', fault: { kind: 'status', status: 503 }, orgId: ORG_A, times: 1 });
    const otherQuote = await createQuote(emu, keyB);
    expect(
      (await call(shipmentsUrl(), { key: keyB, body: { quote_id: otherQuote.quote_id, external_order_id: 'b:1' } }))
        .status,
    ).toBe(201);
    const failed = await call(shipmentsUrl(), {
      key: keyA,
      body: { quote_id: quote.quote_id, external_order_id: 'a:503' },
    });
    expectError(failed, 503, ErrorCode.INTERNAL_ERROR);
    expect(emu.shipments(ORG_A)).toHaveLength(before);
    expect(
      (await call(shipmentsUrl(), { key: keyA, body: { quote_id: quote.quote_id, external_order_id: 'a:503' } }))
        .status,
    ).toBe(201);
  });

  it('rate-limits with 429 and Retry-After, without side effect', async () => {
    const quote = await createQuote(emu, keyA);
    const before = emu.shipments().length;
    emu.faults.add({ operation: '*', times: 1, fault: { kind: 'rate_limit', retryAfterSeconds: 7 } });
    const limited = await call(shipmentsUrl(), {
      key: keyA,
      body: { quote_id: quote.quote_id, external_order_id: 'a:429' },
    });
    expectError(limited, 429, ErrorCode.RATE_LIMITED);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(emu.shipments()).toHaveLength(before);
  });

  it('holds a request forever on timeout, until the client gives up', async () => {
    emu.faults.add({ operation: 'listShipments', times: 1, fault: { kind: 'timeout' } });
    await expect(call(shipmentsUrl(), { key: keyA, signal: AbortSignal.timeout(150) })).rejects.toThrow();
    expect(
      emu
        .calls()
        .filter((c) => c.operation === 'listShipments')
        .at(-1),
    ).toMatchObject({ status: 0, fault: 'timeout' });
    expect((await call(shipmentsUrl(), { key: keyA })).status).toBe(200);
  });

  it('closes promptly while a request is held by the timeout fault', async () => {
    const e = await start();
    e.faults.add({ operation: 'getQuote', fault: { kind: 'timeout' } });
    const held = call(`${e.baseUrl}/v1/quotes/qte_x`, { key: keyA });
    const outcome = held.then(
      () => 'answered',
      () => 'dropped',
    );
    while (!e.calls().some((c) => c.operation === 'getQuote')) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    await e.close();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await outcome).toBe('dropped');
  });

  it('resets the connection without answering and without side effect', async () => {
    const quote = await createQuote(emu, keyA);
    const before = emu.shipments().length;
    emu.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'reset' } });
    await expect(
      call(shipmentsUrl(), { key: keyA, body: { quote_id: quote.quote_id, external_order_id: 'a:reset' } }),
    ).rejects.toThrow();
    expect(emu.shipments()).toHaveLength(before);
  });

  it('commits then drops: the client sees a broken connection but the shipment exists', async () => {
    const quote = await createQuote(emu, keyA);
    emu.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'commit_then_drop' } });
    await expect(
      call(shipmentsUrl(), { key: keyA, body: { quote_id: quote.quote_id, external_order_id: 'a:committed' } }),
    ).rejects.toThrow();
    const found = await call<ShipmentBody>(`${emu.baseUrl}/v1/shipments/by-external-order/a%3Acommitted`, {
      key: keyA,
    });
    expect(found.status).toBe(200);
    expect(found.body.status).toBe('CREATED');
    expect(
      emu
        .calls()
        .filter((c) => c.operation === 'createShipment')
        .at(-1),
    ).toMatchObject({ status: 0, fault: 'commit_then_drop' });
  });

  it('is driven over HTTP too, through the admin endpoints', async () => {
    const e = await start();
    const added = await call(`${e.baseUrl}/_emulator/faults`, {
      body: { rule: { operation: 'getShipment', fault: { kind: 'status', status: 502 } } },
    });
    expect(added.status).toBe(201);
    expectError(
      await call(`${e.baseUrl}/_emulator/faults`, {
        body: { rule: { operation: 'everything', fault: { kind: 'reset' } } },
      }),
      400,
      ErrorCode.VALIDATION_ERROR,
    );
    const shipment = await newShipment(e, keyA);
    expect((await getShipment(e, keyA, shipment.shipment_id)).status).toBe(502);
    expect((await call(`${e.baseUrl}/_emulator/faults`, { method: 'DELETE' })).status).toBe(204);
    expect((await getShipment(e, keyA, shipment.shipment_id)).status).toBe(200);

    await markReady(e, keyA, shipment.shipment_id);
    const advanced = await call<{ now: string }>(`${e.baseUrl}/_emulator/advance`, { body: { ms: STEP_MS } });
    expect(Date.parse(advanced.body.now)).toBe(e.now().getTime());
    const listed = await call<{ shipments: { shipment_id: string; status: string }[] }>(
      `${e.baseUrl}/_emulator/shipments`,
    );
    expect(listed.body.shipments).toEqual([
      expect.objectContaining({ shipment_id: shipment.shipment_id, status: 'ASSIGNED' }),
    ]);
    const calls = await call<{ calls: { operation: string }[] }>(`${e.baseUrl}/_emulator/calls`);
    expect(calls.body.calls.map((c) => c.operation)).not.toContain('unknown');

    const claim = await call<ClaimBody>(`${e.baseUrl}/v1/shipments/${shipment.shipment_id}/open-dispute`, {
      key: keyA,
      body: { reason: 'lost', description: 'never arrived', claimant_id: 'usr_1', claimant_type: 'buyer' },
    });
    const decideUrl = `${e.baseUrl}/_emulator/disputes/${claim.body.claim_id}/decide`;
    const decided = await call<ClaimBody>(decideUrl, { body: { status: 'REJECTED', outcome: 'signature on file' } });
    expect(decided.body).toMatchObject({ status: 'REJECTED', outcome: 'signature on file', claimant_type: 'buyer' });
    expectError(
      await call(decideUrl, { body: { status: 'COMPENSATED', outcome: 'twice' } }),
      409,
      ErrorCode.INVALID_STATE,
    );

    const receiver = await startReceiver();
    const put = await call(`${e.baseUrl}/_emulator/organisations/${ORG_A}/webhook`, {
      method: 'PUT',
      body: { url: receiver.url, secret: 'x' },
    });
    expect(put.status).toBe(204);
    await call(`${e.baseUrl}/_emulator/advance`, { body: { ms: STEP_MS } });
    expect(receiver.received.map((d) => (JSON.parse(d.body) as { status: string }).status)).toEqual(['PICKED_UP']);
  });
});

describe('configuration', () => {
  it('reads organisations from a JSON file with keys taken from the environment, listing every missing variable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dispatch-emu-'));
    try {
      const path = join(dir, 'emulator.json');
      await writeFile(
        path,
        JSON.stringify({
          clock: 'realtime',
          courierStepMs: 2000,
          organisations: [
            {
              id: 'org_demo',
              name: 'Demo',
              apiKeyEnv: 'DEMO_DISPATCH_KEY',
              webhookSecretEnv: 'DEMO_WEBHOOK_SECRET',
              webhookUrl: 'http://127.0.0.1:9/hook',
            },
            { id: 'org_local', name: 'Local', apiKeys: ['pk_live_local_demo'] },
          ],
        }),
      );
      const demoKey = liveKey();
      const options = await loadEmulatorConfig(path, { DEMO_DISPATCH_KEY: demoKey, DEMO_WEBHOOK_SECRET: 's3cret' });
      expect(options.organisations).toEqual([
        {
          id: 'org_demo',
          name: 'Demo',
          apiKeys: [demoKey],
          webhookUrl: 'http://127.0.0.1:9/hook',
          webhookSecret: 's3cret',
        },
        { id: 'org_local', name: 'Local', apiKeys: ['pk_live_local_demo'] },
      ]);
      expect(options.clock).toBe('realtime');
      await expect(loadEmulatorConfig(path, {})).rejects.toThrow(/DEMO_DISPATCH_KEY, DEMO_WEBHOOK_SECRET/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start with a pk_test_ key, without printing it', async () => {
    const sandbox = `pk_test_${randomBytes(8).toString('hex')}`;
    const options = parseEmulatorConfig({ organisations: [{ id: 'o', name: 'O', apiKeys: [sandbox] }] }, {});
    const failure = startDispatchEmulator(options);
    await expect(failure).rejects.toThrow(/pk_test_/);
    await expect(failure).rejects.not.toThrow(sandbox);
  });
});

describe('speaking another wire profile', () => {
  const OTHER_DIALECT_FILE = 'test/fixtures/dispatch-profiles/other-dialect.json';
  const other = loadWireProfile(OTHER_DIALECT_FILE);
  interface DialectShipment {
    shipment_id: string;
    external_order_id: string;
    status: string;
    tracking_code: string;
    public_tracking_url?: string;
    cod_amount_xof?: number | null;
    events?: { status: string; at: string; by?: string }[];
  }
  interface DialectError {
    error: { type: string; detail: string };
  }
  const startOther = (options: Partial<DispatchEmulatorOptions> = {}) => start({ profile: other, ...options });

  function expectDialectError(answer: Answer<unknown>, status: number, type: string): void {
    expect(answer.status, answer.text).toBe(status);
    expect(answer.headers.get('content-type')).toMatch(/application\/json/);
    expect(answer.body).toEqual({ error: { type, detail: expect.any(String) } });
  }

  async function otherShipment(
    e: DispatchEmulator,
    options: { cod?: boolean; amount?: number } = {},
  ): Promise<DialectShipment> {
    const quote = await call<{ quote_id: string }>(`${e.baseUrl}/v1/quotes`, {
      key: keyA,
      body: quoteRequest(options.cod ? { payment_mode: 'cash_on_delivery' } : {}),
    });
    const created = await call<DialectShipment>(`${e.baseUrl}/v1/shipments`, {
      key: keyA,
      body: {
        quote_id: quote.body.quote_id,
        external_order_id: `dialect:${++orderSeq}`,
        ...(options.amount === undefined ? {} : { orderAmountXof: options.amount }),
      },
    });
    expect(created.status, created.text).toBe(201);
    return created.body;
  }

  it("shows a new shipment as 'draft' and a marked-ready one as 'awaiting_driver', history included, under the dialect's field names", async () => {
    const e = await startOther();
    const shipment = await otherShipment(e, { cod: true, amount: 12000 });
    const fetched = await call<DialectShipment>(`${e.baseUrl}/v1/shipments/${shipment.shipment_id}`, { key: keyA });
    expect(fetched.body).toMatchObject({
      status: 'draft',
      cod_amount_xof: 12000,
      public_tracking_url: `${e.trackingUrl}/t/${shipment.tracking_code}`,
    });
    expect(fetched.body.events?.map((h) => h.status)).toEqual(['draft']);
    for (const canonical of ['"CREATED"', '"publicTrackingUrl"', '"orderAmountXof"', '"status_history"'])
      expect(fetched.text).not.toContain(canonical);
    const ready = await markReady(e, keyA, shipment.shipment_id);
    expect(ready.body).toMatchObject({ status: 'awaiting_driver' });
    expect((ready.body as DialectShipment).events?.map((h) => h.status)).toEqual(['draft', 'awaiting_driver']);
    // Marked ready again: answered unchanged, as with the default profile.
    const again = await markReady(e, keyA, shipment.shipment_id);
    expect(again.status).toBe(200);
    expect((again.body as DialectShipment).events?.map((h) => h.status)).toEqual(['draft', 'awaiting_driver']);
    await e.runUntilIdle();
    const done = await call<DialectShipment>(`${e.baseUrl}/v1/shipments/${shipment.shipment_id}`, { key: keyA });
    expect(done.body.events?.map((h) => h.status)).toEqual([
      'draft',
      'awaiting_driver',
      'driver_en_route',
      'collected',
      'on_the_way',
      'arriving',
      'DELIVERED',
    ]);
    // The emulator's own view keeps its canonical names.
    expect(e.shipments(ORG_A).find((s) => s.shipment_id === shipment.shipment_id)?.status).toBe('DELIVERED');
    expect(e.shipments(ORG_A).find((s) => s.shipment_id === shipment.shipment_id)?.status_history[0]?.status).toBe(
      'CREATED',
    );
  });

  it("writes a quote's expiry, breakdown and a simulated price under the dialect's spellings", async () => {
    const e = await startOther();
    const quote = await call<Record<string, unknown>>(`${e.baseUrl}/v1/quotes`, {
      key: keyA,
      body: quoteRequest({ payment_mode: 'cash_on_delivery' }),
    });
    expect(quote.status, quote.text).toBe(201);
    expect(quote.body).toMatchObject({
      quote_id: expect.stringMatching(/^qte_/),
      valid_until: expect.any(String),
      total: expect.any(Number),
      price_breakdown: {
        customer_pays: quote.body.total,
        courier_share: expect.any(Number),
        platform_fee: expect.any(Number),
        collection_fee: COD_FEE_XOF,
      },
    });
    expect(quote.body).not.toHaveProperty('expiresAt');
    expect(quote.body).not.toHaveProperty('breakdown');
    const simulated = await call<Record<string, unknown>>(`${e.trackingUrl}/v1/tracking/simulate-price`, {
      body: { pickup_city: 'Plateau', dropoff_city: 'Almadies' },
    });
    expect(simulated.body).toEqual({ estimate_xof: expect.any(Number), currency: 'XOF' });
  });

  it("answers every refusal as {error: {type, detail}} with the dialect's codes, injected faults included", async () => {
    const e = await startOther();
    const quotesUrl = `${e.baseUrl}/v1/quotes`;
    expectDialectError(await call(`${e.baseUrl}/v1/shipments`), 401, 'auth.invalid_key');
    expectDialectError(
      await call(`${e.baseUrl}/v1/shipments`, { key: `pk_test_${randomBytes(8).toString('hex')}` }),
      403,
      'SANDBOX_KEY_NOT_SUPPORTED',
    );
    expectDialectError(await call(quotesUrl, { key: keyA, rawBody: '{"pickup": ' }), 400, 'request.unreadable');
    expectDialectError(
      await call(quotesUrl, { key: keyA, body: quoteRequest({ parcel: { weight_kg: 500 } }) }),
      400,
      'request.invalid',
    );
    expectDialectError(await call(`${e.baseUrl}/v2/quotes`, { key: keyA }), 404, 'route.unknown');
    expectDialectError(await call(`${e.baseUrl}/v1/shipments/shp_unknown`, { key: keyA }), 404, 'shipment.unknown');
    expectDialectError(await call(`${e.baseUrl}/v1/quotes/qte_unknown`, { key: keyA }), 404, 'quote.unknown');
    const stale = await call<{ quote_id: string }>(quotesUrl, { key: keyA, body: quoteRequest() });
    await e.advance(QUOTE_TTL_MS + 1000);
    const refused = await call<DialectError>(`${e.baseUrl}/v1/shipments`, {
      key: keyA,
      body: { quote_id: stale.body.quote_id, external_order_id: 'dialect:stale' },
    });
    expectDialectError(refused, 409, 'quote.stale');
    expect(other.readErrorBody(refused.body)).toEqual({ code: 'quote.stale', message: expect.any(String) });
    expect(other.meaningOf(refused.status, other.readErrorBody(refused.body).code)).toBe('quote_expired');

    const late = await otherShipment(e);
    await markReady(e, keyA, late.shipment_id);
    await e.advance(2 * STEP_MS);
    const tooLate = await call<DialectError>(`${e.baseUrl}/v1/shipments/${late.shipment_id}/cancel`, {
      key: keyA,
      body: { reason: 'too late', by: 'ops' },
    });
    expectDialectError(tooLate, 409, 'shipment.cancel_too_late');
    expect(tooLate.body.error.detail).toContain('collected');
    const cancelled = await otherShipment(e);
    await call(`${e.baseUrl}/v1/shipments/${cancelled.shipment_id}/cancel`, {
      key: keyA,
      body: { reason: 'r', by: 'ops' },
    });
    expectDialectError(await markReady(e, keyA, cancelled.shipment_id), 409, 'shipment.bad_state');

    e.faults.add({ operation: 'listShipments', times: 1, fault: { kind: 'status', status: 503 } });
    expectDialectError(await call(`${e.baseUrl}/v1/shipments`, { key: keyA }), 503, 'server.failure');
    e.faults.add({ operation: 'listShipments', times: 1, fault: { kind: 'rate_limit', retryAfterSeconds: 3 } });
    const limited = await call(`${e.baseUrl}/v1/shipments`, { key: keyA });
    expectDialectError(limited, 429, 'throttle');
    expect(limited.headers.get('retry-after')).toBe('3');
  });

  it("filters listShipments by the dialect's state names and refuses the default profile's names with the dialect's 400", async () => {
    const e = await startOther();
    const waiting = await otherShipment(e);
    const ready = await otherShipment(e);
    await markReady(e, keyA, ready.shipment_id);
    const list = (status: string) =>
      call<{ shipments: DialectShipment[] }>(`${e.baseUrl}/v1/shipments?status=${status}`, { key: keyA });
    expect((await list('awaiting_driver')).body.shipments.map((s) => s.shipment_id)).toEqual([ready.shipment_id]);
    expect((await list('draft')).body.shipments.map((s) => s.shipment_id)).toEqual([waiting.shipment_id]);
    expectDialectError(await list('READY'), 400, 'request.invalid');
    expectDialectError(await list('CREATED'), 400, 'request.invalid');
  });

  it('sends webhooks with X-Courier-Signature, a base64 HMAC-SHA256 without prefix, and the body {type, data: {object: {id, reference, state}}}', async () => {
    const received: { body: string; signature?: string; defaultHeader?: string }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const signature = req.headers['x-courier-signature'];
        const defaultHeader = req.headers[WEBHOOK_SIGNATURE_HEADER.toLowerCase()];
        received.push({
          body: Buffer.concat(chunks).toString('utf8'),
          ...(typeof signature === 'string' ? { signature } : {}),
          ...(typeof defaultHeader === 'string' ? { defaultHeader } : {}),
        });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    extraServers.push(server);
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    const secret = randomBytes(24).toString('hex');
    const e = await startOther();
    e.setOrganisationWebhook(ORG_A, `http://127.0.0.1:${address.port}/hooks`, secret);
    const shipment = await otherShipment(e);
    await markReady(e, keyA, shipment.shipment_id);
    await e.advance(0);
    expect(received).toHaveLength(1);
    const [first] = received;
    expect(first?.defaultHeader).toBeUndefined();
    expect(first?.signature).toBe(
      createHmac('sha256', secret)
        .update(first?.body ?? '')
        .digest('base64'),
    );
    expect(other.verify(Buffer.from(first?.body ?? ''), first?.signature, secret)).toBe(true);
    expect(JSON.parse(first?.body ?? '')).toEqual({
      type: 'delivery.updated',
      data: {
        object: {
          id: shipment.shipment_id,
          reference: shipment.external_order_id,
          state: 'awaiting_driver',
          occurred_at: expect.any(String),
        },
      },
    });
    expect(e.webhookDeliveries()[0]?.body).toEqual(JSON.parse(first?.body ?? ''));
  });

  it("shows the dialect's state on the public tracking view and page", async () => {
    const e = await startOther();
    const shipment = await otherShipment(e);
    await markReady(e, keyA, shipment.shipment_id);
    const view = await call<Record<string, unknown>>(`${e.trackingUrl}/v1/tracking/${shipment.tracking_code}`);
    expect(view.body).toEqual({
      tracking_code: shipment.tracking_code,
      status: 'awaiting_driver',
      events: [
        { status: 'draft', at: expect.any(String) },
        { status: 'awaiting_driver', at: expect.any(String) },
      ],
    });
    const page = await fetch(shipment.public_tracking_url ?? '');
    expect(await page.text()).toContain('data-status="awaiting_driver"');
  });

  it('takes the profile from the config file, as a path relative to that file or as a built-in name, and names the problems of an invalid one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dispatch-emu-profile-'));
    try {
      await writeFile(join(dir, 'dialect.json'), await readFile(OTHER_DIALECT_FILE, 'utf8'));
      await writeFile(join(dir, 'broken.json'), JSON.stringify({ name: 'broken' }));
      const organisations = [{ id: 'o', name: 'O', apiKeys: ['pk_live_profile_demo'] }];
      const write = async (profile: string) => {
        const path = join(dir, `emulator-${randomBytes(4).toString('hex')}.json`);
        await writeFile(path, JSON.stringify({ profile, organisations }));
        return path;
      };
      expect((await loadEmulatorConfig(await write('dialect.json'), {})).profile?.name).toBe('other-dialect');
      expect((await loadEmulatorConfig(await write('./dialect.json'), {})).profile?.name).toBe('other-dialect');
      expect((await loadEmulatorConfig(await write('default'), {})).profile).toBe(defaultWireProfile());
      await expect(loadEmulatorConfig(await write('broken.json'), {})).rejects.toThrow(/profile .*states/s);
      await expect(loadEmulatorConfig(await write('missing.json'), {})).rejects.toThrow(/cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
