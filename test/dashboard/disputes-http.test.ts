/**
 * Disputes from the dashboard over real HTTP: the web process and a worker on a private Redis, an order the
 * dispatch emulator's courier delivered, and a held order that never got a shipment. A dispute opened from
 * the order page must reach the shipment at the delivery service, be listed on the page, and keep the
 * service's decision visible once it is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SHIPPING_ADDRESS } from '@relais/emulators/shopify';
import type { EmulatedClaim } from '@relais/emulators/dispatch';
import { runDisputeOpen } from '../../src/orders/disputes/command.js';
import { shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import { randomHex, SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';
import { DashboardSession, type PageResponse } from './session.js';

const TOKEN = `dash_${randomHex(16)}`;
const MARKUP = '<script>alert("pwned")</script>';

let relais: TestRelais;
let deliveredId: string;
let deliveredName: string;
let heldId: string;
/** A delivered order nobody disputes from Relais: for what the page asks the service, and when. */
let quietId: string;

const { latitude: _lat, longitude: _lng, ...addressWithoutCoords } = DEFAULT_SHIPPING_ADDRESS;

beforeAll(async () => {
  relais = await startTestRelais({ dashboardToken: TOKEN, pollIntervalMs: 500 });
  const shopify = relais.shopify!;
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
  );

  // Dispatched, then carried to the door by the emulated courier.
  const delivered = shopify.createOrder(SHOPIFY_DOMAIN, {});
  const quiet = shopify.createOrder(SHOPIFY_DOMAIN, {});
  deliveredId = shopifyExternalId(delivered.id);
  deliveredName = delivered.name;
  quietId = shopifyExternalId(quiet.id);
  await waitForState(relais, deliveredId, ['ready']);
  await waitForState(relais, quietId, ['ready']);
  await relais.emulator.runUntilIdle();
  await waitForState(relais, deliveredId, ['delivered']);
  await waitForState(relais, quietId, ['delivered']);

  // No neighbourhood anywhere in the address: held, never dispatched.
  const held = shopify.createOrder(SHOPIFY_DOMAIN, {
    shippingAddress: { ...addressWithoutCoords, address1: 'villa 3', address2: '' },
  });
  heldId = shopifyExternalId(held.id);
  await waitForState(relais, heldId, ['held']);
}, 60_000);

afterAll(async () => {
  await relais?.shopify?.webhooksSettled();
  await relais?.stop();
});

const orderPath = (id: string) => `/dashboard/orders/${encodeURIComponent(id)}`;
const disputesPath = (id: string) => `${orderPath(id)}/disputes`;

async function loggedIn(): Promise<DashboardSession> {
  const session = new DashboardSession(relais.web.url);
  expect((await session.login(TOKEN)).status).toBe(303);
  return session;
}

function claimsOnShipment(externalOrderId: string): EmulatedClaim[] {
  const shipment = relais.emulator.shipments().find((s) => s.external_order_id === externalOrderId);
  if (!shipment) throw new Error(`no shipment for ${externalOrderId} at the emulator`);
  return shipment.claims;
}

function calls(operation: string): number {
  return relais.emulator.calls().filter((c) => c.operation === operation).length;
}

/** Sends the order page's dispute form as a browser would, and reads the page the redirect leads to. */
async function openDispute(
  session: DashboardSession,
  id: string,
  fields: Record<string, string>,
): Promise<{ post: PageResponse; next: PageResponse }> {
  const csrf = await session.csrf(orderPath(id));
  const post = await session.request(disputesPath(id), { form: { _csrf: csrf, ...fields } });
  expect(post.status).toBe(303);
  expect(post.location).toBe(orderPath(id));
  return { post, next: await session.request(post.location!) };
}

/** The disputes card of an order page: the claims' table and the form. */
function disputesCard(body: string): string {
  const start = body.indexOf('<div class="card" id="disputes">');
  expect(start, 'the page has a disputes card').toBeGreaterThanOrEqual(0);
  return body.slice(start, body.indexOf('<h2>Timeline</h2>', start));
}

