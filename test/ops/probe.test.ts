/**
 * `relais probe` against the dispatch emulator over real HTTP, in both dialects: the shop's profile equal to
 * the service's dialect (everything matches), and the default profile facing other-dialect (the unknowns are
 * named and the draft profile maps what was seen). Shipments to read are made beforehand with a real
 * DispatchClient; the probe's own calls are then checked in the emulator's call log.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildShopRegistry } from '../../src/shops/shops.js';
import { DispatchClient } from '../../src/adapters/dispatch-api/client.js';
import {
  defaultWireProfile,
  loadWireProfile,
  parseWireProfile,
  type WireProfile,
} from '../../src/adapters/dispatch-api/profile.js';
import { startDispatchEmulator, type DispatchEmulator } from '@relais/emulators/dispatch';
import { ProbeFailure, runProbe, type ProbeOptions, type ProbeReport } from '../../src/ops/probe.js';
import { renderProbeReport } from '../../src/ops/probe-report.js';
import { allowedRoute, ProbeRefusedOperation, PROBE_ROUTES } from '../../src/ops/probe-routes.js';
import { makeSecrets, registryDocument, secretEnv, SHOPIFY_SHOP_ID } from '../support/relais.js';

const OTHER_DIALECT_FILE = fileURLToPath(new URL('../fixtures/dispatch-profiles/other-dialect.json', import.meta.url));
const otherDialect = loadWireProfile(OTHER_DIALECT_FILE);
const run = promisify(execFile);
const SIDE_EFFECTS = ['createShipment', 'markReady', 'cancelShipment', 'openDispute'];
const dirs: string[] = [];

function outDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'relais-probe-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface World {
  emulator: DispatchEmulator;
  apiKey: string;
  /** A shipment created and never marked ready. */
  created: { shipmentId: string; externalOrderId: string; trackingCode: string };
  /** A shipment marked ready and run to delivery: its history holds every state of a run. */
  delivered: { shipmentId: string; externalOrderId: string; trackingCode: string };
}

async function startWorld(dialect: WireProfile, options: { separateTracking?: boolean } = {}): Promise<World> {
  const apiKey = `pk_live_${randomBytes(16).toString('hex')}`;
  const emulator = await startDispatchEmulator({
    organisations: [{ id: 'org_probe', name: 'Probe shop', apiKeys: [apiKey] }],
    profile: dialect,
    ...(options.separateTracking ? { trackingPort: 0 } : {}),
  });
  const client = new DispatchClient({
    baseUrl: emulator.baseUrl,
    trackingUrl: emulator.trackingUrl,
    apiKey,
    profile: dialect,
  });
  const ship = async (externalOrderId: string) => {
    const quote = await client.createQuote({
      pickup: { city: 'Plateau', address: '1 rue A' },
      dropoff: { city: 'Medina', address: '2 rue B' },
      payment_mode: 'cash_on_delivery',
    });
    const shipment = await client.createShipment({
      quote_id: quote.quoteId,
      external_order_id: externalOrderId,
      orderAmountXof: 15_000,
    });
    return { shipmentId: shipment.shipmentId, externalOrderId, trackingCode: shipment.trackingCode ?? '' };
  };
  const created = await ship(`probe-test:${dialect.name}:1`);
  const delivered = await ship(`probe-test:${dialect.name}:2`);
  await client.markReady(delivered.shipmentId, 'probe test');
  await emulator.runUntilIdle();
  await client.close();
  return { emulator, apiKey, created, delivered };
}

function target(world: World, profile: WireProfile) {
  return {
    baseUrl: world.emulator.baseUrl,
    apiKey: world.apiKey,
    profile,
    pickupNeighbourhood: 'Plateau',
    city: 'Dakar',
  };
}

/** A full probe: naming the delivered shipment, the created one's external order and the delivered one's tracking code. */
async function fullProbe(
  world: World,
  source: Pick<ProbeOptions, 'shop' | 'target'>,
): Promise<{ report: ProbeReport; printed: string; dir: string }> {
  const dir = outDir();
  const report = await runProbe({
    ...source,
    shipmentId: world.delivered.shipmentId,
    externalOrderId: world.created.externalOrderId,
    trackingCode: world.delivered.trackingCode,
    outDir: dir,
  });
  return { report, printed: renderProbeReport(report), dir };
}

