/**
 * First contact (issue 28): Relais on the default wire profile against a dispatch service speaking a dialect it is
 * never given (test/fixtures/dispatch-profiles/first-contact-dialect.json: only the emulator reads that file).
 * The loop a new user runs: `relais profile learn --apply` before any order (what the probe can learn), first
 * orders delivered while their webhooks are refused (another signature) and their states unknown, `relais profile
 * learn --apply` again, then every order delivered and paid in its shop, each write made once, and the learned
 * profile equal to the emulator's on every name the run exercised.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShopifyEmulator } from '@relais/emulators/shopify';
import type { WireProfile } from '../../src/adapters/dispatch-api/profile.js';
import { learnDepsOf } from '../../src/main/commands/profile.js';
import { runProfileLearn } from '../../src/ops/profile-learn-command.js';
import { waitForIdle } from '../pipeline/helpers.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, waitFor, type TestRelais } from '../support/relais.js';
import {
  deliverEverything,
  EVERY_STEP,
  placeOrders as place,
  startDialectLoop,
  type DialectLoop,
} from './dialect-loop.js';

let loop: DialectLoop;
let shopify: ShopifyEmulator;
let relais: TestRelais;
let service: WireProfile;
let out: string;
const printed: string[] = [];

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'relais-learn-'));
  loop = await startDialectLoop();
  ({ relais, shopify, service } = loop);
}, 60_000);

afterAll(async () => {
  await loop?.stop();
  if (out) rmSync(out, { recursive: true, force: true });
});

/** `relais profile learn --shop <id> --apply`, on the worker's runtime; then waits until web and worker use it. */
async function learnAndApply(run: string): Promise<void> {
  const text: string[] = [];
  const status = await runProfileLearn(
    learnDepsOf(relais.worker.runtime),
    { shop: SHOPIFY_SHOP_ID, out: join(out, run), apply: true },
    { stdout: { write: (t: string) => text.push(t) }, stderr: { write: (t: string) => text.push(t) } },
  );
  printed.push(text.join(''));
  expect(status, text.join('')).toBe(0);
  const version = Number(/Stored as version (\d+)/.exec(text.join(''))?.[1]);
  for (const process of [relais.worker.runtime, relais.web.runtime]) {
    await waitFor(async () => process.profiles.versionOf(SHOPIFY_SHOP_ID) === version, {
      what: `profile version ${version} in force`,
    });
  }
}

const learned = (): WireProfile => relais.worker.runtime.profiles.profileFor(relais.shops.get(SHOPIFY_SHOP_ID)!);
const record = (extId: string) => relais.worker.runtime.ledger.get(extId);

const placeOrders = (count: number) => place(loop, count);

describe('first contact with a service speaking a dialect Relais was never given', () => {
  let first: Array<{ id: number; extId: string }>;
  let second: Array<{ id: number; extId: string }>;

  it('learns from the probe alone what orders need to be created and marked ready', async () => {
    await learnAndApply('1-probe');
    first = await placeOrders(2);
    for (const { extId } of first) expect((await record(extId))?.shipment?.markedReadyAt).toBeDefined();
  });

  it("refuses the first deliveries' webhooks (another signature), keeps them, and keeps every state name seen", async () => {
    await deliverEverything(loop);
    await waitFor(
      async () =>
        (await relais.worker.runtime.firstContact.seenStates(SHOPIFY_SHOP_ID)).some((s) => s.state === 'handed_over'),
      { what: 'the delivered state read by polling', timeoutMs: 15_000 },
    );
    const refused = relais.emulator.webhookDeliveries().filter((d) => d.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    const samples = await relais.worker.runtime.firstContact.webhookSamples(SHOPIFY_SHOP_ID, new Date());
    expect(samples.length).toBeGreaterThan(0);
    // Header names compare without case (HTTP's rule; the emulator's client sends them lower-cased).
    expect(Object.keys(samples[0]!.signatureCandidates).map((h) => h.toLowerCase())).toEqual(['x-courier-mac']);
    for (const { extId } of first) expect((await record(extId))?.state).toBe('ready');
  });

  it('learns the rest; every first order then shows every step it went through, in order, and is paid', async () => {
    await learnAndApply('2-webhooks-and-states');
    for (const { id, extId } of first) {
      await waitFor(async () => (await record(extId))?.delivery?.written.paid, {
        what: `${extId} paid`,
        timeoutMs: 20_000,
      });
      const shop = shopify.orderSnapshot(SHOPIFY_DOMAIN, id);
      expect(shop.financialStatus).toBe('PAID');
      // Every step it went through while its states were unknown, written in order once they are mapped.
      expect(shop.fulfillments[0]!.events.map((e) => e.status)).toEqual(EVERY_STEP);
      expect((await record(extId))?.state).toBe('delivered');
    }
  });

  it('follows later orders through every step by their webhooks, each written once, and pays them', async () => {
    second = await placeOrders(2);
    await deliverEverything(loop);
    for (const { id, extId } of second) {
      await waitFor(async () => (await record(extId))?.delivery?.written.paid, {
        what: `${extId} paid`,
        timeoutMs: 20_000,
      });
      const shop = shopify.orderSnapshot(SHOPIFY_DOMAIN, id);
      expect(shop.fulfillments).toHaveLength(1);
      expect(shop.fulfillments[0]!.events.map((e) => e.status)).toEqual(EVERY_STEP);
      expect(shop.financialStatus).toBe('PAID');
    }
    await waitForIdle(relais);
    const since = relais.emulator
      .webhookDeliveries()
      .filter((d) => second.some((o) => JSON.stringify(d.body).includes(o.extId)));
    expect(since.filter((d) => d.status !== 200)).toEqual([]);
    for (const { id } of first) {
      const events = shopify
        .orderSnapshot(SHOPIFY_DOMAIN, id)
        .fulfillments.flatMap((f) => f.events.map((e) => e.status));
      expect(new Set(events).size, 'no step written twice').toBe(events.length);
      expect(shopify.orderSnapshot(SHOPIFY_DOMAIN, id).fulfillments).toHaveLength(1);
    }
  });

  it("ends with a profile equal to the service's on every name the run exercised", async () => {
    const profile = learned();
    const seen = await relais.worker.runtime.firstContact.seenStates(SHOPIFY_SHOP_ID);
    expect(seen.length).toBeGreaterThanOrEqual(7);
    for (const { state } of seen) expect(profile.stepOf(state), state).toBe(service.stepOf(state));
    const { header, ...scheme } = profile.document.webhook.signature;
    const { header: serviceHeader, ...serviceScheme } = service.document.webhook.signature;
    expect(header.toLowerCase()).toBe(serviceHeader.toLowerCase());
    expect(scheme).toEqual(serviceScheme);
    expect(profile.document.webhook.event).toEqual(service.document.webhook.event);
    for (const key of ['shipmentIdPaths', 'externalOrderIdPaths', 'statePaths'] as const)
      expect(profile.document.webhook[key][0], key).toBe(service.document.webhook[key][0]);
    for (const field of ['quoteId', 'quoteExpiry', 'quoteTotal', 'shipmentId', 'status', 'externalOrderId'] as const)
      expect(profile.document.fields[field], field).toContain(service.spelling(field));
    expect(printed.join('\n')).toMatch(/Check:/);
  });
});