function flash(body: string): string | undefined {
  return /<div class="flash (?:ok|error)" role="status">([^<]*)<\/div>/.exec(body)?.[1];
}

describe('opening a dispute from the order page', () => {
  it("opens a claim on the delivered order's shipment with the fields typed in, and lists it as open", async () => {
    const session = await loggedIn();
    const page = await session.request(orderPath(deliveredId));
    expect(page.body).toContain(`action="${disputesPath(deliveredId)}"`);
    expect(disputesCard(page.body)).toContain('No dispute on this shipment.');

    const { next } = await openDispute(session, deliveredId, {
      reason: 'damaged',
      description: 'Box crushed, the screen is cracked.',
      claimantId: 'ops-awa',
      claimantType: 'seller',
    });

    const [claim] = claimsOnShipment(deliveredId);
    expect(claim).toMatchObject({
      reason: 'damaged',
      description: 'Box crushed, the screen is cracked.',
      claimant_id: 'ops-awa',
      claimant_type: 'seller',
      status: 'OPEN',
    });
    expect(flash(next.body)).toContain(`Dispute opened for ${deliveredName}: claim ${claim!.claim_id} on shipment`);
    const card = disputesCard(next.body);
    expect(card).toContain(claim!.claim_id);
    expect(card).toContain('Box crushed, the screen is cracked.');
    expect(card).toContain('ops-awa');
    expect(card).toContain('<span class="badge warn">OPEN</span>');
    expect(card).toContain('settlement held until the service decides');
    expect(next.body).toContain('openDispute');
    for (const secret of [...Object.values(relais.secrets), TOKEN]) expect(next.body.includes(secret)).toBe(false);
  });

  it("shows the service's decision and outcome on the page and, once, on the order's timeline", async () => {
    const session = await loggedIn();
    await openDispute(session, deliveredId, {
      reason: 'never delivered',
      description: 'The customer says nobody came.',
      claimantId: 'ops-moussa',
      claimantType: 'seller',
    });
    const claim = claimsOnShipment(deliveredId).find((c) => c.reason === 'never delivered')!;
    relais.emulator.decideDispute(claim.claim_id, { status: 'COMPENSATED', outcome: 'refund 5000 XOF' });

    const page = await session.request(orderPath(deliveredId));
    const row = disputesCard(page.body)
      .split('<tr>')
      .find((r) => r.includes(claim.claim_id))!;
    expect(row).toContain('<span class="badge ok">COMPENSATED</span>');
    expect(row).toContain('refund 5000 XOF');
    expect(row).toMatch(/decided \d{4}-\d\d-\d\d/);
    expect(page.body).toContain(`claim ${claim.claim_id} on`);
    expect(page.body).toContain('dispute decided');

    await session.request(orderPath(deliveredId));
    const timeline = await relais.worker.runtime.ledger.timeline(deliveredId);
    const decided = timeline.filter((t) => t.operation === 'dispute decided' && t.detail?.includes(claim.claim_id));
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ outcome: 'COMPENSATED' });
    expect(decided[0]!.detail).toContain('refund 5000 XOF');
  });

  it('sends the default claimant type (seller) when the field is emptied', async () => {
    const session = await loggedIn();
    await openDispute(session, deliveredId, {
      reason: 'lost',
      description: 'One of two parcels is missing.',
      claimantId: 'ops-awa',
      claimantType: '  ',
    });
    expect(claimsOnShipment(deliveredId).find((c) => c.reason === 'lost')).toMatchObject({ claimant_type: 'seller' });
  });

  it('shows a reason and a description carrying markup as text', async () => {
    const session = await loggedIn();
    const { next } = await openDispute(session, deliveredId, {
      reason: `${MARKUP} torn`,
      description: `${MARKUP} in the note`,
      claimantId: 'ops-awa',
      claimantType: 'seller',
    });
    expect(claimsOnShipment(deliveredId).some((c) => c.reason === `${MARKUP} torn`)).toBe(true);
    expect(next.body).not.toContain('<script>');
    expect(next.body).not.toContain('alert("pwned")');
    expect(disputesCard(next.body)).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; torn');
    expect(disputesCard(next.body)).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; in the note');
  });

  it('does not open the same claim twice when the form is sent again', async () => {
    const session = await loggedIn();
    const fields = {
      reason: 'wrong item',
      description: 'Blue instead of red.',
      claimantId: 'ops-awa',
      claimantType: 'seller',
    };
    await openDispute(session, deliveredId, fields);
    const { next } = await openDispute(session, deliveredId, fields);
    expect(flash(next.body)).toContain('Dispute not opened twice');
    expect(claimsOnShipment(deliveredId).filter((c) => c.reason === 'wrong item')).toHaveLength(1);
  });
});

