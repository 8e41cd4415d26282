import { describe, expect, it } from 'vitest';
import { randomSecret, shopifyOrderPayload, shopifyWebhookHeaders, signShopify } from '../../../test/support/factories.js';
import { VERIFICATION_FAILURE_STATUS } from '../common.js';
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

/** What Node's http module hands over: lower-case header names. */
function asNodeHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

describe('verifyShopifyWebhook', () => {
  it('accepts a delivery signed with the shop secret and reports its topic, shop and ids', async () => {
    const { rawBody, headers, secret } = delivery();
    const result = await verifyShopifyWebhook({ rawBody, headers: asNodeHeaders(headers), secret });
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

  it('accepts header names in any case and repeated values', async () => {
    const { rawBody, headers, secret } = delivery();
    const mixed = { ...headers, 'X-Shopify-Topic': undefined, 'x-shopify-topic': ['orders/create'] };
    const result = await verifyShopifyWebhook({ rawBody, headers: mixed, secret });
    expect(result).toMatchObject({ ok: true, topic: 'orders/create' });
  });

  it('refuses a body changed after signing (one byte), with 401', async () => {
    const { rawBody, headers, secret } = delivery();
    const tampered = Buffer.from(rawBody.toString('utf8').replace('"15000.00"', '"1500.00"'));
    expect(tampered.equals(rawBody)).toBe(false);
    const result = await verifyShopifyWebhook({ rawBody: tampered, headers, secret });
    expect(result).toEqual({ ok: false, reason: 'invalid_hmac' });
    expect(VERIFICATION_FAILURE_STATUS[result.ok ? 'missing_headers' : result.reason]).toBe(401);
  });

  it('refuses a delivery signed with another secret', async () => {
    const { rawBody, headers } = delivery();
    expect(await verifyShopifyWebhook({ rawBody, headers, secret: randomSecret() })).toEqual({ ok: false, reason: 'invalid_hmac' });
  });

  it('keeps secrets apart: a body signed for one shop is refused for another, whatever the call order', async () => {
    const first = delivery();
    const second = delivery();
    expect((await verifyShopifyWebhook({ ...first })).ok).toBe(true);
    expect((await verifyShopifyWebhook({ ...second })).ok).toBe(true);
    expect((await verifyShopifyWebhook({ ...first, secret: second.secret })).ok).toBe(false);
    expect((await verifyShopifyWebhook({ ...second, secret: first.secret })).ok).toBe(false);
  });

  it('refuses a signature that matches only when the body is read leniently (bytes that are not UTF-8)', async () => {
    const secret = randomSecret();
    const rawBody = Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const headers = shopifyWebhookHeaders({ topic: 'orders/create', shopDomain: SHOP, body: rawBody, secret });
    expect(await verifyShopifyWebhook({ rawBody, headers, secret })).toEqual({ ok: false, reason: 'invalid_hmac' });
  });

  it('refuses an empty body as unauthenticated', async () => {
    const secret = randomSecret();
    const headers = shopifyWebhookHeaders({ topic: 'orders/create', shopDomain: SHOP, body: '', secret });
    expect(await verifyShopifyWebhook({ rawBody: Buffer.alloc(0), headers, secret })).toEqual({ ok: false, reason: 'invalid_hmac' });
  });

  it('lists every missing header when the HMAC header is absent, with 400', async () => {
    const { rawBody, secret } = delivery();
    const result = await verifyShopifyWebhook({ rawBody, headers: { 'content-type': 'application/json', 'x-shopify-topic': 'orders/create' }, secret });
    expect(result).toEqual({
      ok: false,
      reason: 'missing_headers',
      missing: ['X-Shopify-Hmac-Sha256', 'X-Shopify-Shop-Domain', 'X-Shopify-API-Version', 'X-Shopify-Webhook-Id'],
    });
    expect(VERIFICATION_FAILURE_STATUS[result.ok ? 'invalid_hmac' : result.reason]).toBe(400);
  });

  it('reports the headers a correctly signed delivery lacks', async () => {
    const { rawBody, headers, secret } = delivery();
    const { 'X-Shopify-Topic': _topic, 'X-Shopify-Webhook-Id': _id, ...rest } = headers;
    const result = await verifyShopifyWebhook({ rawBody, headers: rest, secret });
    expect(result).toEqual({ ok: false, reason: 'missing_headers', missing: ['X-Shopify-Topic', 'X-Shopify-Webhook-Id'] });
  });

  it('does not reveal missing headers to a sender who cannot sign: a wrong HMAC is reported first', async () => {
    const { rawBody, headers } = delivery();
    const { 'X-Shopify-Topic': _topic, ...rest } = headers;
    expect(await verifyShopifyWebhook({ rawBody, headers: rest, secret: randomSecret() })).toEqual({ ok: false, reason: 'invalid_hmac' });
  });

  it('accepts an older delivery without X-Shopify-Event-Id or X-Shopify-Triggered-At', async () => {
    const { rawBody, headers, secret } = delivery();
    const { 'X-Shopify-Event-Id': _e, 'X-Shopify-Triggered-At': _t, ...rest } = headers;
    const result = await verifyShopifyWebhook({ rawBody, headers: rest, secret });
    expect(result.ok).toBe(true);
    expect(result).not.toHaveProperty('eventId');
    expect(result).not.toHaveProperty('triggeredAt');
  });

  it('accepts the newer unprefixed shopify-* headers, with or without an event id', async () => {
    const secret = randomSecret();
    const rawBody = Buffer.from(JSON.stringify(shopifyOrderPayload()));
    const base = {
      'shopify-hmac-sha256': signShopify(rawBody, secret),
      'shopify-topic': 'orders/create',
      'shopify-shop-domain': SHOP,
      'shopify-api-version': '2026-10',
      'shopify-webhook-id': 'w-1',
    };
    expect(await verifyShopifyWebhook({ rawBody, headers: { ...base, 'shopify-event-id': 'e-1' }, secret }))
      .toMatchObject({ ok: true, topic: 'orders/create', shopDomain: SHOP, webhookId: 'w-1', eventId: 'e-1' });
    // @shopify/shopify-api 15 no longer requires the event id; de-duplication then falls back to the webhook id.
    expect(await verifyShopifyWebhook({ rawBody, headers: base, secret }))
      .toMatchObject({ ok: true, webhookId: 'w-1' });
  });
});