describe.each([
  ['default', defaultWireProfile()],
  ['other-dialect', otherDialect],
])('probe against the emulator speaking the %s dialect, with the shop on the same profile', (_name, dialect) => {
  let world: World;
  let report: ProbeReport;
  let printed: string;
  let dir: string;
  let callsBefore: number;
  let shipmentsBefore: number;

  beforeAll(async () => {
    world = await startWorld(dialect);
    callsBefore = world.emulator.calls().length;
    shipmentsBefore = world.emulator.shipments().length;
    ({ report, printed, dir } = await fullProbe(world, { target: target(world, dialect) }));
  });
  afterAll(() => world?.emulator.close());

  it('reports every field, state and error body it saw as matched, and proposes no change to the profile', () => {
    expect(report.unknownKeys).toEqual([]);
    expect(report.fields.filter((f) => f.required && f.matched === undefined)).toEqual([]);
    expect(report.states.filter((s) => s.step === undefined)).toEqual([]);
    // The delivered shipment's history shows a whole run: created through delivered.
    expect(report.states.map((s) => s.step)).toEqual(
      expect.arrayContaining([
        'created',
        'ready',
        'assigned',
        'picked_up',
        'in_transit',
        'out_for_delivery',
        'delivered',
      ]),
    );
    expect(report.errors.map((e) => [e.status, e.readByProfile, e.meaning])).toEqual([
      [404, true, 'quote_not_found'],
      [404, true, 'shipment_not_found'],
    ]);
    expect(report.allMatched).toBe(true);
    expect(report.draft.changes).toEqual([]);
    expect(printed).toContain(`Every field, state and error body seen matched the profile "${dialect.name}"`);
    expect(printed).not.toContain('✘');
  });

  it('learns the fallback tariff: the quote for the city name costs more than the quote for the pickup neighbourhood', () => {
    const { neighbourhoodTotal, cityTotal, difference, cityBasis } = report.fallback;
    expect(neighbourhoodTotal).toBeGreaterThan(0);
    expect(cityTotal).toBeGreaterThan(neighbourhoodTotal!);
    expect(difference).toBe(cityTotal! - neighbourhoodTotal!);
    expect(cityBasis).toBe('fallback');
    expect(printed).toMatch(/a city name instead of the neighbourhood costs \d+ XOF more/);
  });

  it('calls only allowed operations during a full probe naming a shipment, an external order and a tracking code, and creates no shipment', () => {
    const probeCalls = world.emulator.calls().slice(callsBefore);
    const operations = probeCalls.map((c) => c.operation);
    expect(operations).toEqual([
      'createQuote',
      'createQuote',
      'getQuote',
      'getQuote',
      'simulatePrice',
      'listShipments',
      'getShipment',
      'getShipment',
      'getShipmentByExternalOrder',
      'trackByCode',
    ]);
    for (const forbidden of [...SIDE_EFFECTS, 'listShipmentDisputes']) expect(operations).not.toContain(forbidden);
    expect(world.emulator.shipments()).toHaveLength(shipmentsBefore);
    // The operator-named reads all found their shipment.
    expect(probeCalls.slice(-3).map((c) => c.status)).toEqual([200, 200, 200]);
  });

  it('never writes the API key into exchanges.json, learned.json, draft-profile.json or the printed report, and marks the key header as redacted', () => {
    expect(readdirSync(dir).sort()).toEqual(['draft-profile.json', 'exchanges.json', 'learned.json']);
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), 'utf8')).not.toContain(world.apiKey);
    expect(printed).not.toContain(world.apiKey);
    const exchanges = JSON.parse(readFileSync(join(dir, 'exchanges.json'), 'utf8')) as Array<{
      host: string;
      requestHeaders: Record<string, string>;
    }>;
    for (const e of exchanges) {
      if (e.host === 'base') expect(e.requestHeaders['X-Api-Key']).toBe('[REDACTED]');
      else expect(e.requestHeaders['X-Api-Key']).toBeUndefined();
    }
  });
});