describe('opening a dispute with relais dispute open', () => {
  it('does not open the same claim twice when the command is run again later, and says which claim exists', async () => {
    const options = { reason: 'parcel opened', description: 'Seal broken at delivery.', claimantId: 'ops-koffi' };
    const out = () => {
      let text = '';
      return {
        write: (chunk: string) => {
          text += chunk;
          return true;
        },
        text: () => text,
      };
    };
    const first = { stdout: out(), stderr: out() };
    expect(await runDisputeOpen(relais.web.runtime, deliveredId, options, first)).toBe(0);
    const second = { stdout: out(), stderr: out() };
    expect(await runDisputeOpen(relais.web.runtime, deliveredId, options, second)).toBe(1);
    expect(second.stderr.text()).toMatch(/already has this open claim \(clm_\w+.*\): not opened twice/);
    expect(claimsOnShipment(deliveredId).filter((c) => c.reason === 'parcel opened')).toHaveLength(1);
  });
});

describe("reading an order's claims", () => {
  it('asks the delivery service only while a claim is open or when the operator asks, so page views do not flood the timeline', async () => {
    const session = await loggedIn();
    const timelineBefore = (await relais.worker.runtime.ledger.timeline(quietId)).length;
    const listsBefore = calls('listShipmentDisputes');
    const first = await session.request(orderPath(quietId));
    await session.request(orderPath(quietId));
    expect(disputesCard(first.body)).toContain('No dispute on this shipment.');
    expect(disputesCard(first.body)).toContain(`href="${orderPath(quietId)}?claims=ask#disputes"`);
    expect(calls('listShipmentDisputes')).toBe(listsBefore);
    expect(await relais.worker.runtime.ledger.timeline(quietId)).toHaveLength(timelineBefore);

    // A claim opened at the service without Relais (its console, another tool): shown once the operator asks.
    const record = (await relais.worker.runtime.ledger.get(quietId))!;
    const client = relais.worker.runtime.dispatchClientFor(relais.shops.get(SHOPIFY_SHOP_ID)!);
    const outside = await client.openDispute(record.shipment!.shipmentId, {
      reason: 'opened elsewhere',
      description: 'From the service console.',
      claimant_id: 'console-user',
    });
    expect(disputesCard((await session.request(orderPath(quietId))).body)).not.toContain('opened elsewhere');

    const asked = await session.request(`${orderPath(quietId)}?claims=ask`);
    const card = disputesCard(asked.body);
    expect(card).toContain('opened elsewhere');
    expect(card).toContain(outside.claimId!);
    expect(card).toContain('<span class="badge warn">OPEN</span>');
    expect(card).toContain('As the delivery service lists them now.');
    expect(calls('listShipmentDisputes')).toBe(listsBefore + 1);

    // Now a decision is awaited: each view asks, and shows it as soon as it is made.
    relais.emulator.decideDispute(outside.claimId!, { status: 'REJECTED', outcome: 'signed proof of delivery' });
    const decided = await session.request(orderPath(quietId));
    expect(disputesCard(decided.body)).toContain('<span class="badge bad">REJECTED</span>');
    expect(disputesCard(decided.body)).toContain('signed proof of delivery');
    expect(calls('listShipmentDisputes')).toBe(listsBefore + 2);

    // Decided: the outcome stays on the page, read from what Relais recorded, without asking again.
    const later = await session.request(orderPath(quietId));
    expect(disputesCard(later.body)).toContain('signed proof of delivery');
    expect(calls('listShipmentDisputes')).toBe(listsBefore + 2);
  });

  it('shows the claims Relais recorded, and why, when the service cannot be asked', async () => {
    const session = await loggedIn();
    relais.emulator.faults.add({ operation: 'listShipmentDisputes', times: 1, fault: { kind: 'status', status: 503 } });
    const page = await session.request(`${orderPath(quietId)}?claims=ask`);
    expect(page.status).toBe(200);
    const card = disputesCard(page.body);
    expect(card).toMatch(
      /Could not ask the delivery service: the delivery service is unavailable for listShipmentDisputes .*; try again later\. Shown as Relais recorded them\./,
    );
    expect(card).toContain('signed proof of delivery');
  });
});

