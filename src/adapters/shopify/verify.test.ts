import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  randomSecret,
  shopifyOrderPayload,
  shopifyWebhookHeaders,
  signShopify,
} from '../../../test/support/factories.js';
import { asNodeHeaders, itRefusesForgedDeliveries } from '../../../test/support/webhook-verification.js';
import { VERIFICATION_FAILURE_STATUS } from '../../shops/platforms/common.js';
import { verifyShopifyWebhook } from './verify.js';

const SHOP = 'dakar-mode.myshopify.com';

function delivery(secret = randomSecret()) {
  const rawBody = Buffer.from(JSON.stringify(shopifyOrderPayload()));
  const headers = shopifyWebhookHeaders({
    topic: 'orders/create',
    shopDomain: SHOP,
    body: rawBody,
    secret,
    eventId: 'a1b2c3d4-0000-4000-8000-000000000001',
    webhookId: 'b1b2c3d4-0000-4000-8000-000000000002',
    triggeredAt: '2026-11-22T10:00:00.000Z',
  });
  return { rawBody, headers, secret };
}

describe('verifyShopifyWebhook', () => {
  it('accepts a delivery signed with the shop secret and reports its topic, shop and ids', () => {
    const { rawBody, headers, secret } = delivery();
    const result = verifyShopifyWebhook({ rawBody, headers: asNodeHeaders(headers), secret });
    expect(result).toEqual({
      ok: true,
      topic: 'orders/create',
      shopDomain: SHOP,
      eventId: 'a1b2c3d4-0000-4000-8000-000000000001',
      webhookId: 'b1b2c3d4-0000-4000-8000-000000000002',
      apiVersion: '2026-10',
      triggeredAt: '2026-11-22T10:00:00.000Z',
    });
  });

  it('accepts header names in any case and repeated values', () => {
    const { rawBody, headers, secret } = delivery();
    const mixed = { ...headers, 'X-Shopify-Topic': undefined, 'x-shopify-topic': ['orders/create'] };
    const result = verifyShopifyWebhook({ rawBody, headers: mixed, secret });
    expect(result).toMatchObject({ ok: true, topic: 'orders/create' });
  });

  itRefusesForgedDeliveries({
    verify: verifyShopifyWebhook,
    delivery: () => delivery(),
    tamper: ['"15000.00"', '"1500.00"'],
    refusal: 'invalid_hmac',
  });

  it('keeps secrets apart: a body signed for one shop is refused for another, whatever the call order', () => {
    const first = delivery();
    const second = delivery();
    expect(verifyShopifyWebhook({ ...first }).ok).toBe(true);
    expect(verifyShopifyWebhook({ ...second }).ok).toBe(true);
    expect(verifyShopifyWebhook({ ...first, secret: second.secret }).ok).toBe(false);
    expect(verifyShopifyWebhook({ ...second, secret: first.secret }).ok).toBe(false);
  });

  it('refuses a signature that matches only when the body is read leniently (bytes that are not UTF-8)', () => {
    const secret = randomSecret();
    const rawBody = Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const headers = shopifyWebhookHeaders({ topic: 'orders/create', shopDomain: SHOP, body: rawBody, secret });
    expect(verifyShopifyWebhook({ rawBody, headers, secret })).toEqual({ ok: false, reason: 'invalid_hmac' });
  });

  it('refuses an empty body as unauthenticated', () => {
    const secret = randomSecret();
    const headers = shopifyWebhookHeaders({ topic: 'orders/create', shopDomain: SHOP, body: '', secret });
    expect(verifyShopifyWebhook({ rawBody: Buffer.alloc(0), headers, secret })).toEqual({
      ok: false,
      reason: 'invalid_hmac',
    });
  });

  it('lists every missing header when the HMAC header is absent, with 400', () => {
    const { rawBody, secret } = delivery();
    const result = verifyShopifyWebhook({
      rawBody,
      headers: { 'content-type': 'application/json', 'x-shopify-topic': 'orders/create' },
      secret,
    });
    expect(result).toEqual({
      ok: false,
      reason: 'missing_headers',
      missing: ['X-Shopify-Hmac-Sha256', 'X-Shopify-Shop-Domain', 'X-Shopify-API-Version', 'X-Shopify-Webhook-Id'],
    });
    expect(VERIFICATION_FAILURE_STATUS[result.ok ? 'invalid_hmac' : result.reason]).toBe(400);
  });

  it('reports the headers a correctly signed delivery lacks', () => {
    const { rawBody, headers, secret } = delivery();
    const { 'X-Shopify-Topic': _topic, 'X-Shopify-Webhook-Id': _id, ...rest } = headers;
    const result = verifyShopifyWebhook({ rawBody, headers: rest, secret });
    expect(result).toEqual({
      ok: false,
      reason: 'missing_headers',
      missing: ['X-Shopify-Topic', 'X-Shopify-Webhook-Id'],
    });
  });

  it('does not reveal missing headers to a sender who cannot sign: a wrong HMAC is reported first', () => {
    const { rawBody, headers } = delivery();
    const { 'X-Shopify-Topic': _topic, ...rest } = headers;
    expect(verifyShopifyWebhook({ rawBody, headers: rest, secret: randomSecret() })).toEqual({
      ok: false,
      reason: 'invalid_hmac',
    });
  });

  it('accepts an older delivery without X-Shopify-Event-Id or X-Shopify-Triggered-At', () => {
    const { rawBody, headers, secret } = delivery();
    const { 'X-Shopify-Event-Id': _e, 'X-Shopify-Triggered-At': _t, ...rest } = headers;
    const result = verifyShopifyWebhook({ rawBody, headers: rest, secret });
    expect(result.ok).toBe(true);
    expect(result).not.toHaveProperty('eventId');
    expect(result).not.toHaveProperty('triggeredAt');
  });

  it('accepts the newer unprefixed shopify-* headers, with or without an event id', () => {
    const secret = randomSecret();
    const rawBody = Buffer.from(JSON.stringify(shopifyOrderPayload()));
    const base = {
      'shopify-hmac-sha256': signShopify(rawBody, secret),
      'shopify-topic': 'orders/create',
      'shopify-shop-domain': SHOP,
      'shopify-api-version': '2026-10',
      'shopify-webhook-id': 'w-1',
    };
    expect(verifyShopifyWebhook({ rawBody, headers: { ...base, 'shopify-event-id': 'e-1' }, secret })).toMatchObject({
      ok: true,
      topic: 'orders/create',
      shopDomain: SHOP,
      webhookId: 'w-1',
      eventId: 'e-1',
    });
    // @shopify/shopify-api 15 no longer requires the event id; de-duplication then falls back to the webhook id.
    expect(verifyShopifyWebhook({ rawBody, headers: base, secret })).toMatchObject({ ok: true, webhookId: 'w-1' });
  });
});