describe('probe with the shop on the default profile while the service speaks other-dialect', () => {
  let world: World;
  let report: ProbeReport;
  let printed: string;
  let dir: string;

  beforeAll(async () => {
    // Public tracking on its own host here: the public calls must go there, without the key.
    world = await startWorld(otherDialect, { separateTracking: true });
    expect(world.emulator.trackingUrl).not.toBe(world.emulator.baseUrl);
    // Through the shop registry, as the CLI does: the shop names no profile, so it uses "default".
    const secrets = makeSecrets();
    secrets.dispatchApiKey = world.apiKey;
    const env = secretEnv(secrets);
    const document = registryDocument({
      dispatchBaseUrl: world.emulator.baseUrl,
      trackingUrl: world.emulator.trackingUrl,
    });
    const registry = buildShopRegistry(document, (ref) => ('env' in ref ? env[ref.env] : undefined));
    ({ report, printed, dir } = await fullProbe(world, { shop: registry.get(SHOPIFY_SHOP_ID)! }));
  });
  afterAll(() => world?.emulator.close());

  it('names the state names the default profile does not map, and says the profile does not know everything', () => {
    const unknown = report.states
      .filter((s) => s.step === undefined)
      .map((s) => s.state)
      .sort();
    expect(unknown).toEqual(['arriving', 'awaiting_driver', 'collected', 'draft', 'driver_en_route', 'on_the_way']);
    // DELIVERED is the one name the spec shows: both dialects use it.
    expect(report.states.find((s) => s.state === 'DELIVERED')?.step).toBe('delivered');
    expect(report.allMatched).toBe(false);
    expect(printed).toContain('✘ awaiting_driver unknown to the profile');
    expect(printed).toContain('The profile "default" does not know everything the service answered');
  });

  it('names the unknown field spellings with the profile field each probably is', () => {
    const guesses = Object.fromEntries(report.unknownKeys.map((u) => [`${u.resource}:${u.key}`, u.guess?.field]));
    expect(guesses).toMatchObject({
      'quote:valid_until': 'quoteExpiry',
      'quote:price_breakdown': 'breakdown',
      'breakdown:customer_pays': 'breakdownCustomer',
      'breakdown:courier_share': 'breakdownCourier',
      'breakdown:platform_fee': 'breakdownPlatform',
      'breakdown:collection_fee': 'breakdownCodFee',
      'shipment:cod_amount_xof': 'orderAmount',
      'shipment:events': 'statusHistory',
      'price simulation:estimate_xof': 'simulatedTotal',
    });
    expect(report.fields.find((f) => f.resource === 'quote' && f.field === 'quoteExpiry')?.matched).toBeUndefined();
    expect(printed).toContain('✘ quote: valid_until unknown');
  });

  it('shows the error body shape the default profile cannot read, with the code and message found by their names', () => {
    expect(report.errors).toHaveLength(2);
    for (const e of report.errors) {
      expect(e.readByProfile).toBe(false);
      expect(e.guessedCodePath).toBe('error.type');
      expect(e.guessedMessagePath).toBe('error.detail');
      expect(e.shape).toEqual(['error', 'error.type', 'error.detail']);
    }
    expect(report.errors.map((e) => e.code)).toEqual(['quote.unknown', 'shipment.unknown']);
  });

  it('writes a draft profile that validates and maps every state name, spelling and error code the probe saw', () => {
    const draft = parseWireProfile(JSON.parse(readFileSync(join(dir, 'draft-profile.json'), 'utf8')), 'draft');
    for (const state of report.states)
      expect(draft.stepOf(state.state), state.state).toBe(otherDialect.stepOf(state.state));
    expect(draft.document.fields.quoteExpiry).toEqual(['expiresAt', 'expires_at', 'valid_until']);
    expect(draft.document.errors.codePaths.at(-1)).toBe('error.type');
    expect(draft.readErrorBody({ error: { type: 'quote.unknown', detail: 'no' } })).toEqual({
      code: 'quote.unknown',
      message: 'no',
    });
    expect(draft.meaningOf(404, 'quote.unknown')).toBe('quote_not_found');
    expect(draft.meaningOf(404, 'shipment.unknown')).toBe('shipment_not_found');
    const learned = JSON.parse(readFileSync(join(dir, 'learned.json'), 'utf8')) as ProbeReport;
    expect(learned.draft.changes.length).toBeGreaterThan(0);
    expect(learned.webhook).toContain('cannot be learned by probing');
  });

  it('sends simulatePrice and trackByCode to the separate tracking host, and both answer there', () => {
    const calls = world.emulator
      .calls()
      .filter((c) => c.operation === 'simulatePrice' || c.operation === 'trackByCode');
    expect(calls.map((c) => [c.operation, c.status])).toEqual([
      ['simulatePrice', 200],
      ['trackByCode', 200],
    ]);
    const exchanges = JSON.parse(readFileSync(join(dir, 'exchanges.json'), 'utf8')) as Array<{
      operation: string;
      host: string;
    }>;
    expect(exchanges.filter((e) => e.host === 'tracking').map((e) => e.operation)).toEqual([
      'simulatePrice',
      'trackByCode',
    ]);
  });

  it('never writes the API key into the files it saves', () => {
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), 'utf8')).not.toContain(world.apiKey);
  });
});

describe('the side-effect guard', () => {
  it('refuses createShipment, markReady, cancelShipment, openDispute and listShipmentDisputes, naming the operation', () => {
    for (const operation of [...SIDE_EFFECTS, 'listShipmentDisputes', 'toString', '__proto__']) {
      expect(() => allowedRoute(operation), operation).toThrow(ProbeRefusedOperation);
    }
    expect(() => allowedRoute('markReady')).toThrow(/never calls markReady/);
  });

  it('allows exactly the quote, price simulation and read operations, each POST only to the quote and simulation paths', () => {
    expect(Object.keys(PROBE_ROUTES).sort()).toEqual([
      'createQuote',
      'getQuote',
      'getShipment',
      'getShipmentByExternalOrder',
      'listShipments',
      'simulatePrice',
      'trackByCode',
    ]);
    const posts = Object.entries(PROBE_ROUTES)
      .filter(([, r]) => r.method === 'POST')
      .map(([op]) => [op, allowedRoute(op).path('x')]);
    expect(posts).toEqual([
      ['createQuote', '/v1/quotes'],
      ['simulatePrice', '/v1/tracking/simulate-price'],
    ]);
  });
});