describe('a dispute that is not opened', () => {
  it("is refused without the session's CSRF token (403), and nothing reaches the service", async () => {
    const session = await loggedIn();
    const before = calls('openDispute');
    const response = await session.request(disputesPath(deliveredId), {
      form: { reason: 'damaged', description: 'x', claimantId: 'ops-awa' },
    });
    expect(response.status).toBe(403);
    expect(calls('openDispute')).toBe(before);
  });

  it('is not offered for an order without a shipment, and a post for one says the order has no shipment yet', async () => {
    const session = await loggedIn();
    const page = await session.request(orderPath(heldId));
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(disputesPath(heldId));
    expect(page.body).not.toContain('Open a dispute');

    const csrf = await session.csrf(orderPath(heldId));
    const before = relais.emulator.calls().length;
    const post = await session.request(disputesPath(heldId), {
      form: { _csrf: csrf, reason: 'lost', description: 'Never arrived.', claimantId: 'ops-awa' },
    });
    expect(post.status).toBe(303);
    expect(post.location).toBe(orderPath(heldId));
    const next = await session.request(post.location!);
    expect(flash(next.body)).toMatch(/Dispute not opened: #?\S+ has no shipment yet\./);
    expect(relais.emulator.calls()).toHaveLength(before);
  });

  it('names the missing field when the form is incomplete', async () => {
    const session = await loggedIn();
    const before = calls('openDispute');
    const { next } = await openDispute(session, deliveredId, {
      reason: '   ',
      description: 'Something happened.',
      claimantId: 'ops-awa',
      claimantType: 'seller',
    });
    expect(flash(next.body)).toContain(`Dispute not opened for ${deliveredName}: reason: a reason is required`);
    expect(calls('openDispute')).toBe(before);
  });

  it('says what the service refused', async () => {
    const session = await loggedIn();
    // Within Relais' own limit (100 characters) but beyond the service's: its refusal must reach the operator.
    const { next } = await openDispute(session, deliveredId, {
      reason: 'damaged in transit',
      description: 'Wet box.',
      claimantId: 'ops-awa',
      claimantType: 'r'.repeat(60),
    });
    expect(flash(next.body)).toMatch(
      new RegExp(`^Dispute not opened for ${deliveredName}: the delivery service refused openDispute: .+\\.$`),
    );
    expect(claimsOnShipment(deliveredId).some((c) => c.reason === 'damaged in transit')).toBe(false);
  });

  it('says to try again later when the service is unavailable', async () => {
    const session = await loggedIn();
    relais.emulator.faults.add({ operation: 'openDispute', times: 1, fault: { kind: 'status', status: 503 } });
    const { next } = await openDispute(session, deliveredId, {
      reason: 'cash short',
      description: 'Collected 4000 instead of 5000.',
      claimantId: 'ops-awa',
      claimantType: 'seller',
    });
    const message = flash(next.body);
    expect(message).toContain(`Dispute not opened for ${deliveredName}: the delivery service is unavailable`);
    expect(message).toContain('try again later');
    expect(claimsOnShipment(deliveredId).some((c) => c.reason === 'cash short')).toBe(false);
  });
});
