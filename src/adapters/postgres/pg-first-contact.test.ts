/**
 * What a delivery service showed of its dialect, in a real PostgreSQL: refused webhooks kept within their bound
 * (20 per shop, 7 days) with no header value but a signature's, state names kept with their first sighting, and
 * a shop's stored profiles versioned.
 */
import { describe, expect, it } from 'vitest';
import { perFile } from '../../../test/support/per-file.js';
import { startTestDatabase } from '../../../test/support/postgres.js';
import { webhookSampleOf } from '../../ledger/first-contact.js';
import { PostgresFirstContact, PostgresShopProfiles } from './pg-first-contact.js';

const db = perFile(() => startTestDatabase());

const at = (minutes: number) => new Date(Date.UTC(2026, 10, 27, 10, 0) + minutes * 60_000);

describe('first contact with a delivery service', () => {
  it('keeps a refused webhook with its body and header names, and only the signature-shaped header values', () => {
    const sample = webhookSampleOf({
      shopId: 'dakar-mode',
      receivedAt: at(0),
      refusal: 'bad_signature',
      body: Buffer.from('{"id":"shp_1"}'),
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer 0123456789abcdef0123456789abcdef01234567',
        'x-courier-signature': 'c2lnbmF0dXJlIG9mIHRoZSBib2R5IG92ZXIgYSBzZWNyZXQ=',
        'x-request-id': 'req-42',
        'x-hub-signature-256': `sha256=${'ab'.repeat(32)}`,
      },
    });
    expect(sample.headerNames).toEqual([
      'content-type',
      'authorization',
      'x-courier-signature',
      'x-request-id',
      'x-hub-signature-256',
    ]);
    expect(sample.signatureCandidates).toEqual({
      'x-courier-signature': 'c2lnbmF0dXJlIG9mIHRoZSBib2R5IG92ZXIgYSBzZWNyZXQ=',
      'x-hub-signature-256': `sha256=${'ab'.repeat(32)}`,
    });
  });

  it('keeps the last 20 samples of a shop within 7 days, and the bytes exactly as sent', async () => {
    const store = new PostgresFirstContact(db().pool());
    const keep = (shopId: string, minutes: number) =>
      store.keepWebhookSample(
        webhookSampleOf({
          shopId,
          receivedAt: at(minutes),
          refusal: 'unsigned',
          body: Buffer.from(`{"n":${minutes},"é":"\u00e9"}`),
          headers: {},
        }),
      );
    await keep('old-shop', -8 * 24 * 60);
    for (let i = 0; i < 25; i++) await keep('busy-shop', i);
    await keep('old-shop', 0);
    const busy = await store.webhookSamples('busy-shop', at(30));
    expect(busy.map((s) => JSON.parse(s.body.toString('utf8')).n)).toEqual(
      Array.from({ length: 20 }, (_, i) => 24 - i),
    );
    expect(busy[0]!.body.equals(Buffer.from('{"n":24,"é":"\u00e9"}'))).toBe(true);
    expect((await store.webhookSamples('old-shop', at(1))).map((s) => s.receivedAt)).toEqual([at(0)]);
  });

  it('keeps the first sighting of a state name, not a later one', async () => {
    const store = new PostgresFirstContact(db().pool());
    await store.noteStates('dakar-mode', [{ state: 'draft', source: 'createShipment' }], at(0));
    await store.noteStates(
      'dakar-mode',
      [
        { state: 'draft', source: 'getShipment' },
        { state: 'awaiting_driver', source: 'markReady', after: 'draft' },
      ],
      at(1),
    );
    expect(await store.seenStates('dakar-mode')).toEqual([
      { state: 'draft', source: 'createShipment', firstSeenAt: at(0) },
      { state: 'awaiting_driver', source: 'markReady', after: 'draft', firstSeenAt: at(1) },
    ]);
  });

  it("numbers a shop's stored profiles and answers the newest of each shop", async () => {
    const profiles = new PostgresShopProfiles(db().pool());
    expect(await profiles.save('dakar-mode', { name: 'first' }, 'test')).toBe(1);
    expect(await profiles.save('dakar-mode', { name: 'second' }, 'test')).toBe(2);
    expect(await profiles.save('abidjan-tech', { name: 'other' }, 'test')).toBe(1);
    const latest = await profiles.latest();
    expect(latest.map((p) => [p.shopId, p.version, (p.document as { name: string }).name])).toEqual([
      ['abidjan-tech', 1, 'other'],
      ['dakar-mode', 2, 'second'],
    ]);
  });
});