describe('probe that cannot run', () => {
  let emulator: DispatchEmulator;
  beforeAll(async () => {
    emulator = await startDispatchEmulator({
      organisations: [{ id: 'org_probe', name: 'Probe shop', apiKeys: [`pk_live_${randomBytes(8).toString('hex')}`] }],
    });
  });
  afterAll(() => emulator?.close());

  it('stops with a key_refused failure naming the status when the service refuses the key, after one call', async () => {
    const before = emulator.calls().length;
    const wrongKey = `pk_live_${randomBytes(8).toString('hex')}`;
    const dir = outDir();
    const failure = await runProbe({
      target: {
        baseUrl: emulator.baseUrl,
        apiKey: wrongKey,
        profile: defaultWireProfile(),
        pickupNeighbourhood: 'Plateau',
        city: 'Dakar',
      },
      outDir: dir,
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProbeFailure);
    expect((failure as ProbeFailure).reason).toBe('key_refused');
    // The same key is refused again until the shop's settings change.
    expect((failure as ProbeFailure).failure).toBe('permanent');
    expect((failure as ProbeFailure).message).toMatch(/refused the key with 401 \(UNAUTHORIZED/);
    expect(
      emulator
        .calls()
        .slice(before)
        .map((c) => c.operation),
    ).toEqual(['createQuote']);
    expect(readFileSync(join(dir, 'exchanges.json'), 'utf8')).not.toContain(wrongKey);
  });

  it('stops with an unreachable failure when nothing answers at the base URL', async () => {
    const closed = await startDispatchEmulator({ organisations: [] });
    const baseUrl = closed.baseUrl;
    await closed.close();
    const failure = await runProbe({
      target: {
        baseUrl,
        apiKey: `pk_live_${randomBytes(8).toString('hex')}`,
        profile: defaultWireProfile(),
        pickupNeighbourhood: 'Plateau',
        city: 'Dakar',
      },
      outDir: outDir(),
      timeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProbeFailure);
    expect((failure as ProbeFailure).reason).toBe('unreachable');
    // Nothing answered: a later run may get through.
    expect((failure as ProbeFailure).failure).toBe('transient');
    expect((failure as ProbeFailure).message).toContain(`at ${baseUrl} did not answer`);
  });
});

describe('the relais probe command', () => {
  let world: World;
  let env: NodeJS.ProcessEnv;
  let secrets: ReturnType<typeof makeSecrets>;

  const relaisProbe = async (...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> => {
    try {
      const { stdout, stderr } = await run(
        join(process.cwd(), 'node_modules/.bin/tsx'),
        ['src/main/cli.ts', 'probe', ...args],
        { env, cwd: process.cwd() },
      );
      return { stdout, stderr, code: 0 };
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; code?: number };
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.code ?? 1 };
    }
  };

  beforeAll(async () => {
    world = await startWorld(otherDialect);
    secrets = makeSecrets();
    secrets.dispatchApiKey = world.apiKey;
    const registry = join(outDir(), 'shops.json');
    writeFileSync(
      registry,
      JSON.stringify(
        registryDocument({ dispatchBaseUrl: world.emulator.baseUrl, dispatchProfile: OTHER_DIALECT_FILE }),
      ),
    );
    env = { PATH: process.env.PATH ?? '', ...secretEnv(secrets), RELAIS_SHOPS_FILE: registry, LOG_LEVEL: 'silent' };
  });
  afterAll(() => world?.emulator.close());

  it('exits 0 and prints the report for a shop of the registry, writing the three files into --out', async () => {
    const dir = outDir();
    const result = await relaisProbe(
      '--shop',
      SHOPIFY_SHOP_ID,
      '--shipment',
      world.delivered.shipmentId,
      '--tracking-code',
      world.delivered.trackingCode,
      '--out',
      dir,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Every field, state and error body seen matched the profile "other-dialect"');
    expect(readdirSync(dir).sort()).toEqual(['draft-profile.json', 'exchanges.json', 'learned.json']);
    expect(result.stdout + result.stderr).not.toContain(world.apiKey);
  });

  it("exits non-zero with a message saying the key was refused when the shop's key is not the organisation's", async () => {
    const wrong = `pk_live_${randomBytes(8).toString('hex')}`;
    env = { ...env, T_DISPATCH_API_KEY: wrong };
    const result = await relaisProbe('--shop', SHOPIFY_SHOP_ID, '--out', outDir());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/relais probe: the dispatch service refused the key with 401/);
    expect(result.stderr).not.toContain(wrong);
  });
});
