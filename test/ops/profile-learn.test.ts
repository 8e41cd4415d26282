/**
 * What `relais profile learn` concludes from kept webhooks and state sightings, on hand-made inputs: a signature
 * is kept only when it verifies with the shop's secret, and state names are placed by their order and words.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SeenState, WebhookSample } from '../../src/ledger/first-contact.js';
import { learnSignature, placeStates } from '../../src/ops/profile-learn.js';

const body = Buffer.from('{"shipment":"shp_1","phase":"rolling"}');
const sample = (headers: Record<string, string>): WebhookSample => ({
  shopId: 'dakar-mode',
  receivedAt: new Date(),
  refusal: 'bad_signature',
  body,
  headerNames: Object.keys(headers),
  signatureCandidates: headers,
});
const seen = (state: string, source: SeenState['source'], after?: string): SeenState => ({
  state,
  source,
  firstSeenAt: new Date(),
  ...(after ? { after } : {}),
});

describe('learning a signature', () => {
  it('finds the header, algorithm, encoding and prefix that verify with the shop secret', () => {
    const mac = `sha256=${createHmac('sha1', 'the-secret').update(body).digest('hex')}`;
    const learned = learnSignature([sample({ 'X-Request-Id': 'abc', 'X-Hook-Sig': mac })], 'the-secret');
    expect(learned).toEqual({
      header: 'X-Hook-Sig',
      prefix: 'sha256=',
      encoding: 'hex',
      algorithm: 'sha1',
      verified: 1,
      signed: 1,
    });
  });

  it('learns nothing when no header verifies with the secret, rather than guess', () => {
    const mac = createHmac('sha256', 'another-secret').update(body).digest('base64');
    expect(learnSignature([sample({ 'X-Hook-Sig': mac })], 'the-secret')).toBeUndefined();
  });
});

describe('placing state names', () => {
  it('places names by the order they appeared in, and a failure by its words', () => {
    const placed = placeStates(
      [
        seen('booked', 'createShipment'),
        seen('awaiting_courier', 'markReady', 'booked'),
        seen('parcel_in_hand', 'getShipment', 'awaiting_courier'),
        seen('no_show', 'getShipment', 'parcel_in_hand'),
        seen('attempt_failed', 'getShipment', 'no_show'),
      ],
      () => undefined,
    );
    expect(placed.map((p) => [p.state, p.step])).toEqual([
      ['booked', 'created'],
      ['awaiting_courier', 'ready'],
      ['parcel_in_hand', 'assigned'],
      ['no_show', 'picked_up'],
      ['attempt_failed', 'delivery_failed'],
    ]);
  });
});
