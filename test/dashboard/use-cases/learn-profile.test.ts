/**
 * The dashboard's "Service names" use-case (issue 28, item 3) on the real stores: a shop whose delivery webhooks
 * were refused (signed under a header its profile does not check) and whose service used state names no step maps.
 * What the page is given names the header and the unmapped states with the learner's guesses; storing with the
 * steps picked writes the shop's profile as `relais profile learn --apply` does, and the web process uses it.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnDepsOf } from '../../../src/main/commands/profile.js';
import {
  applyLearnedProfile,
  learnedProfile,
  readStepsForm,
  type LearnedProfileView,
} from '../../../src/dashboard/use-cases/learn-profile.js';
import { SHOPIFY_SHOP_ID, startTestRelais, waitFor, type TestRelais } from '../../support/relais.js';

const DIALECT_FILE = join(
  import.meta.dirname,
  '..',
  '..',
  'fixtures',
  'dispatch-profiles',
  'first-contact-dialect.json',
);
const signingSecret = randomBytes(24).toString('hex');
let relais: TestRelais;

beforeAll(async () => {
  relais = await startTestRelais({
    inProcessWorker: false,
    emulatorProfile: DIALECT_FILE,
    dispatchSigningSecret: signingSecret,
  });
  const store = relais.web.runtime.firstContact;
  for (const phase of ['courier_bound', 'parcel_in_hand']) {
    const body = Buffer.from(JSON.stringify({ kind: 'shipment.moved', payload: { shipment: { ref: 'x', phase } } }));
    const mac = createHmac('sha512', signingSecret).update(body).digest('base64');
    await store.keepWebhookSample({
      shopId: SHOPIFY_SHOP_ID,
      receivedAt: new Date(),
      refusal: 'unsigned',
      body,
      headerNames: ['content-type', 'x-courier-mac'],
      signatureCandidates: { 'x-courier-mac': `v1=${mac}` },
    });
  }
  await store.noteStates(
    SHOPIFY_SHOP_ID,
    [
      { state: 'courier_bound', source: 'webhook', after: 'ready', afterStep: 'ready' },
      { state: 'parcel_in_hand', source: 'webhook', after: 'courier_bound' },
    ],
    new Date(),
  );
}, 60_000);

afterAll(async () => {
  await relais?.stop();
});

describe("the dashboard's learning of a shop's service names", () => {
  let view: LearnedProfileView;

  it('names the header that verifies the refused webhooks with the secret, and each unmapped state with what came before', async () => {
    const learned = await learnedProfile(learnDepsOf(relais.web.runtime), SHOPIFY_SHOP_ID);
    if (learned.kind !== 'learned') throw new Error(learned.why);
    view = learned.view;
    expect(view.signatureHeader?.toLowerCase()).toBe('x-courier-mac');
    const bound = view.states.find((s) => s.state === 'courier_bound');
    expect(bound).toMatchObject({ after: 'ready', afterStep: 'ready', guess: true });
    expect(view.states.map((s) => s.state)).toContain('parcel_in_hand');
    expect(JSON.stringify(view)).not.toContain(signingSecret);
    expect(relais.web.runtime.profiles.versionOf(SHOPIFY_SHOP_ID)).toBeUndefined();
  });

  it('stores the profile with the steps picked, and the web process uses it without a restart', async () => {
    // The operator's picks, as the form sends them; a field that is not a step is ignored.
    const steps = readStepsForm({
      _csrf: 'x',
      'step:courier_bound': 'assigned',
      'step:parcel_in_hand': 'picked_up',
      'step:voided': 'not-a-step',
    });
    expect(steps).toEqual({ courier_bound: 'assigned', parcel_in_hand: 'picked_up' });
    const stored = await applyLearnedProfile(learnDepsOf(relais.web.runtime), SHOPIFY_SHOP_ID, steps);
    if (stored.kind !== 'learned') throw new Error(stored.why);
    expect(stored.version).toBe(1);
    const latest = (await relais.web.runtime.shopProfiles.latest()).find((p) => p.shopId === SHOPIFY_SHOP_ID);
    expect(latest?.source).toMatch(/dashboard/);
    await waitFor(async () => relais.web.runtime.profiles.versionOf(SHOPIFY_SHOP_ID) === 1, {
      what: 'the stored profile in force in the web process',
    });
    const profile = relais.web.runtime.profiles.profileFor(relais.shops.get(SHOPIFY_SHOP_ID)!);
    expect(profile.stepOf('courier_bound')).toBe('assigned');
    expect(profile.stepOf('parcel_in_hand')).toBe('picked_up');
    expect(profile.document.webhook.signature.header.toLowerCase()).toBe('x-courier-mac');
    const again = await learnedProfile(learnDepsOf(relais.web.runtime), SHOPIFY_SHOP_ID);
    if (again.kind !== 'learned') throw new Error(again.why);
    expect(again.view.states.map((s) => s.state)).not.toContain('courier_bound');
  });
});