/**
 * The library's own verdict on the same delivery: `shopify.webhooks.validate()` from @shopify/shopify-api,
 * whose rule verify.ts follows without calling it on each request. Upgrading the library re-runs this.
 */
describe('verifyShopifyWebhook agrees with @shopify/shopify-api webhooks.validate()', () => {
  const librarySecret = 'shpss_differential_test_secret';
  const library = shopifyApi({
    apiSecretKey: librarySecret,
    apiKey: 'relais',
    scopes: [],
    hostName: 'relais.local',
    apiVersion: ApiVersion.October25,
    isEmbeddedApp: false,
    logger: { level: LogSeverity.Error, log: () => undefined },
  });

  async function libraryVerdict(rawBody: Buffer, headers: Record<string, string | string[]>): Promise<string> {
    let body: string;
    try {
      body = new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    } catch {
      return 'invalid_hmac';
    }
    const result = await library.webhooks.validate({
      rawBody: body,
      rawRequest: { headers, method: 'POST', url: '/' },
    });
    if (result.valid) return `ok ${result.domain} ${result.webhookId} ${result.apiVersion}`;
    if (result.reason === 'missing_hmac') return 'missing_hmac';
    return result.reason === 'missing_headers'
      ? `missing_headers ${[...('missingHeaders' in result ? result.missingHeaders : [])].join(',')}`
      : 'invalid_hmac';
  }

  function ourVerdict(rawBody: Buffer, headers: Record<string, string | string[]>): string {
    const result = verifyShopifyWebhook({ rawBody, headers, secret: librarySecret });
    if (result.ok) return `ok ${result.shopDomain} ${result.webhookId} ${result.apiVersion}`;
    // The library stops at "missing_hmac"; we list every absent header, the HMAC header first.
    if (result.reason === 'missing_headers' && /hmac/i.test(result.missing?.[0] ?? '')) return 'missing_hmac';
    return result.reason === 'missing_headers' ? `missing_headers ${(result.missing ?? []).join(',')}` : 'invalid_hmac';
  }

  // One generated delivery: a body (sometimes empty, sometimes not UTF-8), signed right, wrongly or not at
  // all, classic or "events" header names in any case, each optional header present, empty or absent.
  const headerValue = fc.oneof(fc.constant(undefined), fc.constant(''), fc.stringMatching(/^[a-z0-9./-]{1,24}$/));
  const delivery = fc.record({
    body: fc.oneof(
      fc.json().map((json) => Buffer.from(json)),
      fc.constant(Buffer.alloc(0)),
      fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    ),
    signature: fc.constantFrom('right', 'other-secret', 'garbage', 'absent', 'empty'),
    events: fc.boolean(),
    upperCase: fc.boolean(),
    topic: headerValue,
    domain: headerValue,
    apiVersion: headerValue,
    webhookId: headerValue,
    repeated: fc.boolean(),
  });

  it('gives the same verdict on 300 generated deliveries', async () => {
    await fc.assert(
      fc.asyncProperty(delivery, async (d) => {
        const names = d.events
          ? ['shopify-hmac-sha256', 'shopify-topic', 'shopify-shop-domain', 'shopify-api-version', 'shopify-webhook-id']
          : [
              'X-Shopify-Hmac-Sha256',
              'X-Shopify-Topic',
              'X-Shopify-Shop-Domain',
              'X-Shopify-API-Version',
              'X-Shopify-Webhook-Id',
            ];
        const cased = names.map((n) => (d.upperCase ? n.toUpperCase() : n.toLowerCase()));
        const signature = {
          right: signShopify(d.body, librarySecret),
          'other-secret': signShopify(d.body, 'another-secret'),
          garbage: 'bm90IGEgc2lnbmF0dXJl',
          absent: undefined,
          empty: '',
        }[d.signature];
        const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
        const values = [signature, d.topic, d.domain, d.apiVersion, d.webhookId];
        cased.forEach((name, i) => {
          const value = values[i];
          if (value !== undefined) headers[name] = d.repeated ? [value, 'second-value'] : value;
        });
        expect(ourVerdict(d.body, headers)).toBe(await libraryVerdict(d.body, headers));
      }),
      { numRuns: 300 },
    );
  });
});
